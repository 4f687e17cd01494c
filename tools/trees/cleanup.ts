import { storeExists } from '../store/project.js';
import { SessionError } from '../errors.js';
import { throwIfInterrupted } from '../safe-points.js';
import { judgeSession, planCleanup, type CleanupRules } from '../policy/cleanup-plan.js';
import type { TreeNode } from '../policy/tree-guard.js';
import type { SessionRecord } from '../record.js';
import type { SessionContext } from '../session-context.js';
import { census } from '../store/census.js';
import { withAreaLock } from '../store/subtree-locks.js';
import { Trash } from '../store/trash.js';
import { abandon, describe, expireTrash, quarantine, removeStrays, type CleanupReport } from './cleanup-steps.js';
import { reconcileIndex, type ExtraLinks } from './hierarchy.js';
import { recoverTrash } from './recover.js';
import { removeSubtree, type Removal } from './remove-subtree.js';

export type { CleanupReport } from './cleanup-steps.js';

export interface CleanupOptions {
  /** Age cutoff in hours (default: the cleanup_hours setting, 24). */
  olderThanHours?: number;
  dryRun?: boolean;
  /** Move purged subtrees to the trash (default); false destroys them. */
  backup?: boolean;
  /** Called as the work advances (the CLI draws a progress bar from it). */
  onProgress?: (progress: { done: number; total: number; scanned: number }) => void;
  /**
   * Aborting it stops the cleanup between two steps (EINTERRUPTED, details {done, total}); what was done
   * stays done, and audited.
   */
  signal?: AbortSignal;
}

/** Longer than the lock staleness (2 s) so the lock of a killed cleanup is taken over. */
const CLEANUP_LOCK_WAIT_MS = 5000;

/** Scan, then purge: see SESSION_README.md, "Cleanup". One cleanup at a time per store (ELOCKED otherwise). */
export async function cleanup(sessions: SessionContext, options: CleanupOptions = {}): Promise<CleanupReport> {
  const hours = options.olderThanHours ?? sessions.settings.cleanupHours;
  if (typeof hours !== 'number' || !Number.isFinite(hours) || hours < 0) {
    throw new SessionError('EINVALID', `hours must be a number >= 0, got ${JSON.stringify(hours)}`);
  }
  if (options.dryRun) return run(sessions, hours, options);
  // No store, nothing to clean: a dry run's report, without making the store for the cleanup lock.
  if (!storeExists(sessions.store.dir))
    return { ...(await run(sessions, hours, { ...options, dryRun: true })), dry_run: false };
  const what = 'cleanup (another cleanup is running on this store)';
  return withAreaLock(sessions.store.dir, 'cleanup', CLEANUP_LOCK_WAIT_MS, what, () => run(sessions, hours, options));
}

async function run(sessions: SessionContext, hours: number, options: CleanupOptions): Promise<CleanupReport> {
  const dry = Boolean(options.dryRun);
  const now = sessions.now();
  const rules = cleanupRules(sessions, hours);
  const recovered = await recoverTrash(sessions, { dryRun: dry });
  const found = census(sessions.store.dir, sessions.store.ids());
  const { records, problems } = found;
  // Corrupt records are moved aside before the purges; any other problem stays and is skipped.
  const unreadable = problems.map((p) => ({
    id: p.id,
    parent: p.parent,
    stays: p.code === 'ECORRUPT' ? undefined : `${p.code}: ${p.message}`,
  }));
  const plan = planCleanup(records, unreadable, now, rules);
  const report: CleanupReport = {
    dry_run: dry,
    cutoff: new Date(now - rules.cutoffMs).toISOString(),
    scanned: records.length + problems.length,
    purged: [],
    removed: [],
    abandoned: [],
    quarantined: [],
    skipped: [...plan.skipped],
    orphans: plan.orphans,
    kept: plan.kept,
    expired_trash: [],
    swept: [],
    recovered,
    backups: [],
    bytes_freed: 0,
    bytes_to_trash: 0,
  };
  const total = plan.abandon.length + problems.length + plan.purge.length;
  let done = 0;
  const tick = () => {
    done++;
    options.onProgress?.({ done, total, scanned: report.scanned });
  };
  const stopHere = () => throwIfInterrupted(options.signal, done, total);
  for (const item of plan.abandon) {
    stopHere();
    await abandon(sessions, item.id, rules, dry, report);
    tick();
  }
  for (const problem of problems) {
    stopHere();
    await quarantine(sessions, problem, dry, report);
    tick();
  }
  const links = dry ? undefined : withRecordLinks(await reconcileIndex(sessions, true), records);
  const trash = new Trash(sessions.store.dir);
  for (const root of plan.purge) {
    stopHere();
    await purge(sessions, root, rules, dry, options.backup ?? true, links, report, found.bytes);
    tick();
  }
  await expireTrash(sessions, trash, dry, report, stopHere);
  stopHere();
  await removeStrays(sessions, dry, report);
  report.removed = report.purged.map((p) => p.id);
  if (!dry && (report.purged.length > 0 || report.expired_trash.length > 0 || report.swept.length > 0)) {
    // The summary names no sessions: each purge and expiry wrote its own entry as it took effect.
    await sessions.audit('cleanup', [], {
      cutoff: report.cutoff,
      purged: report.purged.length,
      backups: report.backups,
      expired_trash: report.expired_trash.map((e) => e.entry),
      swept: report.swept.length,
      bytes_freed: report.bytes_freed,
    });
  }
  return report;
}

