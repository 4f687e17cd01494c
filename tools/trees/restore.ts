import { isSessionError, SessionError } from '../errors.js';
import { isValidId } from '../ids.js';
import { throwIfInterrupted } from '../interrupt.js';
import type { Sessions } from '../sessions.js';
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
export async function listTrash(sessions: Sessions): Promise<TrashListing> {
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
export async function restoreSession(sessions: Sessions, target: string, options: { signal?: AbortSignal } = {}): Promise<RestoreResult> {
  const trash = new Trash(sessions.store.dir);
  const entry = await findEntry(trash, target);
  const result = await trash.withEntryLock(entry, sessions.settings.lockTimeoutMs, async () => {
    const manifest = await trash.read(entry);
    if (!manifest || manifest.status !== 'complete') {
      throw new SessionError('ENOTFOUND', `trash entry ${entry} holds nothing to restore`, { details: { entry } });
    }
    throwIfInterrupted(options.signal, 0, manifest.sessions.length);
    return putBack(sessions, trash, manifest, 'restore');
  });
  await sessions.audit('restore', result.restored.map((s) => s.id), { entry, root: result.restored[0]?.id ?? null });
  return result;
}

/**
 * Moves an entry's sessions back into the store, parents first, under their locks (EEXIST when one
 * exists again), then retires the entry: kept as `restored` while it holds preserved work, else destroyed.
 */
export async function putBack(sessions: Sessions, trash: Trash, manifest: TrashManifest, why: 'restore' | 'recover'): Promise<RestoreResult> {
  const present = new Set(await trash.present(manifest.entry));
  const order = [...manifest.sessions].reverse().filter((s) => present.has(s.id));
  const ids = order.map((s) => s.id);
  const index = new ChildrenIndex(sessions.store.dir);
  const warnings: string[] = [];
  await withSessionLocks(sessions.store.dir, ids, sessions.settings.lockTimeoutMs, async (check) => {
    const taken: string[] = [];
    for (const id of ids) if ((await sessions.store.read(id).catch(() => null)) !== undefined) taken.push(id);
    if (taken.length > 0) {
      throw new SessionError('EEXIST', `cannot restore: session(s) ${taken.join(', ')} exist in the store again`, { details: { ids: taken, entry: manifest.entry } });
    }
    await trash.writeManifest({ ...manifest, status: 'restoring' });
    for (const s of order) {
      check(s.id);
      await index.add(s.parent, s.id);
      await trash.moveOut(manifest.entry, s.id);
    }
  });
  const root = order.find((s) => s.id === manifest.root) ?? order[order.length - 1];
  if (root?.parent && (await sessions.store.read(root.parent).catch(() => null)) === undefined) {
    warnings.push(`the parent ${root.parent} of ${root.id} no longer exists: ${root.id} is an orphan`);
  }
  // Preserved work outlives a restore (its patch is what the user reapplies); a rolled-back delete's does not.
  const keep = manifest.work.length > 0 && (why === 'restore' || manifest.status === 'restoring');
  if (keep) await trash.writeManifest({ ...manifest, status: 'restored' });
  else await trash.destroy(manifest.entry);
  const work = manifest.work.map((w) => ({ ...w, patch_path: w.patch ? trash.workFilePath(manifest.entry, w.patch) : null, instructions: instructions(w, w.patch ? trash.workFilePath(manifest.entry, w.patch) : null) }));
  return { entry: manifest.entry, restored: order.map((s) => ({ id: s.id, depth: s.depth, parent: s.parent })), warnings, work };
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
  if (!isValidId(target)) throw new SessionError('EINVALID', `${JSON.stringify(target)} is neither a session id nor a trash entry`);
  // Newest first; an entry whose root is the id wins over one that only contains it.
  let contains: string | undefined;
  for (const entry of entries.reverse()) {
    const manifest = await trash.read(entry).catch((err) => (isSessionError(err, 'ECORRUPT') ? undefined : Promise.reject(err)));
    if (!manifest || manifest.status !== 'complete') continue;
    if (manifest.root === target) return entry;
    if (!contains && manifest.sessions.some((s) => s.id === target)) contains = entry;
  }
  if (contains) return contains;
  throw new SessionError('ENOTFOUND', `no trash entry holds session ${target}`, { details: { id: target } });
}
