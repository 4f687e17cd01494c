import { isSessionError, SessionError } from '../errors.js';
import { isValidId } from '../ids.js';
import { checkOptions } from '../options.js';
import { throwIfInterrupted } from '../safe-points.js';
import type { SessionContext } from '../session-context.js';
import { ChildrenIndex } from '../store/children-index.js';
import { faultPoint } from '../store/fault-points.js';
import { keepLocksFresh } from '../store/lock.js';
import { withSessionLocks } from '../store/subtree-locks.js';
import { MARKER_SLICE } from './trash-writer.js';
import {
  diskBytes,
  subtreesOf,
  Trash,
  type PreservedWork,
  type TrashManifest,
  type TrashSession,
} from '../store/trash.js';

export interface TrashEntry {
  entry: string;
  path: string;
  root: string;
  /** The roots of the subtrees it holds (one for a delete; every subtree of one cleanup). */
  roots: string[];
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
        roots: subtreesOf(manifest).map((t) => t.root),
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

/**
 * Puts a deleted subtree back exactly as it was. `target` is a trash entry (name or path: all it holds)
 * or a session id (the subtree of the entry that holds it: one cleanup's entry holds many).
 */
export async function restoreSession(
  sessions: SessionContext,
  target: string,
  options: { signal?: AbortSignal; onProgress?: (progress: { done: number; total: number }) => void } = {},
): Promise<RestoreResult> {
  checkOptions(options, { signal: true, onProgress: true }, 'restoreSession');
  const trash = new Trash(sessions.store.dir);
  const { entry, id } = await findEntry(trash, target);
  await faultPoint('restore-entry-found');
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
      const subtree =
        id === undefined ? undefined : subtreesOf(manifest).find((t) => t.sessions.some((s) => s.id === id));
      // Looked up before the lock: a restore of the same session may have put it back meanwhile. Never
      // fall back to the whole entry, which would restore the other subtrees of a cleanup too.
      if (id !== undefined && !subtree && manifest.status === 'complete') {
        throw new SessionError('ENOTFOUND', `trash entry ${entry} no longer holds session ${id}`, {
          details: { entry, id },
        });
      }
      // An interrupted restore is finished first, whatever the target; then the target, if it is another.
      if (manifest.status === 'restoring') {
        const finished = await putBack(sessions, trash, manifest, 'restore', options);
        const after = id === undefined ? undefined : await trash.read(entry);
        const left =
          after?.status === 'complete' ? subtreesOf(after).find((t) => t.sessions.some((s) => s.id === id)) : undefined;
        if (!after || !left) return finished;
        const more = await putBack(sessions, trash, after, 'restore', { ...options, only: idsOf(left) });
        return {
          ...more,
          restored: [...finished.restored, ...more.restored],
          warnings: [...finished.warnings, ...more.warnings],
          work: [...finished.work, ...more.work],
        };
      }
      const only = subtree ? idsOf(subtree) : undefined;
      return putBack(sessions, trash, manifest, 'restore', { ...options, ...(only ? { only } : {}) });
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
  options: PutBackOptions = {},
): Promise<RestoreResult> {
  const present = new Set(await trash.present(manifest.entry));
  const chosen = options.only ?? new Set(manifest.restoring ?? manifest.sessions.map((s) => s.id));
  const order = [...manifest.sessions].reverse().filter((s) => chosen.has(s.id) && present.has(s.id));
  const ids = order.map((s) => s.id);
  const moving = new Set(ids);
  const outside = [...new Set(order.map((s) => s.parent).filter((p): p is string => p !== null && !moving.has(p)))];
  const index = new ChildrenIndex(sessions.store.dir);
  const warnings: string[] = [];
  const remaining = subtreesOf(manifest).filter((t) => !t.sessions.some((s) => chosen.has(s.id)));
  await withSessionLocks(
    sessions.store.dir,
    [...ids, ...outside],
    sessions.settings.lockTimeoutMs,
    async (check) => {
      const taken: string[] = [];
      // Synchronous reads underneath, one per session: the locks are kept fresh between two.
      for (const id of ids) {
        keepLocksFresh();
        if ((await sessions.store.read(id).catch(() => null)) !== undefined) taken.push(id);
      }
      if (taken.length > 0) {
        throw new SessionError('EEXIST', `cannot restore: session(s) ${taken.join(', ')} exist in the store again`, {
          details: { ids: taken, entry: manifest.entry },
        });
      }
      for (const parent of outside) {
        keepLocksFresh();
        if (await isLive(sessions, parent)) continue;
        const holder = present.has(parent) ? manifest.entry : (await trash.holding(parent))[0];
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
      // One turn of the event loop: a Ctrl-C that came while the locks were taken (each a synchronous
      // mkdir) is delivered now, and stops the restore before anything moves.
      await new Promise((resolve) => setImmediate(resolve));
      throwIfInterrupted(options.signal, 0, ids.length);
      const restoring = remaining.length > 0 ? { restoring: [...chosen] } : {};
      await trash.writeManifest({ ...manifest, status: 'restoring', pid: process.pid, ...restoring });
      // Audited before anything moves, once the entry says `restoring`: a kill from here on leaves an
      // entry that recovery (or this restore again) finishes, so the sessions do come back.
      const details =
        why === 'restore'
          ? { entry: manifest.entry, root: ids[0] ?? manifest.root }
          : { entries: [{ entry: manifest.entry, action: 'rolled back' }] };
      await sessions.audit(why, ids, details);
      for (const [i, s] of order.entries()) {
        // The markers before the sessions they describe (a kill leaves at most stale ones), a slice at a time.
        if (i % MARKER_SLICE === 0)
          index.addMany(order.slice(i, i + MARKER_SLICE).map(linkOf), 'the restored sessions');
        check(s.id);
        await trash.moveOut(manifest.entry, s.id);
        options.onProgress?.({ done: i + 1, total: order.length });
      }
      if (order.length > 0) await trash.syncMoves(manifest.entry);
    },
    options.signal,
  );
  if (remaining.length > 0) {
    // The other subtrees of a batched entry stay, complete, restorable on their own.
    const { restoring: _, ...rest } = manifest;
    await trash.writeManifest({
      ...rest,
      status: 'complete',
      sessions: remaining.flatMap((t) => t.sessions),
      subtrees: remaining.map((t) => ({
        root: t.root,
        ...(t.reason ? { reason: t.reason } : {}),
        sessions: t.sessions.length,
      })),
      committed: remaining.length,
      bytes: remaining.flatMap((t) => t.sessions).reduce((sum, s) => sum + s.bytes, 0),
    });
    return { entry: manifest.entry, restored: order.map(restored), warnings, work: [] };
  }
  // Preserved work outlives a restore (its patch is what the user reapplies); a rolled-back delete's does not.
  const keep = manifest.work.length > 0 && (why === 'restore' || manifest.status === 'restoring');
  if (keep) await trash.writeManifest({ ...manifest, status: 'restored' });
  else await trash.destroy(manifest.entry);
  const work = manifest.work.map((w) => ({
    ...w,
    patch_path: w.patch ? trash.workFilePath(manifest.entry, w.patch) : null,
    instructions: instructions(w, w.patch ? trash.workFilePath(manifest.entry, w.patch) : null),
  }));
  return { entry: manifest.entry, restored: order.map(restored), warnings, work };
}

function idsOf(subtree: { sessions: TrashSession[] }): Set<string> {
  return new Set(subtree.sessions.map((s) => s.id));
}

function linkOf(s: TrashSession) {
  return { parent: s.parent, child: s.id };
}

function restored(s: TrashSession) {
  return { id: s.id, depth: s.depth, parent: s.parent };
}

export interface PutBackOptions {
  /** The sessions to put back (default: those the entry is restoring, else all). */
  only?: Set<string>;
  signal?: AbortSignal;
  onProgress?: (progress: { done: number; total: number }) => void;
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

async function findEntry(trash: Trash, target: string): Promise<{ entry: string; id?: string }> {
  const name = target.replace(/\/+$/, '').split('/').pop() ?? target;
  const entries = await trash.entries();
  if (entries.includes(name)) return { entry: name };
  if (!isValidId(target))
    throw new SessionError('EINVALID', `${JSON.stringify(target)} is neither a session id nor a trash entry`);
  // Newest first; an entry whose root is the id wins over one that only contains it.
  let contains: string | undefined;
  for (const entry of entries.reverse()) {
    const manifest = await trash
      .read(entry)
      .catch((err) => (isSessionError(err, 'ECORRUPT') ? undefined : Promise.reject(err)));
    if (!manifest || (manifest.status !== 'complete' && manifest.status !== 'restoring')) continue;
    if (manifest.root === target || manifest.subtrees?.some((t) => t.root === target)) return { entry, id: target };
    if (!contains && manifest.sessions.some((s) => s.id === target)) contains = entry;
  }
  if (contains) return { entry: contains, id: target };
  throw new SessionError('ENOTFOUND', `no trash entry holds session ${target}`, { details: { id: target } });
}
