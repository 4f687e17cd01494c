// Spawns of a conversation (tools/store/claude-index.ts) waiting for their agent: which one a
// SubagentStart belongs to, and which sessions they hold.
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
  return Object.entries(data.spawns).filter(
    ([, s]) => !s.agent_id && now - (parseTimestamp(s.at) ?? 0) <= SPAWN_PENDING_MS,
  );
}

/**
 * When the transcript cannot tell: how much later than an earlier call's answer a delegation's hook
 * may start and still be taken for a call of the same assistant message. Calls that arrive together
 * get their hooks started a few ms apart (up to about 70 ms on a loaded machine; tests/e2e/NOTES.md);
 * a retry made after the model read an answer needs a model round trip first, which takes longer.
 */
export const PARALLEL_START_MS = 1000;

/**
 * The one spawn of this type still waiting for its agent, refused ones (waiting over 10 minutes)
 * aside; when none is that fresh, the one spawn of this type never bound at all (a permission prompt
 * answered late). None when several wait: a guess could apply the agent's events to another
 * session, while waiting for PostToolUse's exact join loses nothing.
 */
export function soleWaitingSpawn(
  data: ClaudeIndexData,
  agentType: string,
  now: number,
): [string, SpawnEntry] | undefined {
  const fresh = pendingSpawns(data, now).filter(([, s]) => s.agent_type === agentType);
  const waiting = fresh.length > 0 ? fresh : unboundSpawns(data, agentType);
  return waiting.length === 1 ? waiting[0] : undefined;
}

/** Spawns of this type never bound to an agent, however old. */
function unboundSpawns(data: ClaudeIndexData, agentType: string): [string, SpawnEntry][] {
  return Object.entries(data.spawns).filter(([, s]) => !s.agent_id && s.agent_type === agentType);
}
