import { isSessionError, SessionError } from '../errors.js';
import type { Sessions } from '../sessions.js';
import { Trash } from '../store/trash.js';
import { putBack } from './restore.js';

export interface Recovery {
  entry: string;
  status: string;
  action: 'rolled back' | 'in progress' | 'kept in the trash' | 'would roll back' | 'unreadable';
  ids: string[];
  detail?: string;
}

/**
 * Finishes what a killed delete, cleanup or restore left: an entry that is not `complete` and whose
 * lock is free is moved back into the store (parents first). If a session of it exists in the store
 * again, the entry is marked complete instead, so what it holds stays restorable.
 */
export async function recoverTrash(sessions: Sessions, options: { dryRun?: boolean } = {}): Promise<Recovery[]> {
  const trash = new Trash(sessions.store.dir);
  const done: Recovery[] = [];
  for (const entry of await trash.entries()) {
    const manifest = await trash.read(entry).catch((err: SessionError) => err);
    if (manifest instanceof Error) {
      done.push({ entry, status: '?', action: 'unreadable', ids: [], detail: manifest.message });
      continue;
    }
    if (manifest === undefined) {
      // Killed between creating the entry and writing its manifest: nothing was moved yet.
      const empty = (await trash.present(entry)).length === 0;
      if (!options.dryRun && empty) await trash.withEntryLock(entry, 3000, () => trash.destroy(entry)).catch(() => undefined);
      if (!empty) done.push({ entry, status: '?', action: 'unreadable', ids: [], detail: 'no manifest.json' });
      continue;
    }
    if (manifest.status === 'complete' || manifest.status === 'restored') continue;
    const ids = await trash.present(entry);
    if (options.dryRun) {
      done.push({ entry, status: manifest.status, action: 'would roll back', ids });
      continue;
    }
    try {
      // A short wait: a live owner refreshes its lock; a dead one's is stale after 2 s and taken over.
      const action = await trash.withEntryLock(entry, 3000, async () => {
        const fresh = await trash.read(entry);
        if (!fresh || fresh.status === 'complete' || fresh.status === 'restored') return undefined;
        // One line per entry, written under its lock as it is handled: a kill later in the loop loses none.
        const audited = (action: 'rolled back' | 'kept in the trash') => sessions.audit('recover', ids, { entries: [{ entry, action }] }).then(() => action);
        try {
          await putBack(sessions, trash, fresh, 'recover');
          return audited('rolled back');
        } catch (err) {
          if (!isSessionError(err, 'EEXIST')) throw err;
          await trash.writeManifest({ ...fresh, status: 'complete' });
          return audited('kept in the trash');
        }
      });
      if (action) done.push({ entry, status: manifest.status, action, ids });
    } catch (err) {
      if (!isSessionError(err, 'ELOCKED')) throw err;
      done.push({ entry, status: manifest.status, action: 'in progress', ids });
    }
  }
  return done;
}
