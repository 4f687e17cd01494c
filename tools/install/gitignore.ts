/** The store's default place, as a .gitignore pattern (any depth, directories only). */
export const STORE_PATTERN = '.claude/session/';

// Lines that already keep the store out of git.
const COVERING = new Set(['.claude/session/', '.claude/session', '/.claude/session/', '/.claude/session', '.claude/', '.claude', '/.claude/', '/.claude']);

/** The .gitignore text with the store ignored (undefined: no file yet); unchanged when it already is. */
export function planGitignore(old: string | undefined): { text: string; changed: boolean } {
  const text = old ?? '';
  if (text.split(/\r?\n/).some((line) => COVERING.has(line.trim()))) return { text, changed: false };
  const separator = text === '' || text.endsWith('\n') ? '' : '\n';
  return { text: `${text}${separator}${STORE_PATTERN}\n`, changed: true };
}
