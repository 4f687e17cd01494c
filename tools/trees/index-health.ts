import type { SessionRecord } from '../record.js';
import type { SessionContext } from '../session-context.js';
import { ChildrenIndex } from '../store/children-index.js';
import { reconcileIndex } from './hierarchy.js';

export interface IndexCheck {
  /** Parent links in the records that the index lacks (while it claims to cover the child). */
  missing: { parent: string; child: string }[];
  /** Markers whose child is absent or names another parent (harmless; removed by a rebuild). */
  stale: { parent: string; child: string }[];
  /** Sessions the index does not cover yet (found by every lookup; indexed by the next change). */
  unindexed: string[];
}

/** The parent link of a record: all the index check needs of it. */
export type ParentLink = Pick<SessionRecord, 'agent_id' | 'parent_session_id'>;

/**
 * Compares the children index with the records (for doctor). Reads every record once, unless the caller
 * has read them already: `known` gives their parent links and the store's ids.
 */
export async function checkIndex(
  sessions: SessionContext,
  known?: { records: ParentLink[]; ids: string[] },
): Promise<IndexCheck> {
  const index = new ChildrenIndex(sessions.store.dir);
  const records = known?.records ?? sessions.store.scan().records;
  const links = new Set((await index.allLinks()).map(([p, c]) => `${p}/${c}`));
  const unindexed = new Set(await index.unindexed(known?.ids ?? sessions.store.ids()));
  const truth = new Set(records.filter((r) => r.parent_session_id).map((r) => `${r.parent_session_id}/${r.agent_id}`));
  const split = (key: string) => ({ parent: key.slice(0, key.indexOf('/')), child: key.slice(key.indexOf('/') + 1) });
  return {
    missing: [...truth].filter((k) => !links.has(k) && !unindexed.has(split(k).child)).map(split),
    stale: [...links].filter((k) => !truth.has(k)).map(split),
    unindexed: [...unindexed],
  };
}

/** Drops the children index and writes it again from the records (doctor --repair). */
export async function rebuildIndex(sessions: SessionContext): Promise<{ indexed: number }> {
  await new ChildrenIndex(sessions.store.dir).clear();
  await reconcileIndex(sessions, true);
  return { indexed: (await new ChildrenIndex(sessions.store.dir).indexedIds()).length };
}
