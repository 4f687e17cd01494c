/** The two hook executables, named after their files (dist/hooks/<name>.js). */
export const HOOK_NAMES = ['pre_delegate', 'subagent_stop'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export interface HookRegistration {
  event: string;
  /** Absent for events that take no tool matcher. */
  matcher?: string;
  hook: HookName;
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
 * events, a command that runs a built hook with Node (`node <anywhere>/dist/hooks/<hook>.js`, quoted
 * or not, also inside the repository's `test ! -f … || node …`) or runs one of our bin names
 * (`agent-session-pre-delegate`, also through `npx [-y]`). A command that merely mentions such a path
 * (a linter given the file, the user's own `.claude/hooks/pre_delegate.js`) is not ours.
 */
export function ourHook(entry: unknown, event?: string): HookName | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  if (event !== undefined && !OUR_EVENTS.has(event)) return undefined;
  const { type, command } = entry as Record<string, unknown>;
  if (type !== 'command' || typeof command !== 'string') return undefined;
  const words = shellWords(command);
  for (let i = 1; i < words.length; i++) {
    const file = /(?:^|[\\/])dist[\\/]hooks[\\/](pre_delegate|subagent_stop)\.js$/.exec(words[i]!);
    if (file && /(?:^|[\\/])node(?:\.exe)?$/i.test(words[i - 1]!)) return file[1] as HookName;
  }
  // Our bin names, as the command itself: after any VAR=value words, optionally through npx.
  const start = words.findIndex((word) => !/^\w+=/.test(word));
  const rest = start < 0 ? [] : words.slice(start);
  if (rest[0] === 'npx') rest.splice(0, rest[1] === '-y' || rest[1] === '--yes' ? 2 : 1);
  const bin = /(?:^|[\\/])agent-session-(pre-delegate|subagent-stop)$/.exec(rest[0] ?? '');
  return bin ? (bin[1]!.replace('-', '_') as HookName) : undefined;
}

/** A command's words as the shell would see them, quotes and escapes removed (variables left as text). */
function shellWords(command: string): string[] {
  const words: string[] = [];
  const WORD = /(?:[^\s'"\\]+|\\.?|'[^']*'?|"(?:[^"\\]|\\.)*"?)+/gs;
  for (const [word] of command.matchAll(WORD)) {
    words.push(word.replace(/\\(.)|'([^']*)'?|"((?:[^"\\]|\\.)*)"?/gs, (_, escaped, single, double) => escaped ?? single ?? double.replace(/\\(["\\$`])/g, '$1')));
  }
  return words;
}

/** `node <file>`, the file quoted for the shell only when it needs it. */
export function nodeCommand(file: string): string {
  return `node ${/^[\w@%+=:,./-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`}`;
}

/** The plugin's command: Claude Code expands `${CLAUDE_PLUGIN_ROOT}` to the installed plugin's directory. */
export function pluginCommand(hook: HookName): string {
  return `node "\${CLAUDE_PLUGIN_ROOT}/dist/hooks/${hook}.js"`;
}

/** The repository's own command: relative to the project, and a no-op until dist/ is built. */
export function projectCommand(hook: HookName): string {
  const file = `"$CLAUDE_PROJECT_DIR/dist/hooks/${hook}.js"`;
  return `test ! -f ${file} || node ${file}`;
}
