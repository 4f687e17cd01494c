import { planDelete, type Blocker, type TreeNode } from '../policy/tree-guard.js';
import type { SessionContext } from '../session-context.js';
import { SessionError } from '../errors.js';
import { diskBytes, Trash } from '../store/trash.js';
import { indexedSubtreeIds, reconcileIndex, subtreeNodes } from './hierarchy.js';
import { recoverTrash } from './recover.js';
import { removeSubtree, workBlocker, type Removal } from './remove-subtree.js';
import { findCheckouts, findUnsavedWork, type UnsavedWork } from './work.js';
import { checkOptions, type OptionKeys } from '../options.js';

export interface DeleteOptions {
  /** Remove the descendants too (default). When false, a session with children is refused. */
  cascade?: boolean;
  /** Both `forceRunning` and `discardWork`. */
  force?: boolean;
  /** Delete even when sessions of the subtree are running. */
  forceRunning?: boolean;
  /** Delete even when a work tree a session owns holds unsaved work (the work tree itself stays as it is). */
  discardWork?: boolean;
  /** Report what would happen; change nothing. */
  dryRun?: boolean;
  /** Keep the subtree in the trash (default); false destroys it. */
  backup?: boolean;
  /** Store the git state of unsaved work in the backup and go ahead. */
  preserveWork?: boolean;
  /** Called as sessions move (the CLI draws a progress bar from it). */
  onProgress?: (progress: { done: number; total: number }) => void;
  /** Aborting it stops the delete if nothing has moved yet (EINTERRUPTED); once moving, it finishes. */
  signal?: AbortSignal;
}

interface DeletedSession {
  id: string;
  depth: number;
  parent: string | null;
  agent_name: string | null;
  phase: string | null;
  last_updated: string | null;
}

export interface DeleteResult {
  id: string;
  dry_run: boolean;
  /** Pre-order (the root first), with depth 0 for the root. */
  removed: DeletedSession[];
  counts_by_depth: Record<string, number>;
  total: number;
  bytes: number;
  /** The trash entry holding the backup, or null (--no-backup, dry run). */
  backup: { entry: string; path: string } | null;
  /** What stops it (dry run; a real delete throws EREFUSED with the same list in `details.blocked`). */
  blocked: Blocker[];
  warnings: string[];
  work: { dir: string; sessions: string[]; summary: string; patch: string | null }[];
  /** The shared checkouts the sessions worked in, for information: they never block a delete. */
  checkouts: { dir: string; sessions: string[]; summary: string }[];
}

/** Deletes a session and its descendants: guarded, atomic, backed up to the trash by default. */
const DELETE_KEYS: OptionKeys<DeleteOptions> = {
  cascade: true,
  force: true,
  forceRunning: true,
  discardWork: true,
  dryRun: true,
  backup: true,
  preserveWork: true,
  onProgress: true,
  signal: true,
};

