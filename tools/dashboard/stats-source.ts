// Where the dashboard gets the figures of `agent-session stats`: the same code, `computeStats`.
import type { SessionContext } from '../session-context.js';
import type { Group } from '../stats/groups.js';
import { computeStats, sessionTokenSums, type StatsReport } from '../stats/stats.js';

export type { StatsReport };
export type StatsGroup = Group;

/** The figures of the stats cards: the sessions started since `since`, grouped by agent type. */
export async function loadStats(context: SessionContext, since: Date): Promise<StatsReport | null> {
  return computeStats(context, { since, by: 'agent' });
}

/** One session's tokens (its agents' transcripts), or null when it has none: the detail then leaves them out. */
export async function loadSessionTokens(context: SessionContext, id: string): Promise<StatsGroup['tokens'] | null> {
  return sessionTokenSums(context, id);
}
