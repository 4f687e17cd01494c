/**
 * Staging for `import`, so that an import is all or nothing.
 *
 * On disk, inside the store:
 *   .importing/<op>/manifest.json        {op, ids, replaced, status, pid, audit}; status staged → committing → done
 *   .importing/<op>/sessions/<id>/       a staged session, written (fsynced) before anything moves
 *   .importing/<op>/replaced/<id>/       a session `--overwrite` set aside (moved here by rename)
 *   .backups/import-<op>/<id>/           where set-aside sessions end up once the import is done
 *   .locks/.import-<op>.lock             held by the importing process for the whole import
 * `<op>` is `<UTC yyyymmdd-hhmmss>-<pid>-<hex>`.
 * Every move is a rename(2) within the store. A crash while `committing` is rolled back by the next
 * import or by `doctor --repair`: placed sessions go back to staging, set-aside ones back in place.
 * A `done` import's directory stays until its `import` audit entry is written, so the entry of an
 * importer killed in between is written by that recovery (from the manifest's `audit`).
 *   .importing/<op>/audit.jsonl          the bundle's audit entries, appended to the trail once the import is done
 * Staged records are written in batches and made durable per batch (every file fsynced, then every
 * directory that names them), not one fsync round per record: nothing staged is live, and a crash while
 * staging leaves a staging directory that is discarded, never placed. Placing is one rename per session;
 * the store directory is fsynced once they are all in place, before the manifest says `done`.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { parseJson } from '../json.js';
import { writeFileAtomic } from './atomic.js';
import { isLockHeld, withLock } from './lock.js';
import { assertArea, decodeUtf8, readRegularFileSync } from './regular-file.js';
import { STATE_FILE } from './store.js';
import { areaLockPath } from './subtree-locks.js';
import { randomHex } from '../random.js';
import { processRuns } from './pid.js';
import { ensureStoreSync } from './store-root.js';
import { faultPoint } from './fault-points.js';

const IMPORTING_DIR = '.importing';
export const BACKUPS_DIR = '.backups';
/**
 * A manifest lists every id the import places and replaces, about 400 bytes a session with long ids:
 * one past this size (2.6 million such sessions) was not written by an import.
 */
const MANIFEST_MAX_BYTES = 1024 * 1024 * 1024;
/** A staged record is one the import checked: within the store's own limit for a record. */
const STAGED_MAX_BYTES = 16 * 1024 * 1024;
/** Node's thread pool has 4 threads: more syncs at once would only queue. */
const SYNC_CONCURRENCY = 4;

type ImportStatus = 'staged' | 'committing' | 'done';

export interface ImportManifest {
  op: string;
  ids: string[];
  replaced: string[];
  status: ImportStatus;
  /** The importing process: a dead one's import is recovered without waiting for its lock to go stale. */
  pid: number;
  /** The `import` audit entry's details, for a recovery that has to write it. */
  audit?: Record<string, unknown>;
}

/**
 * fsyncs the descriptors a few at a time on the thread pool: the file system commits concurrent
 * syncs together (one journal commit for several), where one after the other each waits for its own.
 */
async function syncAll(fds: number[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < fds.length) {
      const fd = fds[next++]!;
      await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())));
    }
  };
  await Promise.all(Array.from({ length: SYNC_CONCURRENCY }, worker));
}

export class ImportStaging {
  /** Records written and not yet synced: their descriptors and directories. */
  private written: { fd: number; dir: string }[] = [];

  constructor(private readonly storeDir: string) {}

  /** `<UTC yyyymmdd-hhmmss>-<pid>-<hex>`: the pid tells a dead importer even before its manifest exists. */
  static newOp(now: number): string {
    const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    return `${stamp}-${process.pid}-${randomHex(8)}`;
  }

  /** Runs `fn` holding the import's lock; ELOCKED after `timeoutMs` (its importer is alive). */
  async withOpLock<T>(op: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
    await this.ensureDir(join(this.storeDir, '.locks'));
    return withLock(areaLockPath(this.storeDir, `import-${op}`), { timeoutMs, what: `import ${op}` }, () => fn());
  }

