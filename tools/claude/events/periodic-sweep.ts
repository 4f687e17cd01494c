// The periodic sweep that subagent_stop starts (at most once per interval, detached): abandon the
// sessions whose agent was lost, run cleanup, prune old conversation indexes and the agent files of
// sessions that are gone. Only the sweep bundle loads it: the cleanup machinery stays out of the
// bundles Claude Code waits for (sweep-claim.ts).
import { SessionError } from '../../errors.js';
import { isFinalPhase, isResumablePhase } from '../../phases.js';
import { isAbandoned } from '../../policy/abandonment.js';
import { applyFinalize } from '../../policy/lifecycle.js';
import { decideResume, resumeWindowMs } from '../../policy/resume.js';
import type { SessionRecord } from '../../record.js';
import { writeSweepReport } from '../../store/sweep-stamp.js';
import { formatTimestamp, parseTimestamp } from '../../time.js';
import { cleanup, type CleanupReport } from '../../trees/cleanup.js';
import type { HookContext } from './hook-context.js';

interface SweepReport {
  abandoned: string[];
  cleanup: CleanupReport;
  pruned_indexes: string[];
  pruned_agents: string[];
  /**
   * The sessions that could resume (newest first, at most PAUSED_LISTED of them): `statusline` counts
   * them without reading them again unless their record changed after `as_of`, when the scan began.
   */
  paused: {
    as_of: string;
    total: number;
    sessions: { id: string; conversation: string | null; expires_at: string }[];
  };
}

/** Enough for a status line's count; the rest is `total`. */
export const PAUSED_LISTED = 50;

/** Sweeps, and leaves the report in the store for whoever wants to know what the last sweep did. */
export async function runSweep({ sessions, index }: HookContext): Promise<SweepReport> {
  const now = sessions.now();
  const staleMs = sessions.settings.abandonAfterHours * 3_600_000;
  const abandoned: string[] = [];
  const paused: SessionRecord[] = [];
  const asOf = formatTimestamp(sessions.now());
  for (const record of sessions.store.scan().records) {
    if (
      isResumablePhase(record.phase) &&
      !isFinalPhase(record.phase) &&
      decideResume(record, now, sessions.rules).resume
    )
      paused.push(record);
    if (!isAbandoned(record, now, staleMs)) continue;
    const id = record.agent_id;
    const summary = `no SubagentStop within ${sessions.settings.abandonAfterHours} h of the last activity`;
    try {
      // Judged again under the lock: a stop that landed since the scan keeps the session.
      const next = await sessions.store.update(id, (current) =>
        isAbandoned(current, sessions.now(), staleMs)
          ? applyFinalize(current, 'abandoned', summary, sessions.now()).record
          : current,
      );
      if (next.phase === 'abandoned') {
        abandoned.push(id);
        await sessions.audit('sweep.abandon', [id], { summary });
      }
    } catch (err) {
      if (!(err instanceof SessionError)) throw err;
    }
  }
  const cleanupReport = await cleanup(sessions);
  const pruned = await index.prune(now, sessions.settings.cleanupHours * 3_600_000);
  const prunedAgents = await index.pruneAgents(now, sessions.settings.cleanupHours * 3_600_000, (id) =>
    sessions.store.has(id),
  );
  const listed = paused
    .sort((a, b) => (a.last_updated < b.last_updated ? 1 : a.last_updated > b.last_updated ? -1 : 0))
    .slice(0, PAUSED_LISTED)
    .map((r) => ({
      id: r.agent_id,
      conversation: typeof r.claude?.session_id === 'string' ? r.claude.session_id : null,
      expires_at: formatTimestamp((parseTimestamp(r.last_updated) ?? now) + resumeWindowMs(sessions.rules, r.phase)),
    }));
  const report = {
    abandoned,
    cleanup: cleanupReport,
    pruned_indexes: pruned,
    pruned_agents: prunedAgents,
    paused: { as_of: asOf, total: paused.length, sessions: listed },
  };
  await writeSweepReport(sessions.store.dir, { finished_at: new Date(sessions.now()).toISOString(), ...report });
  return report;
}
