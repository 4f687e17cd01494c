// Floor of `delete <root-id> --dir <store>`: the least durable file work of moving one subtree into one
// trash entry (bench/floors/trash-floor.mjs): the subtree found through `.index/children/`, each record
// read once; a lock directory per session (mkdir, then rmdir); the entry (mkdir); the manifest (temp,
// fsync, rename); every session renamed in, leaves first; one fsync of the entry's `sessions/` and one
// of the store; the audit line (one write, fsync); the manifest again, complete; the index markers removed.
import path from 'node:path';
import { moveBatch, newEntry, subtree, writeAtomic } from './trash-floor.mjs';

const [store, root] = process.argv.slice(2);
const nodes = subtree(store, root);
const e = newEntry(store, root);
const manifest = { format: 2, entry: e.entry, root, status: 'moving', reason: 'delete', sessions: [], subtrees: [] };
moveBatch(store, e, manifest, [{ root, nodes }]);
writeAtomic(path.join(e.dir, 'manifest.json'), JSON.stringify({ ...manifest, status: 'complete' }));
