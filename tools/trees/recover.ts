import { isSessionError, SessionError } from '../errors.js';
import type { SessionContext } from '../session-context.js';
import { faultPoint } from '../store/fault-points.js';
import { subtreesOf, Trash, type TrashManifest } from '../store/trash.js';
import { putBack } from './restore.js';
import { checkOptions } from '../options.js';

export interface Recovery {
  entry: string;
  status: string;
  action: 'rolled back' | 'in progress' | 'kept in the trash' | 'would roll back' | 'unreadable' | 'failed';
  ids: string[];
  detail?: string;
}

interface RecoverOptions {
  dryRun?: boolean;
  /** Only the entries whose manifest names one of these sessions (a delete finishing its own). */
  touching?: Set<string>;
}

/**
 * Finishes what a killed delete, cleanup or restore left: an entry that is not `complete` and whose
 * process is gone is moved back into the store (parents first). Every decision is made again under
 * the entry's lock, from what is on disk then: the process that made an entry holds that lock from
 * before its folder exists until its manifest says `complete`. Sessions stay in the trash (the entry
 * marked complete, so they remain restorable) when one of them exists in the store again, or when
 * putting them back would leave a live session whose parent is in the trash.
 */
export async function recoverTrash(sessions: SessionContext, options: RecoverOptions = {}): Promise<Recovery[]> {
  checkOptions(options, { dryRun: true, touching: true }, 'recoverTrash');
  const trash = new Trash(sessions.store.dir);
  const done: Recovery[] = [];
  for (const entry of await trash.entries()) {
    const manifest = await trash.read(entry).catch((err: SessionError) => err);
    if (manifest instanceof Error) {
      if (!options.touching) done.push({ entry, status: '?', action: 'unreadable', ids: [], detail: manifest.message });
      continue;
    }
    if (manifest?.status === 'complete' || manifest?.status === 'restored') continue;
    if (options.touching && !manifest?.sessions.some((s) => options.touching?.has(s.id))) continue;
    const ids = await trash.present(entry);
    if (options.dryRun) {
      if (manifest) done.push({ entry, status: manifest.status, action: 'would roll back', ids });
      else if (ids.length > 0) done.push({ entry, status: '?', action: 'unreadable', ids, detail: 'no manifest.json' });
      continue;
    }
    // One entry that cannot be recovered now (a full disk) does not stop the others, or what the
    // caller does next (cleanup's expiry frees space with almost none).
    const result = await recoverEntry(sessions, trash, entry).catch((err: unknown) => {
      if (isSessionError(err, 'EINTERRUPTED') || !isSessionError(err)) throw err;
      return { entry, status: manifest?.status ?? '?', action: 'failed' as const, ids, detail: err.message };
    });
    if (result) done.push(result);
  }
  return done;
}

async function recoverEntry(sessions: SessionContext, trash: Trash, entry: string): Promise<Recovery | undefined> {
  await faultPoint('recover-entry');
  try {
    // A short wait: a live owner refreshes its lock; a dead one's is stale after 2 s and taken over.
    return await trash.withEntryLock(entry, 3000, async () => {
      const fresh = await trash.read(entry);
      const ids = await trash.present(entry);
      if (!fresh) {
        // Killed between creating the entry and writing its manifest: nothing was moved yet. (Or
        // finished, then restored and destroyed, while this waited for the lock: nothing to do.)
        if (ids.length === 0 && trash.exists(entry)) await trash.destroy(entry);
        return ids.length === 0
          ? undefined
          : { entry, status: '?', action: 'unreadable' as const, ids, detail: 'no manifest.json' };
      }
      if (fresh.status === 'complete' || fresh.status === 'restored') return undefined;
      // Of a cleanup's entry, only what had not taken effect goes back: the committed subtrees stay.
      const back = notCommitted(fresh);
      const moving = ids.filter((id) => back.has(id));
      return { entry, status: fresh.status, action: await rollBack(sessions, trash, fresh, moving), ids: moving };
    });
  } catch (err) {
    if (!isSessionError(err, 'ELOCKED')) throw err;
    const manifest = await trash.read(entry).catch(() => undefined);
    return { entry, status: manifest?.status ?? '?', action: 'in progress', ids: await trash.present(entry) };
  }
}

/** Under the entry's lock; each outcome is audited as it takes effect (putBack audits its own). */
async function rollBack(
  sessions: SessionContext,
  trash: Trash,
  manifest: TrashManifest,
  ids: string[],
): Promise<Recovery['action']> {
  try {
    await putBack(sessions, trash, manifest, 'recover', { only: notCommitted(manifest) });
    return 'rolled back';
  } catch (err) {
    if (!isSessionError(err, 'EEXIST') && !isSessionError(err, 'EREFUSED')) throw err;
    // The line first: killed before the manifest says complete, the next recovery decides (and writes) again.
    await sessions.audit('recover', ids, { entries: [{ entry: manifest.entry, action: 'kept in the trash' }] });
    await trash.writeManifest({ ...manifest, status: 'complete' });
    return 'kept in the trash';
  }
}

/**
 * What recovery puts back: of a cleanup's entry cut short while moving, the subtrees past `committed`
 * (those before it were moved, synced and audited: they stay); of a delete's, everything; of a restore
 * cut short, what it was restoring.
 */
function notCommitted(manifest: TrashManifest): Set<string> {
  if (manifest.status !== 'moving') return new Set(manifest.restoring ?? manifest.sessions.map((s) => s.id));
  // A delete is all or nothing: one not acknowledged (its entry never complete) did not happen.
  if (manifest.reason === 'delete') return new Set(manifest.sessions.map((s) => s.id));
  const subtrees = subtreesOf(manifest).slice(manifest.committed ?? 0);
  return new Set(subtrees.flatMap((t) => t.sessions.map((s) => s.id)));
}
