import { isSessionError, SessionError } from '../errors.js';
import { planCleanup, judgeSession, type CleanupRules } from '../policy/cleanup-plan.js';
import { applyFinalize } from '../policy/lifecycle.js';
import type { TreeNode } from '../policy/tree-guard.js';
import type { Sessions } from '../sessions.js';
import { withAreaLock, withSessionLocks } from '../store/subtree-locks.js';
import { census } from '../store/census.js';
import { findStrays, quarantineSession, removeStray, type StrayFile } from '../store/sweep.js';
import { diskBytes, Trash } from '../store/trash.js';
import { reconcileIndex } from './hierarchy.js';
import { recoverTrash, type Recovery } from './recover.js';
import { removeSubtree } from './remove-subtree.js';

export interface CleanupOptions {
  /** Age cutoff in hours (default: the cleanup_hours setting, 24). */
  olderThanHours?: number;
  dryRun?: boolean;
  /** Move purged subtrees to the trash (default); false destroys them. */
  backup?: boolean;
  /** Called as the work advances (the CLI draws a progress bar from it). */
  onProgress?: (progress: { done: number; total: number; scanned: number }) => void;
}

export interface CleanupReport {
  dry_run: boolean;
  cutoff: string;
  scanned: number;
  /** Every purged session, its subtree root and why the root went. */
  purged: { id: string; root: string; depth: number; reason: string }[];
  /** The ids of `purged` (the earlier report's field). */
  removed: string[];
  abandoned: { id: string; reason: string }[];
  quarantined: { id: string; reason: string; path: string | null }[];
  skipped: { id: string; reason: string }[];
  orphans: { id: string; parent: string; action: string }[];
  /** Sessions left alone because they are recent. */
  kept: number;
  expired_trash: { entry: string; bytes: number }[];
  swept: { path: string; kind: string }[];
  recovered: Recovery[];
  /** Trash entries that now hold what was purged. */
  backups: string[];
  bytes_freed: number;
  bytes_to_trash: number;
}

const STRAY_AGE_MS = 10 * 60_000;
/** Longer than the lock staleness (2 s) so the lock of a killed cleanup is taken over. */
const CLEANUP_LOCK_WAIT_MS = 5000;

/** Scan, then purge: see SESSION_README.md, "Cleanup". One cleanup at a time per store (ELOCKED otherwise). */
export async function cleanup(sessions: Sessions, options: CleanupOptions = {}): Promise<CleanupReport> {
  const hours = options.olderThanHours ?? sessions.settings.cleanupHours;
  if (typeof hours !== 'number' || !Number.isFinite(hours) || hours < 0) {
    throw new SessionError('EINVALID', `hours must be a number >= 0, got ${JSON.stringify(hours)}`);
  }
  if (options.dryRun) return run(sessions, hours, options);
  const what = 'cleanup (another cleanup is running on this store)';
  return withAreaLock(sessions.store.dir, 'cleanup', CLEANUP_LOCK_WAIT_MS, what, () => run(sessions, hours, options));
}

