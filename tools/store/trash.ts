/**
 * The trash: where delete and cleanup move whole subtrees before anything is destroyed.
 *
 * On disk, inside the store:
 *   .trash/<entry>/manifest.json        written (atomically) BEFORE the first move; see TrashManifest
 *   .trash/<entry>/sessions/<id>/       a session directory, moved here unchanged by rename(2)
 *   .trash/<entry>/work/<n>.patch       preserved uncommitted changes (delete --preserve-work)
 *   .locks/.trash-<entry>.lock          held by the process moving sessions in or out of the entry
 *   .removing/<name>                    an entry (or session) being destroyed; garbage once there
 * `<entry>` is `<UTC yyyymmdd-hhmmss>-<4 hex>-<root id>`.
 *
 * One entry per command run: a delete's holds one subtree, a cleanup's every subtree it purged
 * (`subtrees`, each the next `sessions` of the list), filled batch by batch (trees/trash-writer.ts).
 *
 * Crash-safety invariant: sessions move leaves first (every child before its parent), so at any instant
 * the moved set is closed under descendants: no live session ever has its parent in the trash. An entry
 * whose status is not `complete` and whose lock is free belongs to a process that died: recovery moves
 * back, parents first, what had not taken effect (a delete that was never acknowledged did not happen;
 * of a cleanup's entry, the subtrees past `committed`; a restore that was cut short completes). Each
 * session is therefore fully live, or fully in a complete entry or a committed subtree of one.
 */
