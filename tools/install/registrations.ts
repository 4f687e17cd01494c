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

// Ours: a command running one of our built hook files (wherever the package lives) or our bin names.
const OURS = /(?:[\\/]hooks[\\/](pre_delegate|subagent_stop)\.js|(?:^|[\s/\\])agent-session-(pre-delegate|subagent-stop))(?=$|[\s"';&|)])/;

/** Which of our hooks a settings entry runs, or undefined when the entry is not ours. */
export function ourHook(entry: unknown): HookName | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const { type, command } = entry as Record<string, unknown>;
  if (type !== 'command' || typeof command !== 'string') return undefined;
  const match = OURS.exec(command);
  if (!match) return undefined;
  return match[1] ? (match[1] as HookName) : (match[2]!.replace('-', '_') as HookName);
}

/** `node <file>`, the file quoted for the shell only when it needs it. */
export function nodeCommand(file: string): string {
  return `node ${/^[\w@%+=:,./\\-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`}`;
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
