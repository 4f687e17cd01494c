// The MCP server's entry in a project's `.mcp.json`, without the disk: which entry is ours, and the
// plans that add it and remove exactly it, every other server left as it was.
import { isPlainObject } from '../merge-patch.js';
import type { HookEntry, SettingsPlan } from './plan.js';

/** Our server's name in `mcpServers`: its tools are `mcp__agent-session__<tool>`. */
export const MCP_SERVER_NAME = 'agent-session';

/** The tools that change nothing, which a permission rule may let Claude call without asking. */
export const READ_ONLY_MCP_TOOLS = ['list_sessions', 'get_session', 'list_trash'] as const;

/** `permissions.allow` rules for the read-only tools. */
export function readOnlyRules(): string[] {
  return READ_ONLY_MCP_TOOLS.map((tool) => `mcp__${MCP_SERVER_NAME}__${tool}`);
}

export interface McpServerEntry {
  command: string;
  args: string[];
}

/**
 * The entry that starts the server from `file`, the built `dist/bin/agent-session-mcp.js`: `node`
 * and the file, relative when it is under the project (Claude Code starts a project's servers in the
 * project directory, and does not expand `${CLAUDE_PROJECT_DIR}` in `.mcp.json`; checked with the real CLI).
 */
export function mcpServerEntry(file: string): McpServerEntry {
  return { command: 'node', args: [file] };
}

/** Whether an `mcpServers` entry runs this package's server (whatever path or form it uses). */
export function isOurServer(entry: unknown): boolean {
  if (!isPlainObject(entry)) return false;
  const words = [entry.command, ...(Array.isArray(entry.args) ? entry.args : [])].filter(
    (w): w is string => typeof w === 'string',
  );
  return (
    words.some((w) => /(^|[/\\])agent-session-mcp(\.js)?$/.test(w)) ||
    (words.some((w) => /(^|[/\\])agent-session(\.js)?$/.test(w)) && words.includes('mcp'))
  );
}

function shown(entry: unknown): HookEntry {
  const e = isPlainObject(entry) ? entry : {};
  const args = Array.isArray(e.args) ? e.args.map(String) : [];
  return {
    event: 'mcpServers',
    matcher: MCP_SERVER_NAME,
    command: [String(e.command), ...args].join(' '),
    timeout: null,
  };
}

/**
 * Adds our server (or replaces an older form of it). An entry of that name that is not ours is
 * refused by the caller (`foreign`), never overwritten; so is an `mcpServers` that is not an object
 * (`malformed`), whose contents replacing it would lose.
 */
export function planMcpInstall(
  old: Record<string, unknown> | undefined,
  entry: McpServerEntry,
): SettingsPlan & { foreign: boolean; malformed?: boolean } {
  const settings = old ?? {};
  const unchanged = { settings, changed: false, added: [], removed: [] };
  if (settings.mcpServers !== undefined && !isPlainObject(settings.mcpServers))
    return { ...unchanged, foreign: false, malformed: true };
  const servers = isPlainObject(settings.mcpServers) ? settings.mcpServers : {};
  const current = servers[MCP_SERVER_NAME];
  if (current !== undefined && !isOurServer(current)) return { ...unchanged, foreign: true };
  if (current !== undefined && JSON.stringify(current) === JSON.stringify(entry))
    return { ...unchanged, foreign: false };
  return {
    settings: { ...settings, mcpServers: { ...servers, [MCP_SERVER_NAME]: entry } },
    changed: true,
    added: [shown(entry)],
    removed: current === undefined ? [] : [shown(current)],
    foreign: false,
  };
}

/** Removes our server only; an `mcpServers` left empty goes too (and the file, when nothing else is left). */
export function planMcpUninstall(old: Record<string, unknown> | undefined): SettingsPlan {
  const settings = old ?? {};
  const servers = isPlainObject(settings.mcpServers) ? settings.mcpServers : undefined;
  const current = servers?.[MCP_SERVER_NAME];
  if (!servers || current === undefined || !isOurServer(current))
    return { settings, changed: false, added: [], removed: [] };
  const { [MCP_SERVER_NAME]: _, ...rest } = servers;
  const { mcpServers: __, ...others } = settings;
  return {
    settings: Object.keys(rest).length > 0 ? { ...settings, mcpServers: rest } : others,
    changed: true,
    added: [],
    removed: [shown(current)],
  };
}
