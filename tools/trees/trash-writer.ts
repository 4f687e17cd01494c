import { SessionError, toSessionError } from '../errors.js';
import type { AuditAction, SessionContext } from '../session-context.js';
import { ChildrenIndex } from '../store/children-index.js';
import type { SessionLocksCheck } from '../store/subtree-locks.js';
import { Trash, TRASH_FORMAT, type TrashManifest, type TrashSession, type TrashSubtree } from '../store/trash.js';

/** Index markers removed (or written) in one synchronous run: a few milliseconds. */
export const MARKER_SLICE = 256;

/** A subtree ready to move: its sessions in move order (leaves first), and the audit line of its move. */
export interface PendingSubtree {
  root: string;
  reason?: string;
  order: TrashSession[];
  audit: { action: AuditAction; details: Record<string, unknown> };
}

/** What every manifest of the entry says besides its subtrees and status. */
export type EntryHeader = Omit<TrashManifest, 'format' | 'status' | 'sessions' | 'subtrees' | 'committed' | 'bytes'>;

interface BatchHooks {
  /** The locks of the batch's sessions (`check(id)` before each move) and of the entry. */
  check: SessionLocksCheck;
  checkEntry: () => void;
  /** True: move no further subtree; commit those moved (a SIGINT between two subtrees). */
  stop?: () => boolean;
  /** After each subtree moved, with its number of sessions. */
  onMoved?: (subtree: PendingSubtree) => void;
  /** After each session moved (a progress bar). */
  onSession?: () => void;
  /** Between writing the manifest and the first move (delete's preserved work). */
  beforeMoves?: () => Promise<void>;
}

/**
 * Writes one trash entry for a whole command run (one cleanup, one delete), batch after batch, under
 * the entry's lock (held by the caller from before the entry exists until `finish`). Each batch:
 *   1. the manifest lists the batch's subtrees after the committed ones (`moving`, `committed: k`);
 *   2. every session is renamed in, subtree by subtree, leaves first;
 *   3. one fsync of the entry's `sessions/` and one of the store make the renames durable;
 *   4. the batch's audit lines, in one write and one fsync;
 *   5. the manifest again, the batch committed (`committed: k + moved`);
 *   6. the index markers of the moved sessions are removed (a cache: stale markers are ignored).
 * The last batch's step 5 marks the entry complete (else `finish` does). A kill before 5 leaves the
 * batch's subtrees past `committed`: recovery moves them back (and says so in the trail if step 4 had
 * run); the committed ones stay, audited.
 */
export class TrashWriter {
  readonly trash: Trash;
  readonly entry: string;
  private readonly sessions: SessionContext;
  private readonly header: EntryHeader;
  /**
   * What the manifest lists, in move order: the committed subtrees, then (during a batch) the batch's.
   * Appended to and cut back in place: a cleanup of 100,000 sessions writes its manifest twice a batch,
   * and a copy of these lists each time was most of its memory.
   */
  private readonly listedSubtrees: TrashSubtree[] = [];
  private readonly listedSessions: TrashSession[] = [];
  /** How many of `listedSubtrees` (and of `listedSessions`) are committed. */
  private committed = 0;
  private committedSessions = 0;
  private started = false;
  /** A batch could not be undone: its sessions wait in the entry, which must stay `moving` for recovery. */
  private stuck = false;
  private complete = false;

  constructor(sessions: SessionContext, trash: Trash, header: EntryHeader) {
    this.sessions = sessions;
    this.trash = trash;
    this.entry = header.entry;
    this.header = header;
  }

