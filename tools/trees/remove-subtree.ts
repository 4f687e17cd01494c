import { SessionError, toSessionError } from '../errors.js';
import { throwIfInterrupted } from '../safe-points.js';
import { planDelete, type Blocker, type DeletePlan, type TreeNode } from '../policy/tree-guard.js';
import type { SessionContext } from '../session-context.js';
import { keepLocksFresh, type LockedReason } from '../store/lock.js';
import { withSessionLocks, type SessionLocksCheck } from '../store/subtree-locks.js';
import { diskBytesSync, Trash, type PreservedWork, type TrashSession } from '../store/trash.js';
import type { AuditAction } from '../session-context.js';
import { TrashWriter, type EntryHeader } from './trash-writer.js';
import { indexedSubtreeIds, reconcileIndex, subtreeNodes, type ExtraLinks } from './hierarchy.js';
import { capturePatch, findUnsavedWork, type UnsavedWork } from './work.js';

interface RemoveOptions {
  reason: 'delete' | 'cleanup';
  cascade: boolean;
  /** Running sessions do not block. */
  force: boolean;
  /** Unsaved work in the work trees the sessions own does not block (it stays where it is). */
  discardWork: boolean;
  backup: boolean;
  preserveWork: boolean;
  /** Skip the git work check (cleanup: the sessions it purges are old and go to the trash). */
  checkWork: boolean;
  /** Parent links not in the index yet; computed (and persisted) when absent. */
  links?: ExtraLinks;
  /** The ids to lock first (indexedSubtreeIds with `links`), when the caller has them already. */
  ids?: string[];
  /** A last say under the locks, on fresh records: a reason to keep the subtree, or null. */
  accept?: (nodes: TreeNode[]) => string | null;
  /**
   * The audit line of the move, written (fsynced) once every session is in the trash entry, right
   * before the entry is marked complete: a kill cannot lose it (a kill before `complete` is rolled back
   * by recovery, which writes its own `recover` line).
   */
  audit: (removal: Removal) => { action: AuditAction; details: Record<string, unknown> };
  /** After each session moved, with the number to move. */
  onProgress?: (total: number) => void;
  /** Checked under the locks before anything moves: an aborted signal stops here (EINTERRUPTED). */
  signal?: AbortSignal;
}

export interface Removal {
  nodes: TreeNode[];
  plan: DeletePlan;
  bytes: number;
  entry: string | null;
  work: PreservedWork[];
  /** Unsaved work of owned work trees that `discardWork` let through, left where it is. */
  discarded: UnsavedWork[];
}

const ATTEMPTS = 3;

/**
 * Moves a session and its subtree to the trash as one atomic step (see store/trash.ts for the
 * invariant), then destroys the entry when `backup` is false. Throws EREFUSED with `details.blocked`.
 */
export async function removeSubtree(
  sessions: SessionContext,
  rootId: string,
  options: RemoveOptions,
): Promise<Removal> {
  const links = options.links ?? (await reconcileIndex(sessions, true));
  // The caller's list serves the first attempt only: a later one lists the subtree again.
  let listed = options.ids;
  for (let attempt = 1; ; attempt++) {
    // The locks are taken on what the index lists (no record read); the records are read once, under
    // them. A stale marker only adds a lock; a child that the index did not list yet is found under the
    // locks, and the whole is tried again with it.
    const ids = listed ?? (await indexedSubtreeIds(sessions, rootId, links));
    listed = undefined;
    const locked = new Set(ids);
    const timeout = sessions.settings.lockTimeoutMs;
    const result = await withSessionLocks(
      sessions.store.dir,
      ids,
      timeout,
      async (check) => {
        // Read under the locks: no update can land now, and no child can be added (create holds the parent's lock).
        const nodes = await subtreeNodes(sessions, rootId, links);
        if (!nodes.every((n) => locked.has(n.id))) return undefined;
        const work = await checkWork(nodes, options);
        const plan = planDelete(nodes, {
          cascade: options.cascade,
          force: options.force,
          now: sessions.now(),
          runningMs: sessions.settings.runningMinutes * 60_000,
        });
        refuseIfBlocked(rootId, plan.blocked);
        const kept = options.accept?.(nodes);
        if (kept)
          throw new SessionError('EREFUSED', kept, {
            details: { id: rootId, blocked: [{ id: rootId, reason: kept }] },
          });
        throwIfInterrupted(options.signal, 0, nodes.length);
        return moveToTrash(sessions, nodes, plan, work, options, check);
      },
      options.signal,
    );
    if (result) return result;
    if (attempt >= ATTEMPTS)
      throw new SessionError('ELOCKED', `the subtree of ${rootId} kept changing; try again`, {
        details: { id: rootId, reason: 'changing' satisfies LockedReason },
      });
  }
}

