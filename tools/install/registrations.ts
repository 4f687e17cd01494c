/** The two hook executables, named after their files (dist/hooks/<name>.js). */
export const HOOK_NAMES = ['pre_delegate', 'subagent_stop'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export interface HookRegistration {
  event: string;
  /** Absent for events that take no tool matcher. */
  matcher?: string;
  hook: HookName;
  /** Without it the others still work (a settings file from an earlier install): status warns, not fails. */
  optional?: true;
}

/**
 * Which Claude Code events run which hook: the one list behind `agent-session install`, the
 * plugin's hooks/hooks.json and the repository's own .claude/settings.json (tests compare them).
 */
export const HOOK_REGISTRATIONS: readonly HookRegistration[] = [
  { event: 'PreToolUse', matcher: 'Agent|Task', hook: 'pre_delegate' },
  { event: 'PostToolUse', matcher: 'Agent|Task', hook: 'subagent_stop' },
  { event: 'SubagentStart', hook: 'subagent_stop' },
  { event: 'SubagentStop', hook: 'subagent_stop' },
  // Tells a starting conversation about paused sessions (tools/claude/events/session-start.ts).
  { event: 'SessionStart', hook: 'subagent_stop', optional: true },
];

/**
 * Seconds Claude Code lets a hook run. Above the default lock timeout (10 s), so a hook stuck on a
 * lock gives up, logs and fails open by itself before Claude Code kills it.
 */
export const HOOK_TIMEOUT_SECONDS = 15;

export interface CommandHook {
  type: 'command';
  command: string;
  timeout: number;
}

/** The events our registrations use: an entry under any other event is never ours. */
const OUR_EVENTS = new Set(HOOK_REGISTRATIONS.map((r) => r.event));

/**
 * Which of our hooks a settings entry runs, or undefined when the entry is not ours: under one of our
 * events, a command that runs a built hook with Node (`node [options] <anywhere>/dist/hooks/<hook>.js`,
 * quoted or not, Windows paths with unquoted backslashes included, also behind wrappers such as `env`
 * or `timeout 5`, and as one command of a list such as the repository's `test ! -f … || node …`) or
 * runs one of our bin names (`agent-session-pre-delegate`, also through `npx [-y]`). A command that
 * merely mentions such a path (a linter given the file, `echo node …`, a comment, the user's own
 * `.claude/hooks/pre_delegate.js`) is not ours.
 */
export function ourHook(entry: unknown, event?: string): HookName | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  if (event !== undefined && !OUR_EVENTS.has(event)) return undefined;
  const { type, command } = entry as Record<string, unknown>;
  if (type !== 'command' || typeof command !== 'string') return undefined;
  for (const words of simpleCommands(command)) {
    const hook = hookRunBy(words);
    if (hook) return hook;
  }
  return undefined;
}

/** A word as the shell sees it (`cooked`) and with only its quotes removed (`raw`, backslashes kept). */
interface Word {
  cooked: string;
  raw: string;
}

const BUILT_HOOK = /(?:^|[\\/])dist[\\/]hooks[\\/](pre_delegate|subagent_stop)\.js$/;
const NODE = /(?:^|[\\/])node(?:\.exe)?$/i;
const BIN = /(?:^|[\\/])agent-session-(pre-delegate|subagent-stop)$/;
/** Words that may come before the command itself: reserved words, and wrappers that run it. */
const PREFIXES = new Set([
  '!',
  '{',
  'if',
  'then',
  'else',
  'elif',
  'do',
  'while',
  'until',
  'env',
  'exec',
  'command',
  'time',
  'nohup',
  'nice',
  'timeout',
]);
/** Options of those wrappers whose value is the next word (`env -u NAME`, `nice -n 5`, `timeout -s KILL`). */
const PREFIX_OPTION_WITH_VALUE = new Set(['-u', '-n', '-s', '-k', '-C', '-S']);
/** Node options whose value is the next word (any other option stands alone, or uses `=`). */
const NODE_OPTION_WITH_VALUE = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '--env-file',
  '--env-file-if-exists',
  '--title',
  '--watch-path',
  '-C',
  '--conditions',
  '--input-type',
  '--redirect-warnings',
  '--disable-warning',
  '--unhandled-rejections',
  '--inspect-port',
  '--debug-port',
]);
/** Node options after which Node runs something other than a script file. */
const NODE_NOT_A_SCRIPT = new Set([
  '-e',
  '--eval',
  '-p',
  '--print',
  '-c',
  '--check',
  '--test',
  '--run',
  '-i',
  '--interactive',
  '-v',
  '--version',
  '-h',
  '--help',
]);

/**
 * The hook one simple command runs: `[VAR=value…] [wrappers] node [options] <built hook>`, or one of
 * our bin names (also through `npx [-y]`).
 */
function hookRunBy(words: Word[]): HookName | undefined {
  const [first, ...args] = words.slice(commandStart(words));
  if (!first) return undefined;
  if (NODE.test(first.cooked) || NODE.test(first.raw)) {
    let a = 0;
    for (; a < args.length && args[a]!.cooked.startsWith('-'); a++) {
      if (NODE_NOT_A_SCRIPT.has(args[a]!.cooked)) return undefined;
      if (NODE_OPTION_WITH_VALUE.has(args[a]!.cooked)) a++;
    }
    const script = args[a];
    const file = script && (BUILT_HOOK.exec(script.cooked) ?? BUILT_HOOK.exec(script.raw));
    return file ? (file[1] as HookName) : undefined;
  }
  const rest =
    first.cooked === 'npx'
      ? args.slice(args[0]?.cooked === '-y' || args[0]?.cooked === '--yes' ? 1 : 0)
      : [first, ...args];
  const bin = BIN.exec(rest[0]?.cooked ?? '');
  return bin ? (bin[1]!.replace('-', '_') as HookName) : undefined;
}

