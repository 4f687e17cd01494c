import { isSessionError, SessionError } from '../errors.js';
import { judgeSession, type CleanupRules } from '../policy/cleanup-plan.js';
import { applyFinalize } from '../policy/lifecycle.js';
import type { SessionContext } from '../session-context.js';
import { withSessionLocks } from '../store/subtree-locks.js';
import { findStrays, quarantineSession, removeStray } from '../store/strays.js';
import { diskBytes, type Trash } from '../store/trash.js';
import type { Recovery } from './recover.js';

/** Leftovers younger than this may belong to a process still at work. */
export const STRAY_AGE_MS = 10 * 60_000;

// The steps of cleanup besides purging (see cleanup.ts); each adds what it did to the report.

/** What a cleanup did, or would do in a dry run. */
export interface CleanupReport {
  dry_run: boolean;
  cutoff: string;
  scanned: number;
  /** Every purged session, its subtree root and why the root went. */
  purged: { id: string; root: string; depth: number; reason: string }[];
  /** The ids of `purged`, as a flat list. */
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
  /** How long the trash keeps what this run moved there, and when it frees it (null: nothing moved). */
  trash_retention_days: number;
  trash_frees_at: string | null;
}

export async function abandon(
  sessions: SessionContext,
  id: string,
  rules: CleanupRules,
  dry: boolean,
  report: CleanupReport,
): Promise<void> {
  const record = await sessions.store.read(id).catch(() => undefined);
  const verdict = record ? judgeSession(record, sessions.now(), rules) : undefined;
  if (!verdict || verdict.kind !== 'abandon') return void report.skipped.push({ id, reason: 'changed since the scan' });
  if (dry) return void report.abandoned.push({ id, reason: verdict.reason });
  let reason: string | undefined;
  try {
    await sessions.store.update(id, (current) => {
      // Decided again under the lock: a hook that updated it since the scan keeps it running.
      const fresh = judgeSession(current, sessions.now(), rules);
      if (fresh.kind !== 'abandon') return current;
      reason = fresh.reason;
      return applyFinalize(current, 'abandoned', `abandoned by cleanup: ${fresh.reason}`, sessions.now()).record;
    });
  } catch (err) {
    return void report.skipped.push({ id, reason: describe(err) });
  }
  if (reason === undefined) return void report.skipped.push({ id, reason: 'updated since the scan' });
  report.abandoned.push({ id, reason });
  await sessions.audit('abandon', [id], { reason, by: 'cleanup' });
}

export async function quarantine(
  sessions: SessionContext,
  problem: { id: string; code: string; message: string },
  dry: boolean,
  report: CleanupReport,
): Promise<void> {
  if (problem.code !== 'ECORRUPT')
    return void report.skipped.push({ id: problem.id, reason: `${problem.code}: ${problem.message}` });
  if (dry) return void report.quarantined.push({ id: problem.id, reason: problem.message, path: null });
  try {
    const where = await quarantineIfCorrupt(sessions, problem.id, { reason: problem.message });
    if (where === null) return void report.skipped.push({ id: problem.id, reason: 'no longer corrupt' });
    report.quarantined.push({ id: problem.id, reason: problem.message, path: where });
  } catch (err) {
    report.skipped.push({ id: problem.id, reason: describe(err) });
  }
}

/**
 * Moves a corrupt session aside (cleanup, doctor --repair) and audits it, under its lock; null when
 * it is no longer corrupt there (a writer replaced it since the scan).
 */
export async function quarantineIfCorrupt(
  sessions: SessionContext,
  id: string,
  details: Record<string, unknown>,
): Promise<string | null> {
  return withSessionLocks(sessions.store.dir, [id], sessions.settings.lockTimeoutMs, async (check) => {
    const still = await sessions.store.read(id).then(
      () => false,
      (err) => isSessionError(err, 'ECORRUPT'),
    );
    if (!still) return null;
    check();
    const where = await quarantineSession(sessions.store.dir, id, sessions.now());
    await sessions.audit('quarantine', [id], { ...details, path: where });
    return where;
  });
}

export async function expireTrash(
  sessions: SessionContext,
  trash: Trash,
  dry: boolean,
  report: CleanupReport,
  stopHere: () => void = () => undefined,
): Promise<void> {
  const retentionMs = sessions.settings.trashRetentionDays * 86_400_000;
  for (const entry of await trash.entries()) {
    if (report.backups.includes(entry)) continue;
    stopHere();
    const manifest = await trash.read(entry).catch(() => undefined);
    if (!manifest || (manifest.status !== 'complete' && manifest.status !== 'restored')) continue;
    if (!(sessions.now() - Date.parse(manifest.deleted_at) > retentionMs)) continue;
    const bytes = await diskBytes(trash.entryDir(entry));
    if (!dry) {
      // Decided again under the entry's lock (a restore may have begun since the read above), and
      // audited before the destroy (one rename), so a kill between the two cannot leave it unrecorded.
      const expire = async () => {
        const fresh = await trash.read(entry);
        if (fresh?.status !== 'complete' && fresh?.status !== 'restored') return false;
        // A restored entry's sessions are live: only its preserved work goes. So is a session whose
        // id was created or imported again since: the line names only what is gone for good.
        const live = new Set(sessions.store.ids());
        const ids = fresh.status === 'complete' ? fresh.sessions.map((s) => s.id).filter((id) => !live.has(id)) : [];
        await sessions.audit('cleanup', ids, { expired_trash: entry, bytes });
        await trash.destroy(entry);
        return true;
      };
      const gone = await trash.withEntryLock(entry, 1000, expire).catch(() => false);
      if (!gone) {
        report.skipped.push({ id: entry, reason: 'trash entry in use' });
        continue;
      }
    }
    report.expired_trash.push({ entry, bytes });
    report.bytes_freed += bytes;
  }
}

export async function removeStrays(sessions: SessionContext, dry: boolean, report: CleanupReport): Promise<void> {
  const now = Date.now();
  // Temp files of the older layout (inside session directories) are doctor's: see strays.ts.
  for (const stray of findStrays(sessions.store.dir, now, STRAY_AGE_MS)) {
    const bytes = await diskBytes(stray.path);
    if (!dry && !(await removeStray(stray, now, STRAY_AGE_MS))) continue;
    report.swept.push({ path: stray.path, kind: stray.kind });
    report.bytes_freed += bytes;
  }
}

export function describe(err: unknown): string {
  if (err instanceof SessionError) return `${err.code}: ${err.message}`;
  throw err;
}
