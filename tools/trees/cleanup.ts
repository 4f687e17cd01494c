import { storeExists } from '../store/project.js';
import { isSessionError, SessionError } from '../errors.js';
import { breather, throwIfInterrupted } from '../safe-points.js';
import {
  cleanupFacts,
  judgeSession,
  planCleanup,
  type CleanupFacts,
  type CleanupRules,
} from '../policy/cleanup-plan.js';
import { planDelete, type TreeNode } from '../policy/tree-guard.js';
import type { SessionRecord } from '../record.js';
import type { SessionContext } from '../session-context.js';
import { census } from '../store/census.js';
import { withAreaLock, withSessionLocks } from '../store/subtree-locks.js';
import { Trash } from '../store/trash.js';
import {
  abandon,
  describe as describeError,
  expireTrash,
  quarantine,
  removeStrays,
  type CleanupReport,
} from './cleanup-steps.js';
import { reconcileIndex, subtreeNodes, type ExtraLinks } from './hierarchy.js';
import { recoverTrash } from './recover.js';
import { describe } from './remove-subtree.js';
import { TrashWriter, type EntryHeader, type PendingSubtree } from './trash-writer.js';
import { checkOptions, type OptionKeys } from '../options.js';

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
const CLEANUP_KEYS: OptionKeys<CleanupOptions> = {
  olderThanHours: true,
  dryRun: true,
  backup: true,
  onProgress: true,
  signal: true,
};

export async function cleanup(sessions: SessionContext, options: CleanupOptions = {}): Promise<CleanupReport> {
  checkOptions(options, CLEANUP_KEYS, 'cleanup');
  const hours = options.olderThanHours ?? sessions.settings.cleanupHours;
  if (typeof hours !== 'number' || !Number.isFinite(hours) || hours < 0) {
    throw new SessionError('EINVALID', `hours must be a number >= 0, got ${JSON.stringify(hours)}`);
  }
  if (options.dryRun) return run(sessions, hours, options);
  // No store, nothing to clean: a dry run's report, without making the store for the cleanup lock.
  if (!storeExists(sessions.store.dir))
    return { ...(await run(sessions, hours, { ...options, dryRun: true })), dry_run: false };
  const what = 'the store for cleanup';
  let locked = false;
  const locking = withAreaLock(sessions.store.dir, 'cleanup', CLEANUP_LOCK_WAIT_MS, what, () => {
    locked = true;
    return run(sessions, hours, options);
  });
  return locking.catch((err) => {
    // A wait for the lock that timed out means another cleanup; a lock that cannot be made (EACCES) says so itself.
    if (locked || !(err instanceof SessionError && err.code === 'ELOCKED' && err.details.reason === 'timeout'))
      throw err;
    throw new SessionError('ELOCKED', `another cleanup is running on this store; ${err.message}`, {
      details: err.details,
      cause: err,
    });
  });
}