async function checkWork(nodes: TreeNode[], options: RemoveOptions): Promise<UnsavedWork[]> {
  if (!options.checkWork) return [];
  const unsaved = await findUnsavedWork(nodes);
  if (unsaved.length > 0 && !options.discardWork && !options.preserveWork) {
    refuseIfBlocked(nodes[0]?.id ?? '', unsaved.map(workBlocker));
  }
  return unsaved;
}

export function workBlocker(w: UnsavedWork): Blocker {
  return { id: w.sessions.join(','), reason: `unsaved work in its own work tree ${w.dir}: ${w.summary}` };
}

function refuseIfBlocked(id: string, blocked: Blocker[]): void {
  if (blocked.length === 0) return;
  const list = blocked.map((b) => `${b.id} ${b.reason}`).join('; ');
  const work = blocked.some((b) => b.reason.startsWith('unsaved work'));
  const running = blocked.some((b) => b.reason.startsWith('running'));
  const see = [...(running ? ['--force-running'] : []), ...(work ? ['--discard-work', '--preserve-work'] : [])];
  const hint = see.length > 0 ? ` (see ${see.join(', ')})` : '';
  throw new SessionError('EREFUSED', `refusing to delete ${id}: ${list}${hint}`, {
    details: { id, blocked },
  });
}

async function moveToTrash(
  sessions: SessionContext,
  nodes: TreeNode[],
  plan: DeletePlan,
  found: UnsavedWork[],
  options: RemoveOptions,
  check: SessionLocksCheck,
): Promise<Removal> {
  const trash = new Trash(sessions.store.dir);
  const root = nodes[0] as TreeNode;
  const now = sessions.now();
  const entry = trash.newEntryName(now, root.id);
  const order: TrashSession[] = plan.order.map((node) => describe(trash, node));
  const bytes = order.reduce((sum, s) => sum + s.bytes, 0);
  const unsaved = options.preserveWork ? found : [];
  const work = unsaved.map(preserved);
  const discarded = options.preserveWork ? [] : found;
  const removal: Removal = { nodes, plan, bytes, entry: options.backup ? entry : null, work, discarded };
  const header: EntryHeader = {
    entry,
    root: root.id,
    reason: options.reason,
    actor: sessions.actor,
    pid: process.pid,
    deleted_at: new Date(now).toISOString(),
    work,
  };
  await trash.withEntryLock(entry, sessions.settings.lockTimeoutMs, async (checkEntry) => {
    const writer = new TrashWriter(sessions, trash, header);
    const subtree = { root: root.id, order, audit: options.audit(removal) };
    await writer.moveBatch(
      [subtree],
      {
        check,
        checkEntry,
        onSession: () => options.onProgress?.(order.length),
        beforeMoves: async () => {
          for (const [i, w] of unsaved.entries()) {
            const name = work[i]?.patch;
            if (name) await trash.writeWorkFile(entry, name, await capturePatch(w.state));
          }
        },
      },
      true,
    );
    await writer.finish(options.backup);
  });
  return removal;
}

function preserved(w: UnsavedWork, i: number): PreservedWork {
  const { head, branch, upstream, unpushed, untracked, changed } = w.state;
  return {
    dir: w.dir,
    sessions: w.sessions,
    head,
    branch,
    upstream,
    unpushed,
    untracked,
    patch: changed.length > 0 ? `${i + 1}.patch` : null,
  };
}

/** What the manifest keeps of a session: what restore needs (the record itself is in the entry). */
export function describe(trash: Trash, node: TreeNode, bytes?: number): TrashSession {
  return {
    id: node.id,
    parent: node.parent,
    depth: node.depth,
    bytes: bytes ?? diskBytesOf(trash.sessionDir(node.id)),
  };
}

/** A session's size, looked at in a row for a whole subtree under its locks: kept fresh between two. */
function diskBytesOf(dir: string): number {
  keepLocksFresh();
  return diskBytesSync(dir);
}
