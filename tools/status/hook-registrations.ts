// Where our hooks are registered (the project's settings, its local settings, the user's, a plugin)
// and whether each registered command names a script that exists. Pure: the files come in read.
import { isAbsolute, resolve } from 'node:path';
import { isPlainObject } from '../merge-patch.js';
import { hookScriptOf, type HookName } from '../install/registrations.js';

export type HookPlace = 'project' | 'local' | 'user' | 'plugin';

/**
 * `ok`: the script exists; `inactive`: it is missing and the command checks first (the hook does
 * nothing); `broken`: it is missing and Claude Code reports an error at every event; `unchecked`:
 * a bin found on PATH, or a variable `status` cannot resolve; `unmatched`: its group's matcher does
 * not match the tool `Agent`, so Claude Code never runs it.
 */
export type ScriptState = 'ok' | 'inactive' | 'broken' | 'unchecked' | 'unmatched';

/** The events whose groups Claude Code picks by the tool's name: ours must match `Agent`. */
const TOOL_EVENTS = new Set(['PreToolUse', 'PostToolUse']);

export interface Registration {
  place: HookPlace;
  /** The settings file, or the plugin's hooks/hooks.json. */
  file: string;
  /** The plugin (`agent-session@<marketplace>`) for place `plugin`. */
  plugin?: string;
  event: string;
  hook: HookName;
  command: string;
  /** The script with its variables resolved (null: a bin name, or a variable left unresolved). */
  script: string | null;
  state: ScriptState;
}

/** One place's `hooks` table, with what its commands' variables stand for there. */
export interface HookTable {
  place: HookPlace;
  file: string;
  plugin?: string;
  hooks: unknown;
  /** `CLAUDE_PROJECT_DIR`, `CLAUDE_PLUGIN_ROOT`, `HOME` and the rest of the environment. */
  vars: Record<string, string | undefined>;
  /** Relative script paths are taken from here (Claude Code runs hooks in the project). */
  cwd: string;
}

/** Our entries in one table, each with its script's state (`exists` checks a resolved path). */
export function findRegistrations(table: HookTable, exists: (file: string) => boolean): Registration[] {
  if (!isPlainObject(table.hooks)) return [];
  const found: Registration[] = [];
  for (const [event, groups] of Object.entries(table.hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      const entries = isPlainObject(group) && Array.isArray(group.hooks) ? group.hooks : [];
      const runs = !TOOL_EVENTS.has(event) || matchesAgent(isPlainObject(group) ? group.matcher : undefined);
      for (const entry of entries) {
        const ours = hookScriptOf(entry, event);
        if (!ours) continue;
        const script = ours.script === null ? null : resolveScript(ours.script, table.vars, table.cwd);
        const state: ScriptState = !runs
          ? 'unmatched'
          : script === null
            ? 'unchecked'
            : exists(script)
              ? 'ok'
              : ours.guarded
                ? 'inactive'
                : 'broken';
        const plugin = table.plugin === undefined ? {} : { plugin: table.plugin };
        const command = (entry as { command: string }).command;
        found.push({ place: table.place, file: table.file, ...plugin, event, hook: ours.hook, command, script, state });
      }
    }
  }
  return found;
}

/**
 * Whether Claude Code would pick a group with this matcher for the tool `Agent`: no matcher, `""` or
 * `*` match every tool; otherwise it is a regular expression (`Agent|Task` a list) matched against
 * the whole name, and one that does not compile is taken literally.
 */
export function matchesAgent(matcher: unknown): boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return true;
  if (typeof matcher !== 'string') return false;
  try {
    return new RegExp(`^(?:${matcher})$`).test('Agent');
  } catch {
    return matcher === 'Agent';
  }
}

/** `$NAME`, `${NAME}` and a leading `~/` replaced as the shell would; null when a variable is unset. */
function resolveScript(script: string, vars: Record<string, string | undefined>, cwd: string): string | null {
  let unresolved = false;
  let path = script.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string | undefined, bare: string | undefined) => {
    const value = vars[(braced ?? bare)!];
    if (value === undefined || value === '') unresolved = true;
    return value ?? '';
  });
  if (unresolved) return null;
  if (path.startsWith('~/') && vars.HOME) path = `${vars.HOME}${path.slice(1)}`;
  return isAbsolute(path) ? path : resolve(cwd, path);
}