async function run(sessions: SessionContext, hours: number, options: CleanupOptions): Promise<CleanupReport> {
  const dry = Boolean(options.dryRun);
  const now = sessions.now();
  const rules = cleanupRules(sessions, hours);
  const recovered = await recoverTrash(sessions, { dryRun: dry });
  const found = census(sessions.store.dir, sessions.store.ids(), cleanupFacts);
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
    trash_retention_days: sessions.settings.trashRetentionDays,
    trash_frees_at: null,
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
  const trash = new Trash(sessions.store.dir);
  const backup = options.backup ?? true;
  if (dry) {
    for (const root of plan.purge) {
      purgePreview(root, backup, report, found.bytes);
      tick();
    }
  } else {
    const links = withRecordLinks(await reconcileIndex(sessions, true), records);
    const purging = { rules, backup, links, report, tick, signal: options.signal };
    await purgeAll(sessions, trash, plan.purge, purging, () => done, total);
  }
  await expireTrash(sessions, trash, dry, report, stopHere);
  stopHere();
  await removeStrays(sessions, dry, report);
  report.removed = report.purged.map((p) => p.id);
  if (report.bytes_to_trash > 0 || report.backups.length > 0)
    report.trash_frees_at = new Date(now + sessions.settings.trashRetentionDays * 86_400_000).toISOString();
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
function withRecordLinks(extra: ExtraLinks, records: CleanupFacts[]): ExtraLinks {
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

type PurgeRoot = { id: string; reason: string; ids: string[]; depths: number[] };

function purgePreview(root: PurgeRoot, backup: boolean, report: CleanupReport, sizes: Map<string, number>): void {
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
}

interface Purging {
  rules: CleanupRules;
  backup: boolean;
  links: ExtraLinks;
  report: CleanupReport;
  tick: () => void;
  signal: AbortSignal | undefined;
}

/** The first batch is small (a kill early on loses little), and each doubles up to this many sessions. */
const FIRST_BATCH = 32;
const MAX_BATCH = 2048;

/**
 * Moves every subtree to purge into ONE trash entry, batch after batch (see trash-writer.ts): each
 * batch's locks taken at once, its records read again under them and judged again, its renames
 * synced and its audit lines written together. A subtree that changed since the scan stays (skipped).
 */
async function purgeAll(
  sessions: SessionContext,
  trash: Trash,
  roots: PurgeRoot[],
  p: Purging,
  done: () => number,
  total: number,
): Promise<void> {
  if (roots.length === 0) return;
  const now = sessions.now();
  const entry = trash.newEntryName(now, (roots[0] as PurgeRoot).id);
  const header: EntryHeader = {
    entry,
    root: (roots[0] as PurgeRoot).id,
    reason: 'cleanup',
    actor: sessions.actor,
    pid: process.pid,
    deleted_at: new Date(now).toISOString(),
    work: [],
  };
  const timeout = sessions.settings.lockTimeoutMs;
  const stopped = () => p.signal?.aborted === true;
  await trash.withEntryLock(entry, timeout, async (checkEntry) => {
    const writer = new TrashWriter(sessions, trash, header);
    try {
      let size = FIRST_BATCH;
      for (let i = 0; i < roots.length;) {
        throwIfInterrupted(p.signal, done(), total);
        const batch: PurgeRoot[] = [];
        for (
          let n = 0;
          i < roots.length && (batch.length === 0 || n + (roots[i] as PurgeRoot).ids.length <= size);
          i++
        ) {
          batch.push(roots[i] as PurgeRoot);
          n += (roots[i] as PurgeRoot).ids.length;
        }
        size = Math.min(size * 2, MAX_BATCH);
        const ids = batch.flatMap((r) => r.ids);
        // Roots of the batch already counted (skipped, or moved): a failure skips the others.
        const counted = new Set<string>();
        const skip = (id: string, reason: string) => {
          if (counted.has(id)) return;
          counted.add(id);
          p.report.skipped.push({ id, reason });
          p.tick();
        };
        await withSessionLocks(
          sessions.store.dir,
          ids,
          timeout,
          async (check) => {
            const ready: PendingSubtree[] = [];
            const nodesOf = new Map<string, TreeNode[]>();
            const breathe = breather();
            for (const root of batch) {
              await breathe();
              const why = await judgeUnderLocks(sessions, root, p, nodesOf);
              if (why !== null) skip(root.id, why);
            }
            for (const root of batch) {
              const nodes = nodesOf.get(root.id);
              if (!nodes) continue;
              const order = [...nodes].reverse().map((n) => describe(trash, n));
              const bytes = order.reduce((sum, s) => sum + s.bytes, 0);
              const details = { root: root.id, reason: root.reason, backup: p.backup ? entry : null, bytes };
              ready.push({ root: root.id, reason: root.reason, order, audit: { action: 'cleanup', details } });
            }
            const hooks = { check, checkEntry, stop: stopped, onMoved: () => p.tick() };
            const moved = await writer.moveBatch(ready, hooks, i >= roots.length);
            // Reported once committed: a batch undone after a failure purged nothing.
            for (const t of moved) {
              counted.add(t.root);
              report(p, t, nodesOf.get(t.root) ?? [], entry);
            }
          },
          p.signal,
          // The entry's lock, held across every batch, kept fresh through the passes over the batch's locks.
          () => {
            try {
              checkEntry();
            } catch {
              // Lost: the next move's checkEntry throws it.
            }
          },
        ).catch((err: unknown) => {
          // Ctrl-C while waiting for a lock: said as every other stop, with what was done.
          if (isSessionError(err, 'EINTERRUPTED')) {
            throwIfInterrupted(p.signal, done(), total);
            throw err;
          }
          // Sessions hidden in the entry (a failed batch not undone): nothing else may go on.
          if (!isSessionError(err) || err.details.hidden) throw err;
          // A locked session, a full disk: this batch stays (whatever it moved was put back), the next is tried.
          for (const root of batch) skip(root.id, describeError(err));
        });
      }
      throwIfInterrupted(p.signal, done(), total);
    } finally {
      await writer.finish(p.backup);
    }
  });
}

/** Reads a subtree again under its locks and judges it again: null when it still goes, else why it stays. */
async function judgeUnderLocks(
  sessions: SessionContext,
  root: PurgeRoot,
  p: Purging,
  nodesOf: Map<string, TreeNode[]>,
): Promise<string | null> {
  let nodes: TreeNode[];
  try {
    nodes = await subtreeNodes(sessions, root.id, p.links);
  } catch (err) {
    return describeError(err);
  }
  const planned = new Set(root.ids);
  if (nodes.length !== planned.size || !nodes.every((n) => planned.has(n.id)))
    return `changed since the scan: the subtree of ${root.id} is not the one planned`;
  const plan = planDelete(nodes, {
    cascade: true,
    force: false,
    now: sessions.now(),
    runningMs: sessions.settings.runningMinutes * 60_000,
  });
  if (plan.blocked.length > 0) return plan.blocked.map((b) => `${b.id} ${b.reason}`).join('; ');
  for (const node of nodes) {
    if (!node.record) return `kept: ${node.id} is unreadable`;
    const verdict = judgeSession(node.record, sessions.now(), p.rules);
    if (verdict.kind !== 'purge') return `changed since the scan: ${node.id} ${verdict.reason}`;
  }
  // Kept until the batch has moved: without the records, which are not needed any more (a batch's
  // records held that long are promoted to V8's old space, garbage that only a full collection frees).
  nodesOf.set(
    root.id,
    nodes.map((n) => ({ id: n.id, parent: n.parent, depth: n.depth, record: null })),
  );
  return null;
}

function report(p: Purging, t: PendingSubtree, nodes: TreeNode[], entry: string): void {
  const withRoot = `with ${t.root}`;
  for (const node of nodes)
    p.report.purged.push({
      id: node.id,
      root: t.root,
      depth: node.depth,
      reason: node.depth === 0 ? (t.reason ?? '') : withRoot,
    });
  const bytes = t.order.reduce((sum, s) => sum + s.bytes, 0);
  if (p.backup) {
    if (!p.report.backups.includes(entry)) p.report.backups.push(entry);
    p.report.bytes_to_trash += bytes;
  } else p.report.bytes_freed += bytes;
}