/**
 * The links a purge follows besides the index: every parent link the records name, so that a
 * parent edited by hand (which the index does not follow) is seen as the plan saw it. A purge
 * still checks each child's record names its parent.
 */
function withRecordLinks(extra: ExtraLinks, records: SessionRecord[]): ExtraLinks {
  const links: ExtraLinks = new Map([...extra].map(([parent, ids]) => [parent, [...ids]]));
  for (const r of records) {
    const parent = r.parent_session_id;
    if (parent) links.get(parent)?.push(r.agent_id) ?? links.set(parent, [r.agent_id]);
  }
  return links;
}

function cleanupRules(sessions: SessionContext, hours: number): CleanupRules {
  const cutoffMs = hours * 3_600_000;
  const runningMs = sessions.settings.runningMinutes * 60_000;
  return {
    cutoffMs,
    runningMs,
    resumeWindowMs: sessions.rules.resumeWindowMs,
    ...(sessions.rules.phaseWindowsMs ? { phaseWindowsMs: sessions.rules.phaseWindowsMs } : {}),
    stuckMs: Math.max(cutoffMs * sessions.settings.stuckFactor, runningMs),
    clockSkewMs: sessions.rules.clockSkewMs,
  };
}

async function purge(
  sessions: SessionContext,
  root: { id: string; reason: string; ids: string[]; depths: number[] },
  rules: CleanupRules,
  dry: boolean,
  backup: boolean,
  links: Awaited<ReturnType<typeof reconcileIndex>> | undefined,
  report: CleanupReport,
  sizes: Map<string, number>,
): Promise<void> {
  if (dry) {
    root.ids.forEach((id, i) =>
      report.purged.push({
        id,
        root: root.id,
        depth: root.depths[i] ?? 0,
        reason: i === 0 ? root.reason : `with ${root.id}`,
      }),
    );
    // Counted where the real run counts them: moved to the trash, or freed at once with --no-backup.
    for (const id of root.ids) {
      if (backup) report.bytes_to_trash += sizes.get(id) ?? 0;
      else report.bytes_freed += sizes.get(id) ?? 0;
    }
    return;
  }
  const accept = (nodes: TreeNode[]) => {
    for (const node of nodes) {
      if (!node.record) return `kept: ${node.id} is unreadable`;
      const verdict = judgeSession(node.record, sessions.now(), rules);
      if (verdict.kind !== 'purge') return `changed since the scan: ${node.id} ${verdict.reason}`;
    }
    return null;
  };
  // Audited as the purge commits (under the locks, before the entry is complete), not at the end of the run.
  const onMoved = (moved: Removal) =>
    sessions.audit(
      'cleanup',
      moved.nodes.map((n) => n.id),
      { root: root.id, reason: root.reason, backup: moved.entry, bytes: moved.bytes },
    );
  try {
    const removal = await removeSubtree(sessions, root.id, {
      reason: 'cleanup',
      cascade: true,
      force: false,
      discardWork: false,
      backup,
      preserveWork: false,
      checkWork: false,
      links,
      accept,
      onMoved,
    });
    for (const node of removal.nodes)
      report.purged.push({
        id: node.id,
        root: root.id,
        depth: node.depth,
        reason: node.depth === 0 ? root.reason : `with ${root.id}`,
      });
    if (removal.entry) {
      report.backups.push(removal.entry);
      report.bytes_to_trash += removal.bytes;
    } else report.bytes_freed += removal.bytes;
  } catch (err) {
    report.skipped.push({ id: root.id, reason: describe(err) });
  }
}