export async function deleteSession(
  sessions: SessionContext,
  id: string,
  options: DeleteOptions = {},
): Promise<DeleteResult> {
  checkOptions(options, DELETE_KEYS, 'deleteSession');
  const opts = {
    cascade: options.cascade ?? true,
    force: Boolean(options.force || options.forceRunning),
    discardWork: Boolean(options.force || options.discardWork),
    backup: options.backup ?? true,
    preserveWork: options.preserveWork ?? false,
  };
  if (opts.preserveWork && !opts.backup)
    throw new SessionError('EINVALID', '--preserve-work keeps the work in the backup: it cannot go with --no-backup');
  if (options.dryRun) return preview(sessions, id, opts);
  // The index brought up to date once, and the subtree listed once, for the recovery and the removal.
  const links = await reconcileIndex(sessions, true);
  const ids = await indexedSubtreeIds(sessions, id, links).catch(() => [id]);
  const finished = await finishInterrupted(sessions, ids);
  // Audited (fsynced) under the locks before the entry is complete: a kill cannot leave the delete unrecorded.
  const audit = (moved: Removal) => ({
    action: 'delete' as const,
    details: {
      root: id,
      counts_by_depth: summary(id, moved.nodes, false).counts_by_depth,
      backup: moved.entry,
      forced: moved.plan.forced,
      preserved_work: moved.work.map((w) => w.dir),
      ...(moved.discarded.length > 0 ? { discarded_work: moved.discarded.map((w) => w.dir) } : {}),
    },
  });
  let moved = 0;
  const removal = await removeSubtree(sessions, id, {
    ...opts,
    links,
    // What the recovery put back (if anything) is listed again.
    ...(finished.length === 0 ? { ids } : {}),
    reason: 'delete',
    checkWork: true,
    audit,
    onProgress: (total) => options.onProgress?.({ done: ++moved, total }),
    signal: options.signal,
  });
  const trash = new Trash(sessions.store.dir);
  const checkouts = await findCheckouts(removal.nodes);
  const result: DeleteResult = {
    ...summary(id, removal.nodes, false),
    bytes: removal.bytes,
    backup: removal.entry ? { entry: removal.entry, path: trash.entryDir(removal.entry) } : null,
    blocked: [],
    warnings: [
      ...finished,
      ...removal.plan.warnings,
      ...removal.discarded.map(
        (w) => `unsaved work in ${w.dir} (${w.summary}) was left there because of --discard-work`,
      ),
    ],
    work: removal.work.map((w) => ({
      dir: w.dir,
      sessions: w.sessions,
      summary:
        `HEAD ${w.head ?? '-'} on ${w.branch ?? '(detached)'}, ` +
        `${w.untracked.length} untracked, ${w.unpushed} unpushed`,
      patch: w.patch && removal.entry ? trash.workFilePath(removal.entry, w.patch) : null,
    })),
    checkouts: checkouts.map(brief),
  };
  return result;
}

/**
 * A delete of this subtree that was killed part-way left a `moving` entry holding its lower levels:
 * rolled back first, so that running the delete again takes the whole subtree into one entry.
 */
async function finishInterrupted(sessions: SessionContext, ids: string[]): Promise<string[]> {
  const recovered = await recoverTrash(sessions, { touching: new Set(ids) });
  return recovered.map(
    (r) =>
      `the trash entry ${r.entry} of an interrupted ${r.status === 'moving' ? 'delete' : 'restore'} ` +
      `held ${r.ids.length} of these sessions: ${r.action}`,
  );
}

async function preview(
  sessions: SessionContext,
  id: string,
  opts: { cascade: boolean; force: boolean; discardWork: boolean; preserveWork: boolean },
): Promise<DeleteResult> {
  const nodes = await subtreeNodes(sessions, id);
  const plan = planDelete(nodes, {
    ...opts,
    now: sessions.now(),
    runningMs: sessions.settings.runningMinutes * 60_000,
  });
  const unsaved = await findUnsavedWork(nodes);
  const trash = new Trash(sessions.store.dir);
  let bytes = 0;
  for (const node of nodes) bytes += await diskBytes(trash.sessionDir(node.id));
  const blocked = [...plan.blocked];
  if (!opts.discardWork && !opts.preserveWork) blocked.push(...unsaved.map(workBlocker));
  return {
    ...summary(id, nodes, true),
    bytes,
    backup: null,
    blocked,
    warnings: plan.warnings.map((w) => w.replace(' were removed', ' would be removed')),
    work: unsaved.map((w) => ({ ...brief(w), patch: null })),
    checkouts: (await findCheckouts(nodes)).map(brief),
  };
}

function brief(w: UnsavedWork) {
  return { dir: w.dir, sessions: w.sessions, summary: w.summary };
}

function summary(id: string, nodes: TreeNode[], dryRun: boolean) {
  const counts: Record<string, number> = {};
  for (const n of nodes) counts[n.depth] = (counts[n.depth] ?? 0) + 1;
  return {
    id,
    dry_run: dryRun,
    removed: nodes.map((n) => ({
      id: n.id,
      depth: n.depth,
      parent: n.parent,
      agent_name: n.record?.agent_name ?? null,
      phase: n.record?.phase ?? null,
      last_updated: n.record?.last_updated ?? null,
    })),
    counts_by_depth: counts,
    total: nodes.length,
  };
}
