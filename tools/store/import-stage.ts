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
 * Staged records keep their temp file next to them (not in `.tmp/`): a crash while staging leaves it
 * in a staging directory that is discarded, never placed.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { toSessionError } from '../errors.js';
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

const IMPORTING_DIR = '.importing';
export const BACKUPS_DIR = '.backups';
/** A manifest lists ids; one past this size was not written by an import. */
const MANIFEST_MAX_BYTES = 16 * 1024 * 1024;

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

export class ImportStaging {
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

  async readManifest(op: string): Promise<ImportManifest | undefined> {
    const file = join(this.opDir(op), 'manifest.json');
    try {
      const data = readRegularFileSync(file, { maxBytes: MANIFEST_MAX_BYTES });
      return data === undefined ? undefined : (parseJson(decodeUtf8(data, file)) as ImportManifest);
    } catch {
      return undefined;
    }
  }

  async stage(op: string, id: string, text: string): Promise<void> {
    const dir = this.staged(op, id);
    await this.ensureDir(dir);
    await this.io(() => writeFileAtomic(join(dir, STATE_FILE), text), `staging session ${id}`);
  }

  /** Staged → live. The id's lock must be held and the id free. */
  async place(op: string, id: string): Promise<void> {
    await this.io(() => rename(this.staged(op, id), this.live(id)), `importing session ${id}`);
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
    const pid = fromName === undefined ? (await this.readManifest(op))?.pid : Number(fromName);
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

  private async io<T>(fn: () => Promise<T>, doing: string): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw toSessionError(err, doing);
    }
  }
}
