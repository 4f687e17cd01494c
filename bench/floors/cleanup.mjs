// Floor of `cleanup --hours 1 --dir <store>` when every session is old and finished: every record read
// and parsed once (the roots are those without a parent); the subtrees found through `.index/children/`;
// one trash entry for the whole run, filled in batches (32 sessions, doubling up to 2,048) as
// bench/floors/trash-floor.mjs's moveBatch does (per batch: a lock directory per session, the manifest
// written, the renames, two directory fsyncs, one audit write and fsync, the manifest again, the index
// markers removed); the manifest marked complete; the closing audit line.
import path from 'node:path';
import {
  appendSynced,
  mkdirSync,
  moveBatch,
  names,
  newEntry,
  readRecord,
  rmdirSync,
  writeAtomic,
} from './trash-floor.mjs';

const [store] = process.argv.slice(2);
// Session directories only: the audit trail (audit.jsonl and its rotated audit.<n>.jsonl) sits beside them.
const ids = names(store).filter((n) => !n.startsWith('.') && !n.endsWith('.jsonl'));
const records = new Map(ids.map((id) => [id, readRecord(store, id)]));
const children = new Map();
for (const [id, r] of records) {
  const parent = r.parent_session_id;
  if (parent && records.has(parent)) children.set(parent, [...(children.get(parent) ?? []), id]);
}
const roots = ids
  .filter((id) => !records.get(id).parent_session_id || !records.has(records.get(id).parent_session_id))
  .sort();
const tree = (root) => {
  const out = [];
  const stack = [{ id: root, parent: records.get(root).parent_session_id ?? null, depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop();
    out.push(node);
    const kids = names(path.join(store, '.index', 'children', node.id))
      .sort()
      .reverse();
    for (const kid of kids) stack.push({ id: kid, parent: node.id, depth: node.depth + 1 });
  }
  return out;
};
mkdirSync(path.join(store, '.locks'), { recursive: true });
mkdirSync(path.join(store, '.locks', '.cleanup.lock'));
const e = newEntry(store, roots[0]);
mkdirSync(path.join(store, '.locks', `.trash-${e.entry}.lock`));
const manifest = {
  format: 2,
  entry: e.entry,
  root: roots[0],
  status: 'moving',
  reason: 'cleanup',
  sessions: [],
  subtrees: [],
};
let size = 32;
for (let i = 0; i < roots.length;) {
  const batch = [];
  for (let n = 0; i < roots.length; i++) {
    const nodes = tree(roots[i]);
    if (batch.length > 0 && n + nodes.length > size) break;
    batch.push({ root: roots[i], nodes });
    n += nodes.length;
  }
  size = Math.min(size * 2, 2048);
  moveBatch(store, e, manifest, batch);
}
writeAtomic(path.join(e.dir, 'manifest.json'), JSON.stringify({ ...manifest, status: 'complete' }));
appendSynced(path.join(store, 'audit.jsonl'), [{ time: new Date().toISOString(), action: 'cleanup', ids: [] }]);
rmdirSync(path.join(store, '.locks', `.trash-${e.entry}.lock`));
rmdirSync(path.join(store, '.locks', '.cleanup.lock'));