async function run(sessions: Sessions, hours: number, options: CleanupOptions): Promise<CleanupReport> {
  const dry = Boolean(options.dryRun);
  const now = sessions.now();
  const rules = cleanupRules(sessions, hours);
  const recovered = await recoverTrash(sessions, { dryRun: dry });
  const found = census(sessions.store.dir, sessions.store.ids(), Date.now(), STRAY_AGE_MS);
  const { records, problems } = found;
  const plan = planCleanup(records, problems.map((p) => p.id), now, rules);
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
  const tick = () => options.onProgress?.({ done: ++done, total, scanned: report.scanned });
  for (const item of plan.abandon) {
    await abandon(sessions, item.id, rules, dry, report);
    tick();
  }
  for (const problem of problems) {
    await quarantine(sessions, problem, dry, report);
    tick();
  }
  const links = dry ? undefined : await reconcileIndex(sessions, true);
  const trash = new Trash(sessions.store.dir);
  for (const root of plan.purge) {
    await purge(sessions, root, rules, dry, options.backup ?? true, links, report, found.bytes);
    tick();
  }
  await expireTrash(sessions, trash, dry, report);
  await sweep(sessions, found.temps, dry, report);
  report.removed = report.purged.map((p) => p.id);
  if (!dry && (report.purged.length > 0 || report.expired_trash.length > 0 || report.swept.length > 0)) {
    await sessions.audit('cleanup', report.removed, {
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

export function cleanupRules(sessions: Sessions, hours: number): CleanupRules {
  const cutoffMs = hours * 3_600_000;
  const runningMs = sessions.settings.runningMinutes * 60_000;
  return { cutoffMs, runningMs, resumeWindowMs: sessions.rules.resumeWindowMs, stuckMs: Math.max(cutoffMs * sessions.settings.stuckFactor, runningMs) };
}

async function abandon(sessions: Sessions, id: string, rules: CleanupRules, dry: boolean, report: CleanupReport): Promise<void> {
  const record = await sessions.store.read(id).catch(() => undefined);
  const verdict = record ? judgeSession(record, sessions.now(), rules) : undefined;
  if (!verdict || verdict.kind !== 'abandon') return void report.skipped.push({ id, reason: 'changed since the scan' });
  if (dry) return void report.abandoned.push({ id, reason: verdict.reason });
  let reason: string | undefined;
  await sessions.store
    .update(id, (current) => {
      // Decided again under the lock: a hook that updated it since the scan keeps it running.
      const fresh = judgeSession(current, sessions.now(), rules);
      if (fresh.kind !== 'abandon') return current;
      reason = fresh.reason;
      return applyFinalize(current, 'abandoned', `abandoned by cleanup: ${fresh.reason}`, sessions.now()).record;
    })
    .catch((err) => report.skipped.push({ id, reason: describe(err) }));
  if (reason === undefined) return void report.skipped.push({ id, reason: 'updated since the scan' });
  report.abandoned.push({ id, reason });
  await sessions.audit('abandon', [id], { reason, by: 'cleanup' });
}

async function quarantine(sessions: Sessions, problem: { id: string; code: string; message: string }, dry: boolean, report: CleanupReport): Promise<void> {
  if (problem.code !== 'ECORRUPT') return void report.skipped.push({ id: problem.id, reason: `${problem.code}: ${problem.message}` });
  if (dry) return void report.quarantined.push({ id: problem.id, reason: problem.message, path: null });
  try {
    const where = await withSessionLocks(sessions.store.dir, [problem.id], sessions.settings.lockTimeoutMs, async (check) => {
      // Still corrupt under the lock? A writer may have replaced it since the scan.
      const still = await sessions.store.read(problem.id).then(() => false, (err) => isSessionError(err, 'ECORRUPT'));
      if (!still) return null;
      check();
      return quarantineSession(sessions.store.dir, problem.id, sessions.now());
    });
    if (where === null) return void report.skipped.push({ id: problem.id, reason: 'no longer corrupt' });
    report.quarantined.push({ id: problem.id, reason: problem.message, path: where });
    await sessions.audit('quarantine', [problem.id], { reason: problem.message, path: where });
  } catch (err) {
    report.skipped.push({ id: problem.id, reason: describe(err) });
  }
}

async function purge(
  sessions: Sessions,
  root: { id: string; reason: string; ids: string[]; depths: number[] },
  rules: CleanupRules,
  dry: boolean,
  backup: boolean,
  links: Awaited<ReturnType<typeof reconcileIndex>> | undefined,
  report: CleanupReport,
  sizes: Map<string, number>,
): Promise<void> {
  if (dry) {
    root.ids.forEach((id, i) => report.purged.push({ id, root: root.id, depth: root.depths[i] ?? 0, reason: i === 0 ? root.reason : `with ${root.id}` }));
    for (const id of root.ids) report.bytes_to_trash += sizes.get(id) ?? 0;
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
  try {
    const removal = await removeSubtree(sessions, root.id, { reason: 'cleanup', cascade: true, force: false, backup, preserveWork: false, checkWork: false, links, accept });
    for (const node of removal.nodes) report.purged.push({ id: node.id, root: root.id, depth: node.depth, reason: node.depth === 0 ? root.reason : `with ${root.id}` });
    if (removal.entry) {
      report.backups.push(removal.entry);
      report.bytes_to_trash += removal.bytes;
    } else report.bytes_freed += removal.bytes;
  } catch (err) {
    report.skipped.push({ id: root.id, reason: describe(err) });
  }
}

async function expireTrash(sessions: Sessions, trash: Trash, dry: boolean, report: CleanupReport): Promise<void> {
  const retentionMs = sessions.settings.trashRetentionDays * 86_400_000;
  for (const entry of await trash.entries()) {
    if (report.backups.includes(entry)) continue;
    const manifest = await trash.read(entry).catch(() => undefined);
    if (!manifest || (manifest.status !== 'complete' && manifest.status !== 'restored')) continue;
    if (!(sessions.now() - Date.parse(manifest.deleted_at) > retentionMs)) continue;
    const bytes = await diskBytes(trash.entryDir(entry));
    if (!dry) {
      const gone = await trash.withEntryLock(entry, 1000, () => trash.destroy(entry)).then(() => true, () => false);
      if (!gone) {
        report.skipped.push({ id: entry, reason: 'trash entry in use' });
        continue;
      }
    }
    report.expired_trash.push({ entry, bytes });
    report.bytes_freed += bytes;
  }
}

async function sweep(sessions: Sessions, temps: StrayFile[], dry: boolean, report: CleanupReport): Promise<void> {
  const now = Date.now();
  // Temp files were found by the census; locks and `.removing/` leftovers are looked for here.
  for (const stray of [...temps, ...(await findStrays(sessions.store.dir, [], now, STRAY_AGE_MS))]) {
    const bytes = await diskBytes(stray.path);
    if (!dry && !(await removeStray(stray, now, STRAY_AGE_MS))) continue;
    report.swept.push({ path: stray.path, kind: stray.kind });
    report.bytes_freed += bytes;
  }
}

function describe(err: unknown): string {
  if (err instanceof SessionError) return `${err.code}: ${err.message}`;
  throw err;
}
