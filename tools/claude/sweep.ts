import { SessionError } from '../errors.js';
import { applyFinalize } from '../policy/lifecycle.js';
import type { SessionRecord } from '../record.js';
import type { Sessions } from '../sessions.js';
import type { ClaudeIndex } from '../store/claude-index.js';
import { writeSweepReport } from '../store/sweep-stamp.js';
import { parseTimestamp } from '../time.js';
import { cleanup as cleanupStore, type CleanupReport } from '../trees/cleanup.js';
import type { HookRun } from './runtime.js';

export interface SweepReport {
  abandoned: string[];
  cleanup: CleanupReport;
  pruned_indexes: string[];
}

/**
 * A session still running long after its last change lost its agent: a killed background agent
 * never sends SubagentStop. Only sessions the hooks created (with a `claude` object) are judged.
 */
export function isAbandoned(record: SessionRecord, now: number, staleMs: number): boolean {
  if (staleMs <= 0 || !record.claude) return false;
  if (record.phase !== 'executing' && record.phase !== 'initializing') return false;
  const at = parseTimestamp(record.last_updated);
  return at !== undefined && now - at > staleMs;
}

/** The periodic tidy-up that subagent_stop runs detached: abandon stale sessions, then cleanup. */
export async function sweep(sessions: Sessions, index: ClaudeIndex): Promise<SweepReport> {
  const now = sessions.now();
  const staleMs = sessions.settings.abandonAfterHours * 3_600_000;
  const abandoned: string[] = [];
  for (const record of sessions.store.scan().records) {
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
  const cleanup = await cleanupStore(sessions);
  const pruned = await index.prune(now, sessions.settings.cleanupHours * 3_600_000);
  return { abandoned, cleanup, pruned_indexes: pruned };
}

/** The sweep of the store the hook run opens, its report left in the store. */
export async function runSweep(run: HookRun): Promise<SweepReport> {
  const { sessions, index } = run.context();
  const report = await sweep(sessions, index);
  await writeSweepReport(sessions.store.dir, { finished_at: new Date(sessions.now()).toISOString(), ...report });
  return report;
}
