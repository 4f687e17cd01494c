import { planInstall } from './plan.js';
import { HOOK_NAMES, HOOK_TIMEOUT_SECONDS, pluginCommand, projectCommand, type HookName } from './registrations.js';

function hooksWith(command: (hook: HookName) => string): Record<string, unknown> {
  const commands = Object.fromEntries(HOOK_NAMES.map((name) => [name, command(name)])) as Record<HookName, string>;
  return planInstall(undefined, commands, HOOK_TIMEOUT_SECONDS).settings.hooks as Record<string, unknown>;
}

/** What hooks/hooks.json holds: the plugin's hooks, paths under `${CLAUDE_PLUGIN_ROOT}`. */
export function pluginHooksFile(): Record<string, unknown> {
  return {
    description: 'agent-session: one durable session per Claude Code subagent, resumed instead of restarted',
    hooks: hooksWith(pluginCommand),
  };
}

/** The hooks of this repository's own .claude/settings.json: relative to the project, inert until built. */
export function repositoryHooks(): Record<string, unknown> {
  return hooksWith(projectCommand);
}
