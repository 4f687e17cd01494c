import type { SessionContext } from '../session-context.js';

/** One group of figures of `agent-session stats --json` (the fields the dashboard's cards show). */
export interface StatsGroup {
  sessions: { started: number; running: number; paused: number; completed: number; failed: number; abandoned: number };
  rates: { success: number | null; failure: number | null; abandonment: number | null };
  resumes: { paused: number; same_agent: number; new_agent: number; expired: number; rate: number | null };
  durations_ms: {
    to_finish: { median: number | null; p90: number | null } | null;
    phases: Record<string, { median: number | null; p90: number | null }>;
  } | null;
  tokens: { input: number; output: number; cache_read: number; cache_write: number };
  errors: number;
}

/** What `computeStats` returns (the stats contract); the dashboard reads only these fields. */
export interface StatsReport {
  version: 1;
  period: { since: string | null; until: string };
  by?: string;
  totals: StatsGroup;
  groups: Array<{ key: string } & StatsGroup>;
  trash: { entries: number; bytes: number };
}

/**
 * The figures of the stats cards since `since`, or null while this build has no stats (the page then
 * says "stats: not available"). The one place the dashboard gets them: point it at `computeStats`.
 */
export async function loadStats(_context: SessionContext, _since: Date): Promise<StatsReport | null> {
  return null;
}

/** One session's tokens, or null while this build has no transcript reader (the detail then leaves them out). */
export async function loadSessionTokens(_context: SessionContext, _id: string): Promise<StatsGroup['tokens'] | null> {
  return null;
}