/** Where the command itself starts: after `VAR=value` words, reserved words and wrappers with their options. */
function commandStart(words: Word[]): number {
  let i = 0;
  let wrapper: string | undefined;
  while (i < words.length) {
    const w = words[i]!.cooked;
    if (PREFIXES.has(w)) {
      wrapper = w;
      i++;
    } else if (wrapper === 'command' && /^-[vV]$/.test(w))
      return words.length; // a lookup: runs nothing
    else if (/^\w+=/.test(w)) i++;
    else if (wrapper !== undefined && w.startsWith('-')) i += PREFIX_OPTION_WITH_VALUE.has(w) ? 2 : 1;
    else if (wrapper === 'timeout' && /^\d/.test(w)) {
      wrapper = undefined;
      i++;
    } else break;
  }
  return i;
}

/**
 * A command's simple commands as the shell would split them: at unquoted `;`, `&`, `|`, `&&`, `||`,
 * parentheses and newlines, without comments, up to a here-document. Variables are left as text.
 */
function simpleCommands(command: string): Word[][] {
  const commands: Word[][] = [[]];
  // Blanks, and a backslash before a line break (the line goes on); a comment runs to the end of its line.
  const TOKEN =
    /(?:[^\S\n]|\\\r?\n)+|(#[^\n]*)|([;&|()\n])|((?:[^\s'"\\;&|()]|\\[^\n]?|'[^']*'?|"(?:[^"\\]|\\[^])*"?)+)/g;
  for (const [, comment, operator, word] of command.matchAll(TOKEN)) {
    if (comment !== undefined) continue;
    if (operator !== undefined) commands.push([]);
    else if (word !== undefined) {
      // A here-document: what follows is its text, not commands (an entry of ours after one is missed).
      if (/^[^'"]*<</.test(word)) break;
      commands[commands.length - 1]!.push({
        cooked: cook(word),
        raw: word.replace(/'([^']*)'?|"((?:[^"\\]|\\[^])*)"?/g, '$1$2'),
      });
    }
  }
  return commands.filter((words) => words.length > 0);
}

/** Quotes and escapes removed, as the shell does. */
function cook(word: string): string {
  return word.replace(
    /\\([^]?)|'([^']*)'?|"((?:[^"\\]|\\[^])*)"?/g,
    (_, escaped, single, double) => escaped ?? single ?? double.replace(/\\(["\\$`])/g, '$1'),
  );
}

/**
 * `test ! -f <file> || node <file>`, the file quoted for the shell only when it needs it: a quiet
 * no-op (exit 0, no output) once the file is gone, where `node <missing file>` fails with "Cannot find
 * module" on every event (checked with the real CLI).
 */
export function guardedCommand(file: string): string {
  const word = shellWord(file);
  return `test ! -f ${word} || node ${word}`;
}

/**
 * The command of a project that depends on the package: its own node_modules, found on every clone
 * (`statusline`: the status line's command, dist/hooks/statusline.js).
 */
export function dependencyCommand(hook: HookName | 'statusline'): string {
  const file = `"$CLAUDE_PROJECT_DIR/node_modules/agent-session/dist/hooks/${hook}.js"`;
  return `test ! -f ${file} || node ${file}`;
}

/** A path as one shell word: as it is when nothing in it needs quoting, else single-quoted. */
function shellWord(file: string): string {
  return /^[\w@%+=:,./-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`;
}

/**
 * The plugin's command: Claude Code expands `${CLAUDE_PLUGIN_ROOT}` to the installed plugin's directory.
 * A plugin installed from an unbuilt checkout has no dist/: the guard makes each hook a quiet no-op then.
 */
export function pluginCommand(hook: HookName): string {
  const file = `"\${CLAUDE_PLUGIN_ROOT}/dist/hooks/${hook}.js"`;
  return `test ! -f ${file} || node ${file}`;
}

/** The repository's own command: relative to the project, and a no-op until dist/ is built. */
export function projectCommand(hook: HookName): string {
  const file = `"$CLAUDE_PROJECT_DIR/dist/hooks/${hook}.js"`;
  return `test ! -f ${file} || node ${file}`;
}

/**
 * For `status`: which of our hooks an entry runs (as `ourHook`), the script file its command names
 * (shell quoting removed, variables such as `$CLAUDE_PROJECT_DIR` left as text; null for a bin name,
 * found on PATH), and whether the command first checks the file exists (`test ! -f <file> || …`),
 * which makes a missing file a silent no-op instead of an error on every delegation.
 */
export function hookScriptOf(
  entry: unknown,
  event?: string,
): { hook: HookName; script: string | null; guarded: boolean } | undefined {
  const hook = ourHook(entry, event);
  if (!hook) return undefined;
  const commands = simpleCommands((entry as { command: string }).command);
  const runs = commands.find((words) => hookRunBy(words) === hook)!;
  const word = runs.find((w) => BUILT_HOOK.test(w.cooked) || BUILT_HOOK.test(w.raw));
  const script = word ? (BUILT_HOOK.test(word.cooked) ? word.cooked : word.raw) : null;
  const guarded = script !== null && commands.some((words) => testsFile(words, script));
  return { hook, script, guarded };
}

/** `test [!] -f <file>` or `[ [!] -f <file> ]` (also `-e`). */
function testsFile(words: Word[], file: string): boolean {
  let w = words.map((word) => word.cooked).filter((word) => word !== '!');
  if (w[0] === '[' && w[w.length - 1] === ']') w = ['test', ...w.slice(1, -1)];
  return w.length === 3 && w[0] === 'test' && (w[1] === '-f' || w[1] === '-e') && w[2] === file;
}
