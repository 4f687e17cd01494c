// Floor of `restore <root-id> --dir <store>`, undoing what bench/floors/delete.mjs did: the manifest
// read; a lock directory per session and for the parent outside the entry (mkdir, then rmdir); the
// manifest marked restoring (temp, fsync, rename); the audit line (one write, fsync); for each session,
// parents first, its index markers written and its directory renamed back; one fsync of the store; the
// entry destroyed (renamed into `.removing/`, then removed).
import { restoreEntry } from './trash-floor.mjs';

const [store, root] = process.argv.slice(2);
restoreEntry(store, root);
