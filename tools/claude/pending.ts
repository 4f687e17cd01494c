import type { ClaudeIndexData, SpawnEntry } from '../store/claude-index.js';
import { parseTimestamp } from '../time.js';

/**
 * How long a spawn waits for its agent before it is taken for refused (the user said no at the
 * permission prompt; Claude Code then sends no event at all). An agent starts within seconds of
 * its spawn being allowed; a permission prompt may take longer, which PostToolUse's exact join covers.
 */
export const SPAWN_PENDING_MS = 10 * 60_000;

/** Spawns of this conversation still waiting for their agent, not older than SPAWN_PENDING_MS. */
export function pendingSpawns(data: ClaudeIndexData, now: number): [string, SpawnEntry][] {
  return Object.entries(data.spawns).filter(([, s]) => !s.agent_id && now - (parseTimestamp(s.at) ?? 0) <= SPAWN_PENDING_MS);
}
