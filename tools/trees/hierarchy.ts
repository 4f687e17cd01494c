import { isSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import type { TreeNode } from '../policy/tree-guard.js';
import { checkFilter, sessionSelection, summarize, type ListFilter, type SessionSummary } from '../policy/selection.js';
import { compareCreation, type SessionRecord } from '../record.js';
import type { ListResult, SessionContext } from '../session-context.js';
import { ChildrenIndex } from '../store/children-index.js';
import { keepLocksFresh } from '../store/lock.js';
import { notFound } from '../store/store.js';

export type { TreeNode } from '../policy/tree-guard.js';

/** Parent links the index does not hold yet, found by reading only the unindexed records. */
export type ExtraLinks = Map<string, string[]>;

/**
 * Brings the children index up to date with the store: sessions without an index marker are read
 * and linked. `persist` writes their markers (mutating commands); read-only commands keep them in memory.
 */
export async function reconcileIndex(sessions: SessionContext, persist: boolean): Promise<ExtraLinks> {
  const index = new ChildrenIndex(sessions.store.dir);
  const extra: ExtraLinks = new Map();
  for (const id of await index.unindexed(sessions.store.ids())) {
    const record = await sessions.store.read(id).catch(() => undefined);
    if (!record) continue;
    const parent = record.parent_session_id;
    if (parent) extra.get(parent)?.push(id) ?? extra.set(parent, [id]);
    if (persist) await index.add(parent, id);
  }
  return extra;
}

/** The verified children of `id` (a marker whose record is gone or names another parent is ignored). */
async function childNodes(sessions: SessionContext, id: string, depth: number, extra: ExtraLinks): Promise<TreeNode[]> {
  const index = new ChildrenIndex(sessions.store.dir);
  return verifiedChildren(sessions, id, [...new Set([...(await index.childIds(id)), ...(extra.get(id) ?? [])])], depth);
}

/** Of the names listed under `id`, the children whose record says so, oldest first (unreadable ones kept). */
function verifiedChildren(sessions: SessionContext, id: string, names: string[], depth: number): TreeNode[] {
  const nodes: TreeNode[] = [];
  for (const name of names) {
    // Read under the locks of a subtree: hundreds of reads in a row keep them fresh.
    keepLocksFresh();
    const record = readLenientSync(sessions, name);
    if (record === undefined) continue;
    if (record !== null && record.parent_session_id !== id) continue;
    nodes.push({ id: name, parent: id, depth, record });
  }
  return nodes.sort(byCreation);
}

/** The session and its whole subtree, depth-first pre-order (root first, depth 0). ENOTFOUND for no root. */
export async function subtreeNodes(sessions: SessionContext, id: string, extra?: ExtraLinks): Promise<TreeNode[]> {
  assertValidId(id);
  const root = await readLenient(sessions, id);
  if (root === undefined) throw notFound(id);
  const links = extra ?? (await reconcileIndex(sessions, false));
  const top: TreeNode = { id, parent: root?.parent_session_id ?? null, depth: 0, record: root };
  const kids = await walkLevels(sessions.store.dir, id, links, (parent, names, depth) =>
    verifiedChildren(sessions, parent, names, depth),
  );
  return preOrder(top, kids);
}

/**
 * The ids the index (and `extra`) lists below `id`, the root first, without reading any record: a
 * superset of the verified subtree (a stale marker adds a session that is not a child), for taking the
 * locks before the records are read under them. ENOTFOUND when `id` has no session directory.
 */
export async function indexedSubtreeIds(sessions: SessionContext, id: string, extra: ExtraLinks): Promise<string[]> {
  assertValidId(id);
  if (!sessions.store.has(id)) throw notFound(id);
  const kids = await walkLevels(sessions.store.dir, id, extra, (_parent, names) => names.map((name) => ({ id: name })));
  return preOrder({ id }, kids).map((n) => n.id);
}

/**
 * Breadth first, one level at a time, the child lists of a level read together (a few readdirs in
 * flight instead of one round trip per session). `children` turns a parent's names into its nodes.
 * A hand-edited parent cycle must not loop forever: a session is taken once.
 */
async function walkLevels<N extends { id: string }>(
  storeDir: string,
  rootId: string,
  extra: ExtraLinks,
  children: (parent: string, names: string[], depth: number) => N[],
): Promise<Map<string, N[]>> {
  const index = new ChildrenIndex(storeDir);
  const kids = new Map<string, N[]>();
  const seen = new Set([rootId]);
  let level = [rootId];
  for (let depth = 1; level.length > 0; depth++) {
    const next: string[] = [];
    for (let at = 0; at < level.length; at += LEVEL_READS) {
      const parents = level.slice(at, at + LEVEL_READS);
      const lists = await Promise.all(parents.map((p) => index.childIds(p)));
      for (const [i, parent] of parents.entries()) {
        const names = [...new Set([...(lists[i] as string[]), ...(extra.get(parent) ?? [])])];
        const nodes = children(parent, names, depth).filter((n) => !seen.has(n.id));
        for (const n of nodes) seen.add(n.id);
        kids.set(parent, nodes);
        next.push(...nodes.map((n) => n.id));
      }
    }
    level = next;
  }
  return kids;
}

/** Child lists read at once by walkLevels. */
const LEVEL_READS = 32;

function preOrder<N extends { id: string }>(root: N, kids: Map<string, N[]>): N[] {
  const out: N[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop() as N;
    out.push(node);
    const below = kids.get(node.id);
    if (below) for (let i = below.length - 1; i >= 0; i--) stack.push(below[i] as N);
  }
  return out;
}

export interface DescendantSummary extends SessionSummary {
  depth: number;
}

/** Direct children of a session, oldest first. */
export async function children(sessions: SessionContext, id: string): Promise<SessionSummary[]> {
  assertValidId(id);
  if (!(await sessions.store.read(id))) throw notFound(id);
  const nodes = await childNodes(sessions, id, 1, await reconcileIndex(sessions, false));
  return nodes.filter((n) => n.record).map((n) => summarize(n.record as SessionRecord));
}

export async function countChildren(sessions: SessionContext, id: string): Promise<number> {
  return (await children(sessions, id)).length;
}

/** Every session below `id`, depth-first with its depth (1 for children); unreadable records are left out. */
export async function descendants(sessions: SessionContext, id: string): Promise<DescendantSummary[]> {
  const nodes = (await subtreeNodes(sessions, id)).slice(1);
  return nodes.filter((n) => n.record).map((n) => ({ ...summarize(n.record as SessionRecord), depth: n.depth }));
}

export interface TreeRow extends SessionSummary {
  depth: number;
  /** True for a session whose parent no longer exists. */
  orphan: boolean;
}

/** The tree under `id`, or the forest of the whole store (roots and orphans, newest last). */
export async function tree(sessions: SessionContext, id?: string): Promise<TreeRow[]> {
  if (id !== undefined) {
    const nodes = await subtreeNodes(sessions, id);
    const rootParent = nodes[0]?.parent ?? null;
    const orphan = rootParent !== null && (await readLenient(sessions, rootParent)) === undefined;
    return nodes
      .filter((n) => n.record)
      .map((n) => ({ ...summarize(n.record as SessionRecord), depth: n.depth, orphan: n.depth === 0 && orphan }));
  }
  // Only what a row shows is kept of each record: a large store's records do not fit in memory at once.
  const ids = sessions.store.ids();
  const summaries: SessionSummary[] = [];
  sessions.store.scanEach((record) => void summaries.push(summarize(record)), ids);
  return forest(summaries, new Set(ids));
}

/**
 * Rows of every tree in `records`, pre-order. `present` are the ids in the store (readable or not).
 * Each summary becomes its row (depth and orphan added to it, not copied: 100,000 of them in a store).
 */
function forest(records: SessionSummary[], present: Set<string>): TreeRow[] {
  const kids = new Map<string, SessionSummary[]>();
  const byId = new Map(records.map((r) => [r.agent_id, r]));
  for (const r of records) {
    const parent = r.parent_session_id;
    if (parent && byId.has(parent)) kids.get(parent)?.push(r) ?? kids.set(parent, [r]);
  }
  const rows: TreeRow[] = [];
  const seen = new Set<string>();
  const walk = (roots: SessionSummary[]) => {
    const stack = roots.map((r) => ({ r, depth: 0 })).reverse();
    while (stack.length > 0) {
      const { r, depth } = stack.pop() as { r: SessionSummary; depth: number };
      if (seen.has(r.agent_id)) continue;
      seen.add(r.agent_id);
      const parent = r.parent_session_id;
      const row = r as TreeRow;
      row.depth = depth;
      row.orphan = depth === 0 && parent !== null && !present.has(parent);
      rows.push(row);
      const children = kids.get(r.agent_id);
      if (!children) continue;
      children.sort(byCreatedAt);
      for (let i = children.length - 1; i >= 0; i--) stack.push({ r: children[i] as SessionSummary, depth: depth + 1 });
    }
  };
  walk(records.filter((r) => !r.parent_session_id || !byId.has(r.parent_session_id)).sort(byCreatedAt));
  // Whatever is left sits on a parent cycle: shown as roots rather than hidden.
  walk(records.filter((r) => !seen.has(r.agent_id)).sort(byCreatedAt));
  return rows;
}

/** Sessions whose parent no longer exists, as `list` shows them. */
export async function listOrphans(sessions: SessionContext, filter: ListFilter = {}): Promise<ListResult> {
  checkFilter(filter, 'listOrphans');
  const ids = sessions.store.ids();
  const present = new Set(ids);
  const selection = sessionSelection(filter, sessions.now(), sessions.rules);
  const problems = sessions.store.scanEach((r) => {
    if (r.parent_session_id !== null && !present.has(r.parent_session_id)) selection.add(r);
  }, ids);
  return { sessions: selection.result(), problems };
}

/** The record, null when it exists but cannot be read (corrupt, newer format), undefined when absent. */
async function readLenient(sessions: SessionContext, id: string): Promise<SessionRecord | null | undefined> {
  try {
    return await sessions.store.read(id);
  } catch (err) {
    if (isSessionError(err, 'ECORRUPT') || isSessionError(err, 'EVERSION')) return null;
    throw err;
  }
}

/** readLenient without a turn of the event loop per record (Store.read is synchronous underneath). */
function readLenientSync(sessions: SessionContext, id: string): SessionRecord | null | undefined {
  try {
    return sessions.store.readSync(id);
  } catch (err) {
    if (isSessionError(err, 'ECORRUPT') || isSessionError(err, 'EVERSION')) return null;
    throw err;
  }
}

function byCreatedAt(a: SessionSummary, b: SessionSummary): number {
  return compareCreation(a.created_at, a.agent_id, b.created_at, b.agent_id);
}

function byCreation(a: TreeNode, b: TreeNode): number {
  return compareCreation(a.record?.created_at ?? '', a.id, b.record?.created_at ?? '', b.id);
}
