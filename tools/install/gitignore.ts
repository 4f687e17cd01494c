/** The store's default place, as a .gitignore pattern (any depth, directories only). */
const STORE_PATTERN = '.claude/session/';

// Lines that already keep the store out of git: the store itself, or all of .claude/.
const COVERING = new Set(
  [
    '.claude/session',
    '.claude/session/',
    '.claude/session/*',
    '.claude/session/**',
    '.claude',
    '.claude/',
    '.claude/*',
    '.claude/**',
  ].flatMap((line) => [line, `/${line}`, `**/${line}`]),
);

/** The .gitignore text with the store ignored (undefined: no file yet); unchanged when it already is. */
export function planGitignore(old: string | undefined): { text: string; changed: boolean } {
  const text = old ?? '';
  if (text.split(/\r?\n/).some((line) => COVERING.has(line.trim()))) return { text, changed: false };
  // In the file's own line ending.
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const separator = text === '' || text.endsWith('\n') ? '' : eol;
  return { text: `${text}${separator}${STORE_PATTERN}${eol}`, changed: true };
}
