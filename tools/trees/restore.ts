import { isSessionError, SessionError } from '../errors.js';
import { isValidId } from '../ids.js';
import { throwIfInterrupted } from '../safe-points.js';
import type { SessionContext } from '../session-context.js';
import { ChildrenIndex } from '../store/children-index.js';
import { withSessionLocks } from '../store/subtree-locks.js';
import { diskBytes, Trash, type PreservedWork, type TrashManifest } from '../store/trash.js';

export interface TrashEntry {
  entry: string;
  path: string;
  root: string;
  status: TrashManifest['status'];
  reason: string;
  actor: string;
  deleted_at: string;
  expires_at: string;
  sessions: number;
  /** Sessions still in the entry (what restore would put back). */
  present: number;
  bytes: number;
  work: number;
  restorable: boolean;
}

export interface TrashListing {
  entries: TrashEntry[];
  problems: { entry: string; code: string; message: string }[];
}

/** What the trash holds, oldest first. */
export async function listTrash(sessions: SessionContext): Promise<TrashListing> {
  const trash = new Trash(sessions.store.dir);
  const listing: TrashListing = { entries: [], problems: [] };
  const retentionMs = sessions.settings.trashRetentionDays * 86_400_000;
  for (const entry of await trash.entries()) {
    try {
      const manifest = await trash.read(entry);
      if (!manifest) continue;
      const present = (await trash.present(entry)).length;
      listing.entries.push({
        entry,
        path: trash.entryDir(entry),
        root: manifest.root,
        status: manifest.status,
        reason: manifest.reason,
        actor: manifest.actor,
        deleted_at: manifest.deleted_at,
        expires_at: new Date(Date.parse(manifest.deleted_at) + retentionMs).toISOString(),
        sessions: manifest.sessions.length,
        present,
        bytes: await diskBytes(trash.entryDir(entry)),
        work: manifest.work.length,
        restorable: manifest.status === 'complete' && present > 0,
      });
    } catch (err) {
      const e = err as SessionError;
      listing.problems.push({ entry, code: e.code ?? 'EIO', message: e.message });
    }
  }
  return listing;
}

export interface RestoreResult {
  entry: string;
  restored: { id: string; depth: number; parent: string | null }[];
  warnings: string[];
  work: (PreservedWork & { patch_path: string | null; instructions: string[] })[];
}

/** Puts a deleted subtree back exactly as it was. `target` is a trash entry (name or path) or a session id. */
export async function restoreSession(
  sessions: SessionContext,
  target: string,
  options: { signal?: AbortSignal } = {},
): Promise<RestoreResult> {
  const trash = new Trash(sessions.store.dir);
  const entry = await findEntry(trash, target);
  const result = await trash.withEntryLock(
    entry,
    sessions.settings.lockTimeoutMs,
    async () => {
      const manifest = await trash.read(entry);
      // 'restoring': an interrupted restore, which running it again finishes.
      if (!manifest || (manifest.status !== 'complete' && manifest.status !== 'restoring')) {
        throw new SessionError('ENOTFOUND', `trash entry ${entry} holds nothing to restore`, { details: { entry } });
      }
      throwIfInterrupted(options.signal, 0, manifest.sessions.length);
      return putBack(sessions, trash, manifest, 'restore', options.signal);
    },
    options.signal,
  );
  return result;
}

/**
 * Marks the entry `restoring`, audits it (`restore` or `recover`), moves its sessions back into the
 * store, parents first, then retires the entry: kept as `restored` while it holds preserved work, else
 * destroyed. Runs under the locks of those sessions and of their parents outside the entry, so that no
 * delete of a parent runs meanwhile. EEXIST when
 * one of them exists in the store again; EREFUSED when a parent is in the trash itself (a live
 * session never has its parent in the trash: restore the parent first).
 */