  async writeManifest(manifest: ImportManifest): Promise<void> {
    // Every import starts here: a `.importing` that is a symbolic link would stage sessions outside the store.
    assertArea(join(this.storeDir, IMPORTING_DIR));
    await this.ensureDir(this.opDir(manifest.op));
    await this.io(
      () => writeFileAtomic(join(this.opDir(manifest.op), 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`),
      'writing the import manifest',
    );
  }

  /**
   * The import's manifest; undefined when it has none (the import died before writing it: nothing of
   * it was committed). A manifest that cannot be read throws ECORRUPT: what it says is not known, so
   * the caller must leave the import as it is (its `replaced/` may hold the only copy of sessions).
   */
  async readManifest(op: string): Promise<ImportManifest | undefined> {
    const file = join(this.opDir(op), 'manifest.json');
    try {
      const data = readRegularFileSync(file, { maxBytes: MANIFEST_MAX_BYTES });
      if (data === undefined) return undefined;
      const manifest = parseJson(decodeUtf8(data, file)) as ImportManifest;
      if (typeof manifest?.status !== 'string') throw new Error('it has no status');
      return manifest;
    } catch (err) {
      throw new SessionError('ECORRUPT', `the import manifest ${file} cannot be read: ${(err as Error).message}`, {
        details: { path: file, op },
        cause: err,
      });
    }
  }

  /**
   * Stages one record, written whole without a sync (its descriptor is kept for `syncWritten`): the
   * text is on the disk, and free to be collected, at once.
   */
  async write(op: string, id: string, text: string): Promise<void> {
    await faultPoint('import-stage');
    const sessionsDir = join(this.opDir(op), 'sessions');
    if (this.written.length === 0) await this.ensureDir(sessionsDir);
    const dir = this.staged(op, id);
    this.ioSync(() => mkdirSync(dir), `staging session ${id}`);
    const fd = this.ioSync(() => openSync(join(dir, STATE_FILE), 'wx', 0o644), `staging session ${id}`);
    this.written.push({ fd, dir });
    const data = Buffer.from(text, 'utf8');
    let off = 0;
    while (off < data.length) off += this.ioSync(() => writeSync(fd, data, off), `staging session ${id}`);
  }

  /** Every record written since the last call reaches the disk: the files fsynced, then the directories naming them. */
  async syncWritten(op: string): Promise<void> {
    if (this.written.length === 0) return;
    const batch = this.written;
    this.written = [];
    try {
      await this.io(() => syncAll(batch.map((w) => w.fd)), 'syncing the staged sessions');
    } finally {
      for (const { fd } of batch) closeSync(fd);
    }
    await this.syncDirs([...batch.map((w) => w.dir), join(this.opDir(op), 'sessions')]);
  }

  /** Stages records and makes them durable (see `write`, `syncWritten`). */
  async stageBatch(op: string, batch: { id: string; text: string }[]): Promise<void> {
    for (const { id, text } of batch) await this.write(op, id, text);
    await this.syncWritten(op);
  }

  /** A staged record's text (to rewrite it under a new id). */
  readStaged(op: string, id: string): string {
    const file = join(this.staged(op, id), STATE_FILE);
    return decodeUtf8(readRegularFileSync(file, { maxBytes: STAGED_MAX_BYTES })!, file);
  }

  /** Drops one staged record (it was staged again under a new id). */
  async unstage(op: string, id: string): Promise<void> {
    await rm(this.staged(op, id), { recursive: true, force: true });
  }

  /** Appends audit lines (each with its newline) to the staged copy of the bundle's trail; no sync (see above). */
  stageAudit(op: string, lines: string[]): void {
    if (lines.length === 0) return;
    this.ioSync(() => appendFileSync(join(this.opDir(op), 'audit.jsonl'), lines.join('')), 'staging audit entries');
  }

  hasStagedAudit(op: string): boolean {
    return existsSync(join(this.opDir(op), 'audit.jsonl'));
  }

  /** The staged audit lines, a chunk at a time, each without its newline. */
  async forEachStagedAudit(op: string, onLines: (lines: string[]) => Promise<void>): Promise<void> {
    const file = join(this.opDir(op), 'audit.jsonl');
    if (!existsSync(file)) return;
    const fd = this.ioSync(() => openSync(file, 'r'), 'reading the staged audit entries');
    try {
      const chunk = Buffer.allocUnsafe(1 << 20);
      let rest = '';
      for (;;) {
        const n = readSync(fd, chunk, 0, chunk.length, null);
        if (n === 0) break;
        // Lines are split on the text: a UTF-8 sequence cut by the chunk is whole again once joined.
        const text = rest + chunk.toString('latin1', 0, n);
        const lines = text.split('\n');
        rest = lines.pop()!;
        await onLines(lines.map((l) => Buffer.from(l, 'latin1').toString('utf8')));
      }
      if (rest !== '') await onLines([Buffer.from(rest, 'latin1').toString('utf8')]);
    } finally {
      closeSync(fd);
    }
  }

  /** After the placing renames: the store directory that now names the sessions reaches the disk. */
  async syncStore(): Promise<void> {
    // Off the main thread: the locks held meanwhile are refreshed by a timer.
    await this.syncDirs([this.storeDir]);
  }

  /**
   * Staged → live. The id's lock must be held and the id free. Synchronous, as the rest of a batch's
   * steps are: a thread-pool round trip per session, on a loaded machine, cost more than the rename.
   */
  place(op: string, id: string): void {
    this.ioSync(() => renameSync(this.staged(op, id), this.live(id)), `importing session ${id}`);
  }

  /** Live → staged (rollback of `place`). */
  async unplace(op: string, id: string): Promise<void> {
    await this.io(() => rename(this.live(id), this.staged(op, id)), `rolling back session ${id}`);
  }

  /** Live → replaced (what `--overwrite` backs up). */
  async setAside(op: string, id: string): Promise<void> {
    await this.ensureDir(join(this.opDir(op), 'replaced'));
    await this.io(() => rename(this.live(id), this.replaced(op, id)), `backing up session ${id}`);
  }

  async putBack(op: string, id: string): Promise<void> {
    await this.io(() => rename(this.replaced(op, id), this.live(id)), `restoring session ${id}`);
  }

  isStaged(op: string, id: string): boolean {
    return existsSync(this.staged(op, id));
  }

  isSetAside(op: string, id: string): boolean {
    return existsSync(this.replaced(op, id));
  }

  isLive(id: string): boolean {
    return existsSync(this.live(id));
  }

  /** Moves set-aside sessions to `.backups/import-<op>/` (returned, or null if none); the staging stays. */
  async keepBackup(op: string): Promise<string | null> {
    const replaced = join(this.opDir(op), 'replaced');
    const backup = join(this.storeDir, BACKUPS_DIR, `import-${op}`);
    if (existsSync(replaced)) {
      assertArea(dirname(backup));
      await this.ensureDir(dirname(backup));
      await this.io(() => rename(replaced, backup), 'keeping the backup of replaced sessions');
    }
    // Already moved by an importer killed right after: the same path.
    return existsSync(backup) ? backup : null;
  }

  async discard(op: string): Promise<void> {
    for (const { fd } of this.written) closeSync(fd);
    this.written = [];
    await rm(this.opDir(op), { recursive: true, force: true });
  }

  /** Imports left behind (by a crash, or in progress in another process). */
  async ops(): Promise<string[]> {
    assertArea(join(this.storeDir, IMPORTING_DIR));
    try {
      return (await readdir(join(this.storeDir, IMPORTING_DIR))).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw toSessionError(err, 'reading the import staging area');
    }
  }

  /** Whether the import is still running: its lock is fresh and its process alive. */
  async isRunning(op: string): Promise<boolean> {
    if (!isLockHeld(areaLockPath(this.storeDir, `import-${op}`))) return false;
    const fromName = /^\d{8}-\d{6}-(\d+)-[0-9a-f]+$/.exec(op)?.[1];
    const pid = fromName === undefined ? (await this.readManifest(op).catch(() => undefined))?.pid : Number(fromName);
    return typeof pid !== 'number' || processRuns(pid);
  }

  opPath(op: string): string {
    return this.opDir(op);
  }

  private opDir(op: string): string {
    return join(this.storeDir, IMPORTING_DIR, op);
  }

  private staged(op: string, id: string): string {
    assertValidId(id);
    return join(this.opDir(op), 'sessions', id);
  }

  private replaced(op: string, id: string): string {
    assertValidId(id);
    return join(this.opDir(op), 'replaced', id);
  }

  private live(id: string): string {
    assertValidId(id);
    return join(this.storeDir, id);
  }

  private async ensureDir(dir: string): Promise<void> {
    ensureStoreSync(this.storeDir);
    await this.io(() => mkdir(dir, { recursive: true }), `creating ${dir}`);
  }

  private async syncDirs(dirs: string[]): Promise<void> {
    const fds: number[] = [];
    try {
      for (const dir of dirs) fds.push(this.ioSync(() => openSync(dir, 'r'), `syncing ${dir}`));
      await this.io(() => syncAll(fds), 'syncing the staged sessions');
    } finally {
      for (const fd of fds) closeSync(fd);
    }
  }

  private ioSync<T>(fn: () => T, doing: string): T {
    try {
      return fn();
    } catch (err) {
      throw toSessionError(err, doing);
    }
  }

  private async io<T>(fn: () => Promise<T>, doing: string): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toSessionError(err, doing);
    }
  }
}