import { lstatSync, readdirSync, renameSync, rmdirSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { parseJson } from '../json.js';
import { writeFileAtomic } from './atomic.js';
import { isLockHeld, keepLocksFresh, withLock } from './lock.js';
import { assertArea, decodeUtf8, ensureAreaSync, readRegularFileSync } from './regular-file.js';
import { areaLockPath } from './subtree-locks.js';
import { randomHex } from '../random.js';
import { faultPoint } from './fault-points.js';
import { processRuns } from './pid.js';
import { ensureStoreSync } from './store-root.js';

const TRASH_DIR = '.trash';
export const REMOVING_DIR = '.removing';
/** 2: the manifest lists `subtrees` (one entry holds every subtree of one cleanup) and `committed`. */
export const TRASH_FORMAT = 2;
/** A manifest lists the sessions of one command run; one past this size was not written by the store. */
const MANIFEST_MAX_BYTES = 256 * 1024 * 1024;

/** moving (delete in progress) → complete → restoring → restored (kept only for preserved work) or destroyed. */
type TrashStatus = 'moving' | 'complete' | 'restoring' | 'restored';

export interface TrashSession {
  id: string;
  parent: string | null;
  depth: number;
  /** Format 1 only: the record, which the entry holds anyway, says these. */
  phase?: string | null;
  agent_name?: string | null;
  last_updated?: string | null;
  bytes: number;
}

/** One subtree of an entry: its sessions are the next `sessions` of the manifest's list. */
export interface TrashSubtree {
  root: string;
  /** Why cleanup took it (absent for a delete). */
  reason?: string;
  sessions: number;
}

export interface PreservedWork {
  dir: string;
  sessions: string[];
  head: string | null;
  branch: string | null;
  upstream: string | null;
  unpushed: number;
  untracked: string[];
  /** File name under `<entry>/work/`, or null when there were no uncommitted changes. */
  patch: string | null;
}

export interface TrashManifest {
  format: number;
  entry: string;
  root: string;
  status: TrashStatus;
  reason: 'delete' | 'cleanup';
  actor: string;
  pid: number;
  deleted_at: string;
  bytes: number;
  /** In move order: subtree after subtree, each leaves first. Restore goes backwards (parents first). */
  sessions: TrashSession[];
  work: PreservedWork[];
  /** Format 2: the subtrees, in the order of `sessions`. Format 1 holds one subtree, rooted at `root`. */
  subtrees?: TrashSubtree[];
  /**
   * Format 2, while `moving`: the first `committed` subtrees are moved, synced and audited (they stay
   * if the process dies); the others are being moved (recovery moves them back).
   */
  committed?: number;
  /** While `restoring`: the sessions being put back (absent: all that are present). */
  restoring?: string[];
}

/** Sessions per piece of a manifest's text: about 50 kB, a string that dies young. */
const MANIFEST_PIECE = 512;

/**
 * A format 2 manifest's JSON on one line (indenting thousands of sessions would double its size),
 * `sessions` last, in pieces: a cleanup of 100,000 sessions rewrites its manifest once per batch, and
 * one string of it each time (10 MB, kept until V8's next full collection) took the process's memory
 * past 400 MB.
 */
function* manifestPieces(manifest: TrashManifest): Generator<string> {
  const { sessions, ...rest } = manifest;
  yield `${JSON.stringify(rest).slice(0, -1)},"sessions":[`;
  for (let at = 0; at < sessions.length; at += MANIFEST_PIECE) {
    const piece = sessions.slice(at, at + MANIFEST_PIECE).map((s) => JSON.stringify(s));
    yield `${at > 0 ? ',' : ''}${piece.join(',')}`;
  }
  yield ']}\n';
}

/** The subtrees of an entry, each with its sessions (format 1: one, rooted at `root`). */
export function subtreesOf(manifest: TrashManifest): { root: string; reason?: string; sessions: TrashSession[] }[] {
  if (!manifest.subtrees) return [{ root: manifest.root, sessions: manifest.sessions }];
  let at = 0;
  return manifest.subtrees.map((t) => {
    const sessions = manifest.sessions.slice(at, at + t.sessions);
    at += t.sessions;
    return { ...(t.reason === undefined ? {} : { reason: t.reason }), root: t.root, sessions };
  });
}

export class Trash {
  readonly storeDir: string;
  readonly dir: string;
  private areaChecked = false;

  constructor(storeDir: string) {
    this.storeDir = storeDir;
    this.dir = join(storeDir, TRASH_DIR);
  }

  newEntryName(now: number, root: string): string {
    const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    return `${stamp}-${randomHex(4)}-${root}`;
  }

  entryDir(entry: string): string {
    if (!/^\d{8}-\d{6}-[0-9a-f]{4}-/.test(entry) || entry.includes('/') || entry.includes('\\')) {
      throw new SessionError('EINVALID', `invalid trash entry name ${JSON.stringify(entry)}`);
    }
    assertValidId(entry.slice(21), 'trash entry root');
    this.checkArea();
    return join(this.dir, entry);
  }

  /** ECORRUPT when `.trash` is a symbolic link or a file: sessions would move out of the store (or in from outside). */
  checkArea(): void {
    if (this.areaChecked) return;
    assertArea(this.dir);
    this.areaChecked = true;
  }

  /** Runs `fn` holding the entry's lock; ELOCKED after `timeoutMs` (the entry is in use). */
  async withEntryLock<T>(
    entry: string,
    timeoutMs: number,
    fn: (check: () => void) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    this.entryDir(entry);
    ensureStoreSync(this.storeDir);
    ensureAreaSync(join(this.storeDir, '.locks'));
    return withLock(
      areaLockPath(this.storeDir, `trash-${entry}`),
      { timeoutMs, what: `trash entry ${entry}`, signal },
      fn,
    );
  }

  /** Creates the entry with its manifest; nothing has moved yet. On failure no entry is left behind. */
  async begin(manifest: TrashManifest): Promise<void> {
    const dir = this.entryDir(manifest.entry);
    await this.ensureDir(join(dir, 'sessions'));
    try {
      await faultPoint('trash-entry-made');
      await this.writeManifest(manifest);
    } catch (err) {
      // A full disk: an entry without a manifest would only be noise for doctor and recovery.
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
  }

  async writeManifest(manifest: TrashManifest): Promise<void> {
    const file = join(this.entryDir(manifest.entry), 'manifest.json');
    const write = () =>
      writeFileAtomic(file, manifest.format >= 2 ? manifestPieces(manifest) : `${JSON.stringify(manifest, null, 2)}\n`);
    await faultPoint(`trash-${manifest.status}`)
      .then(write)
      .catch((err) => {
        throw toSessionError(err, `writing ${file}`);
      });
  }

  async writeWorkFile(entry: string, name: string, data: Buffer): Promise<void> {
    const dir = join(this.entryDir(entry), 'work');
    await this.ensureDir(dir);
    // Not atomic on purpose: the entry is not complete until its manifest says so (see the invariant).
    await writeFile(join(dir, name), data).catch((err) => {
      throw toSessionError(err, `writing preserved work ${name}`);
    });
  }

  workFilePath(entry: string, name: string): string {
    return join(this.entryDir(entry), 'work', name);
  }

  /** The manifest, undefined when the entry does not exist; ECORRUPT when unreadable. */
  async read(entry: string): Promise<TrashManifest | undefined> {
    const file = join(this.entryDir(entry), 'manifest.json');
    let data: Buffer | undefined;
    try {
      // Synchronous: a manifest is small, and cleanup reads every one (twice: recovery, expiry); a
      // thread-pool round trip each made a cleanup with thousands of trash entries take seconds.
      data = readRegularFileSync(file, { maxBytes: MANIFEST_MAX_BYTES });
    } catch (err) {
      if (err instanceof SessionError)
        throw new SessionError(err.code, `trash entry ${entry}: ${err.message}`, { cause: err, details: { entry } });
      throw toSessionError(err, `reading ${file}`);
    }
    if (data === undefined) return undefined;
    try {
      const manifest = parseJson(decodeUtf8(data, file)) as TrashManifest;
      if (manifest.entry !== entry || !Array.isArray(manifest.sessions)) throw new Error('not a trash manifest');
      return manifest;
    } catch (err) {
      throw new SessionError('ECORRUPT', `trash entry ${entry}: manifest.json is corrupt`, {
        cause: err,
        details: { entry },
      });
    }
  }

  /** Entry names, oldest first. Directories without a valid name are ignored. */
  async entries(): Promise<string[]> {
    this.checkArea();
    return (await names(this.dir)).filter((name) => /^\d{8}-\d{6}-[0-9a-f]{4}-./.test(name)).sort();
  }

  /** Whether the entry's folder is there (a restore or an expiry may have destroyed it meanwhile). */
  exists(entry: string): boolean {
    return lstatOrNull(this.entryDir(entry)) !== null;
  }

  /** The entries, newest first, that hold session `id` now. */
  async holding(id: string): Promise<string[]> {
    assertValidId(id);
    return (await this.entries())
      .reverse()
      .filter((entry) => lstatOrNull(join(this.dir, entry, 'sessions', id)) !== null);
  }

  /**
   * Whether the process that last wrote a manifest that is not `complete` is gone: its lock is free
   * (stale), or the pid it recorded is no longer running on this machine (a kill less than 2 s ago).
   */
  interrupted(manifest: TrashManifest): boolean {
    if (manifest.status === 'complete' || manifest.status === 'restored') return false;
    return !isLockHeld(areaLockPath(this.storeDir, `trash-${manifest.entry}`)) || !processRuns(manifest.pid);
  }

  /** The session ids actually present in the entry. */
  async present(entry: string): Promise<string[]> {
    return names(join(this.entryDir(entry), 'sessions'));
  }

  // The renames of moveIn and moveOut are synchronous: a subtree moves thousands of sessions in a row,
  // and a thread-pool round trip each was most of that time. Their callers look at the locks between two,
  // and each rename is followed by keepLocksFresh: no timer runs while they go on.
  async moveIn(entry: string, id: string): Promise<void> {
    const from = this.sessionDir(id);
    const to = join(this.entryDir(entry), 'sessions', id);
    try {
      await faultPoint('trash-move-in');
      renameSync(from, to);
      keepLocksFresh();
    } catch (err) {
      throw toSessionError(err, `moving session ${id} to the trash`);
    }
  }

  /** Moves a session back into the store; EEXIST when the store has that session again. */
  async moveOut(entry: string, id: string): Promise<void> {
    const from = join(this.entryDir(entry), 'sessions', id);
    const to = this.sessionDir(id);
    let existing: string[];
    try {
      existing = namesSync(to);
    } catch {
      existing = ['?'];
    }
    if (existing.length > 0) throw new SessionError('EEXIST', `session ${id} exists in the store`, { details: { id } });
    // An empty directory is what a crashed create leaves: not a session.
    rmdirQuiet(to);
    try {
      await faultPoint('trash-move-out');
      renameSync(from, to);
      keepLocksFresh();
    } catch (err) {
      throw toSessionError(err, `restoring session ${id}`);
    }
  }

  /**
   * Makes the renames into or out of the entry durable: one fsync of the entry's `sessions/` folder
   * and one of the store's, after a whole batch of renames, before the manifest records the batch.
   */
  async syncMoves(entry: string): Promise<void> {
    for (const dir of [join(this.entryDir(entry), 'sessions'), this.storeDir]) {
      await faultPoint('trash-sync');
      const handle = await open(dir, 'r').catch((err) => {
        throw toSessionError(err, `syncing ${dir}`);
      });
      try {
        await handle.sync().catch((err) => {
          throw toSessionError(err, `syncing ${dir}`);
        });
      } finally {
        await handle.close();
      }
    }
  }

  /** Destroys an entry: one rename out of `.trash` (atomic), then a recursive delete. */
  async destroy(entry: string): Promise<void> {
    const parking = join(this.storeDir, REMOVING_DIR, `trash-${entry}-${randomHex(6)}`);
    assertArea(dirname(parking));
    await this.ensureDir(dirname(parking));
    await rename(this.entryDir(entry), parking).catch((err) => {
      throw toSessionError(err, `destroying trash entry ${entry}`);
    });
    await rm(parking, { recursive: true, force: true });
  }

  sessionDir(id: string): string {
    assertValidId(id);
    return join(this.storeDir, id);
  }

  private async ensureDir(dir: string): Promise<void> {
    ensureStoreSync(this.storeDir);
    await mkdir(dir, { recursive: true }).catch((err) => {
      throw toSessionError(err, `creating ${dir}`);
    });
  }
}

/** Total size of the regular files under `dir` (0 when absent). Symlinks are counted, not followed. */
export async function diskBytes(dir: string): Promise<number> {
  return diskBytesSync(dir);
}

// Synchronous on purpose: cleanup and delete size thousands of small session directories, and one
// thread-pool round trip per lstat/readdir made that most of a dry run's time.
export function diskBytesSync(file: string): number {
  let info;
  try {
    info = lstatSync(file);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const name of namesSync(file)) total += diskBytesSync(join(file, name));
  return total;
}

function lstatOrNull(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

function rmdirQuiet(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // None, or not empty: the rename that follows says so.
  }
}

function namesSync(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw toSessionError(err, `reading ${dir}`);
  }
}

async function names(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw toSessionError(err, `reading ${dir}`);
  }
}
