// Shared by the cleanup, delete and restore floors: the durable file work of moving whole subtrees into
// one trash entry and back, with plain node:fs and none of agent-session's code. What each step writes,
// renames and fsyncs is listed where it is done; the entry and manifest layout is the floors' own.
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  rmdirSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

export function names(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export function fsyncDir(dir) {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Temp file, write, fsync, rename. */
export function writeAtomic(file, text) {
  const temp = `${file}.${process.pid}.${randomBytes(3).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/** One write of every line, then an fsync. */
export function appendSynced(file, lines) {
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The lock directories of `ids` (one mkdir each), removed by `unlock`. */
export function lock(store, ids) {
  mkdirSync(path.join(store, '.locks'), { recursive: true });
  for (const id of [...ids].sort()) mkdirSync(path.join(store, '.locks', `${id}.lock`));
}

export function unlock(store, ids) {
  for (const id of ids) rmdirSync(path.join(store, '.locks', `${id}.lock`));
}

/** Each session's record read and parsed once; its parent from the record. */
export function readRecord(store, id) {
  return JSON.parse(readFileSync(path.join(store, id, 'state.json'), 'utf8'));
}

/** The subtree of `root` through `.index/children/`, pre-order (root first), with each record read once. */
export function subtree(store, root) {
  const out = [];
  const stack = [{ id: root, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop();
    const record = readRecord(store, node.id);
    out.push({ ...node, parent: record.parent_session_id ?? null });
    const kids = names(path.join(store, '.index', 'children', node.id)).sort();
    for (const kid of kids.reverse()) stack.push({ id: kid, parent: node.id, depth: node.depth + 1 });
  }
  return out;
}

export function newEntry(store, root) {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const entry = `${stamp}-${randomBytes(2).toString('hex')}-${root}`;
  const dir = path.join(store, '.trash', entry);
  mkdirSync(path.join(dir, 'sessions'), { recursive: true });
  return { entry, dir };
}

/**
 * One batch of subtrees into the entry: the manifest (temp, fsync, rename) lists them; each session is
 * renamed in, leaves first; one fsync of the entry's `sessions/` and one of the store; one audit write
 * and fsync; the manifest again; then the index markers of the moved sessions are removed.
 */
export function moveBatch(store, e, manifest, subtrees) {
  const ids = subtrees.flatMap((t) => t.nodes.map((n) => n.id));
  lock(store, ids);
  const pending = subtrees.map((t) => ({ root: t.root, order: [...t.nodes].reverse() }));
  const sessions = [
    ...manifest.sessions,
    ...pending.flatMap((t) => t.order.map((n) => ({ id: n.id, parent: n.parent, depth: n.depth }))),
  ];
  const listed = [...manifest.subtrees, ...pending.map((t) => ({ root: t.root, sessions: t.order.length }))];
  writeAtomic(path.join(e.dir, 'manifest.json'), JSON.stringify({ ...manifest, sessions, subtrees: listed }));
  for (const t of pending)
    for (const n of t.order) renameSync(path.join(store, n.id), path.join(e.dir, 'sessions', n.id));
  fsyncDir(path.join(e.dir, 'sessions'));
  fsyncDir(store);
  appendSynced(
    path.join(store, 'audit.jsonl'),
    pending.map((t) => ({
      time: new Date().toISOString(),
      action: 'cleanup',
      ids: t.order.map((n) => n.id).reverse(),
    })),
  );
  manifest.sessions = sessions;
  manifest.subtrees = listed;
  manifest.committed = listed.length;
  writeAtomic(path.join(e.dir, 'manifest.json'), JSON.stringify(manifest));
  for (const t of pending)
    for (const n of t.order) {
      rmSync(path.join(store, '.index', 'ids', n.id), { force: true });
      if (n.parent) rmSync(path.join(store, '.index', 'children', n.parent, n.id), { force: true });
      try {
        rmdirSync(path.join(store, '.index', 'children', n.id));
      } catch {}
    }
  unlock(store, ids);
}

/** Puts the sessions of the floor's entry for `root` back, parents first, and destroys the entry. */
export function restoreEntry(store, root) {
  const entry = names(path.join(store, '.trash')).find((n) => n.endsWith(`-${root}`));
  const dir = path.join(store, '.trash', entry);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const order = [...manifest.sessions].reverse();
  const ids = order.map((s) => s.id);
  const outside = [...new Set(order.map((s) => s.parent).filter((p) => p && !ids.includes(p)))];
  lock(store, [...ids, ...outside]);
  writeAtomic(path.join(dir, 'manifest.json'), JSON.stringify({ ...manifest, status: 'restoring' }));
  appendSynced(path.join(store, 'audit.jsonl'), [{ time: new Date().toISOString(), action: 'restore', ids }]);
  for (const s of order) {
    if (s.parent) {
      mkdirSync(path.join(store, '.index', 'children', s.parent), { recursive: true });
      writeFileSync(path.join(store, '.index', 'children', s.parent, s.id), '');
    }
    writeFileSync(path.join(store, '.index', 'ids', s.id), '');
    renameSync(path.join(dir, 'sessions', s.id), path.join(store, s.id));
  }
  fsyncDir(store);
  mkdirSync(path.join(store, '.removing'), { recursive: true });
  const parking = path.join(store, '.removing', `trash-${entry}`);
  renameSync(dir, parking);
  rmSync(parking, { recursive: true, force: true });
  unlock(store, [...ids, ...outside]);
}

export { mkdirSync, rmdirSync, unlinkSync };