  /** Moves a batch (see the class). Returns the subtrees moved; on failure, undoes the batch and throws. */
  async moveBatch(batch: PendingSubtree[], hooks: BatchHooks, final = false): Promise<PendingSubtree[]> {
    if (batch.length === 0) return [];
    for (const t of batch) {
      this.listedSubtrees.push(subtreeOf(t));
      for (const s of t.order) this.listedSessions.push(s);
    }
    try {
      await this.write('moving');
    } catch (err) {
      this.cutToCommitted();
      throw err;
    }
    const movedIds: string[] = [];
    const moved: PendingSubtree[] = [];
    let audited = false;
    /** Subtrees of this batch counted as committed (undone with the batch if its last write fails). */
    let committed = 0;
    try {
      await hooks.beforeMoves?.();
      for (const t of batch) {
        if (hooks.stop?.()) break;
        for (const s of t.order) {
          hooks.check(s.id);
          hooks.checkEntry();
          await this.trash.moveIn(this.entry, s.id);
          movedIds.push(s.id);
          hooks.onSession?.();
        }
        moved.push(t);
        hooks.onMoved?.(t);
      }
      if (moved.length > 0) {
        await this.trash.syncMoves(this.entry);
        await this.sessions.auditBatch(
          moved.map((t) => ({
            action: t.audit.action,
            ids: t.order.map((s) => s.id).reverse(),
            details: t.audit.details,
          })),
        );
        audited = true;
      }
      hooks.check();
      // The batch's subtrees not moved (a stop between two) leave the lists.
      committed = moved.length;
      this.committed += committed;
      this.committedSessions += moved.reduce((sum, t) => sum + t.order.length, 0);
      this.cutToCommitted();
      // The last batch commits by marking the entry complete: one manifest write less, and a failure
      // of that write is undone like any other.
      await this.write(final ? 'complete' : 'moving');
      this.complete = final;
    } catch (err) {
      this.committed -= committed;
      this.committedSessions -= moved.slice(0, committed).reduce((sum, t) => sum + t.order.length, 0);
      this.cutToCommitted();
      throw await this.undo(movedIds, audited, err);
    }
    // In slices, a turn of the event loop between them: the locks held stay fresh meanwhile.
    const index = new ChildrenIndex(this.trash.storeDir);
    const links = moved.flatMap((t) => t.order.map((s) => ({ parent: s.parent, child: s.id })));
    for (let at = 0; at < links.length; at += MARKER_SLICE) {
      if (at > 0) await new Promise((resolve) => setImmediate(resolve));
      index.removeMany(links.slice(at, at + MARKER_SLICE));
    }
    return moved;
  }

  /**
   * The entry complete, or destroyed when nothing was committed (or `keep` is false: --no-backup).
   * Left as it is when a failed batch could not be undone (recovery's work).
   */
  async finish(keep: boolean): Promise<void> {
    if (!this.started || this.stuck) return;
    if (this.committed > 0 && !this.complete) await this.write('complete');
    if (this.committed === 0 || !keep) await this.trash.destroy(this.entry);
  }

  /** Drops what the lists hold past the committed subtrees. */
  private cutToCommitted(): void {
    this.listedSubtrees.length = this.committed;
    this.listedSessions.length = this.committedSessions;
  }

  /** The manifest of what the lists hold now (the arrays themselves: written before they change again). */
  private async write(status: TrashManifest['status']): Promise<void> {
    const manifest: TrashManifest = {
      format: TRASH_FORMAT,
      ...this.header,
      status,
      bytes: this.listedSessions.reduce((sum, s) => sum + s.bytes, 0),
      sessions: this.listedSessions,
      subtrees: this.listedSubtrees,
      committed: status === 'moving' ? this.committed : this.listedSubtrees.length,
    };
    if (!this.started) {
      await this.trash.begin(manifest);
      this.started = true;
    } else await this.trash.writeManifest(manifest);
  }

  /**
   * A batch that failed part-way (a full disk, a lost lock) is undone at once, parents first, and the
   * manifest set back to the committed subtrees, so that no session stays hidden in the entry. If that
   * fails too, the entry stays `moving` for recovery (cleanup or doctor --repair), and the error says so.
   */
  private async undo(moved: string[], audited: boolean, err: unknown) {
    const cause = toSessionError(err, `moving sessions to the trash entry ${this.entry}`);
    try {
      for (const id of [...moved].reverse()) await this.trash.moveOut(this.entry, id);
      if (this.committed > 0) await this.write('moving');
      else {
        await this.trash.destroy(this.entry);
        this.started = false;
      }
      // The move was audited and did not last: the trail says so.
      if (audited && moved.length > 0)
        await this.sessions.audit('recover', moved, { entries: [{ entry: this.entry, action: 'rolled back' }] });
      return cause;
    } catch {
      this.stuck = true;
      // Recovered by another process meanwhile (this one was frozen past its locks' staleness).
      if (!this.trash.exists(this.entry)) return cause;
      const message =
        `${cause.message}; ${moved.length} session(s) wait in the trash entry ${this.entry}: ` +
        'run `agent-session doctor --repair` to put them back';
      return new SessionError(cause.code, message, {
        cause: err,
        details: { ...cause.details, entry: this.entry, hidden: moved },
      });
    }
  }
}

function subtreeOf(t: PendingSubtree): TrashSubtree {
  return { root: t.root, ...(t.reason === undefined ? {} : { reason: t.reason }), sessions: t.order.length };
}