export async function putBack(
  sessions: SessionContext,
  trash: Trash,
  manifest: TrashManifest,
  why: 'restore' | 'recover',
  signal?: AbortSignal,
): Promise<RestoreResult> {
  const present = new Set(await trash.present(manifest.entry));
  const order = [...manifest.sessions].reverse().filter((s) => present.has(s.id));
  const ids = order.map((s) => s.id);
  const outside = [...new Set(order.map((s) => s.parent).filter((p): p is string => p !== null && !present.has(p)))];
  const index = new ChildrenIndex(sessions.store.dir);
  const warnings: string[] = [];
  await withSessionLocks(
    sessions.store.dir,
    [...ids, ...outside],
    sessions.settings.lockTimeoutMs,
    async (check) => {
      const taken: string[] = [];
      for (const id of ids) if ((await sessions.store.read(id).catch(() => null)) !== undefined) taken.push(id);
      if (taken.length > 0) {
        throw new SessionError('EEXIST', `cannot restore: session(s) ${taken.join(', ')} exist in the store again`, {
          details: { ids: taken, entry: manifest.entry },
        });
      }
      for (const parent of outside) {
        if (await isLive(sessions, parent)) continue;
        const holder = (await trash.holding(parent))[0];
        const child = order.find((s) => s.parent === parent)?.id;
        if (holder) {
          throw new SessionError(
            'EREFUSED',
            `cannot restore ${child}: its parent ${parent} is in the trash (entry ${holder}); restore ${parent} first`,
            {
              details: {
                id: child,
                parent,
                entry: holder,
                blocked: [{ id: parent, reason: `in the trash entry ${holder}` }],
              },
            },
          );
        }
        warnings.push(`the parent ${parent} of ${child} no longer exists: ${child} is an orphan`);
      }
      await trash.writeManifest({ ...manifest, status: 'restoring', pid: process.pid });
      // Audited before anything moves, once the entry says `restoring`: a kill from here on leaves an
      // entry that recovery (or this restore again) finishes, so the sessions do come back.
      const details =
        why === 'restore'
          ? { entry: manifest.entry, root: manifest.root }
          : { entries: [{ entry: manifest.entry, action: 'rolled back' }] };
      await sessions.audit(why, ids, details);
      for (const s of order) {
        check(s.id);
        await index.add(s.parent, s.id);
        await trash.moveOut(manifest.entry, s.id);
      }
    },
    signal,
  );
  // Preserved work outlives a restore (its patch is what the user reapplies); a rolled-back delete's does not.
  const keep = manifest.work.length > 0 && (why === 'restore' || manifest.status === 'restoring');
  if (keep) await trash.writeManifest({ ...manifest, status: 'restored' });
  else await trash.destroy(manifest.entry);
  const work = manifest.work.map((w) => ({
    ...w,
    patch_path: w.patch ? trash.workFilePath(manifest.entry, w.patch) : null,
    instructions: instructions(w, w.patch ? trash.workFilePath(manifest.entry, w.patch) : null),
  }));
  return {
    entry: manifest.entry,
    restored: order.map((s) => ({ id: s.id, depth: s.depth, parent: s.parent })),
    warnings,
    work,
  };
}

/** Whether a session is in the store (a corrupt record counts: it is there). */
export async function isLive(sessions: SessionContext, id: string): Promise<boolean> {
  return (await sessions.store.read(id).catch(() => null)) !== undefined;
}

function instructions(w: PreservedWork, patch: string | null): string[] {
  const lines = [`cd ${w.dir}`];
  if (w.branch) lines.push(`git switch ${w.branch}   # was at ${w.head ?? '(no commit)'}`);
  else if (w.head) lines.push(`git switch --detach ${w.head}`);
  if (patch) lines.push(`git apply --3way ${patch}`);
  if (w.untracked.length > 0) lines.push(`# untracked then (contents not saved): ${w.untracked.join(', ')}`);
  if (w.unpushed > 0) lines.push(`# ${w.unpushed} commit(s) were not pushed${w.upstream ? ` to ${w.upstream}` : ''}`);
  return lines;
}

async function findEntry(trash: Trash, target: string): Promise<string> {
  const name = target.replace(/\/+$/, '').split('/').pop() ?? target;
  const entries = await trash.entries();
  if (entries.includes(name)) return name;
  if (!isValidId(target))
    throw new SessionError('EINVALID', `${JSON.stringify(target)} is neither a session id nor a trash entry`);
  // Newest first; an entry whose root is the id wins over one that only contains it.
  let contains: string | undefined;
  for (const entry of entries.reverse()) {
    const manifest = await trash
      .read(entry)
      .catch((err) => (isSessionError(err, 'ECORRUPT') ? undefined : Promise.reject(err)));
    if (!manifest || (manifest.status !== 'complete' && manifest.status !== 'restoring')) continue;
    if (manifest.root === target) return entry;
    if (!contains && manifest.sessions.some((s) => s.id === target)) contains = entry;
  }
  if (contains) return contains;
  throw new SessionError('ENOTFOUND', `no trash entry holds session ${target}`, { details: { id: target } });
}
