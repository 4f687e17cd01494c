/**
 * The children index: a cache of parent links, so that finding a session's children reads only that
 * directory instead of every record. Records are the truth; the index can always be rebuilt from them.
 *
 * On disk, inside the store:
 *   .index/children/<parentId>/<childId>   empty file: <childId>'s record names <parentId> as parent
 *   .index/ids/<id>                        empty file: <id> is indexed (its parent marker, if any, exists)
 *
 * Rules that keep it from ever losing a child:
 * - Markers are written BEFORE the record they describe (create, restore), so a crash leaves at most a
 *   stale marker. Readers verify every marker against the child's record and ignore stale ones.
 * - A session directory with no `.index/ids/<id>` marker (older stores, imports, hand edits) is
 *   "unindexed": every lookup reads those records too (one readdir of the store and of `.index/ids`).
 * - If `.index/children` is missing while `.index/ids` exists, the whole index counts as missing.
 * - Removing markers is always safe: a removed ids marker only makes the session unindexed again.
 */
import { mkdir, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { existsSync, lstatSync, readdirSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { toSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { keepLocksFresh } from './lock.js';
import { ensureAreaSync } from './regular-file.js';
import { ensureStoreSync } from './store-root.js';

export const INDEX_DIR = '.index';

export class ChildrenIndex {
  private readonly childrenDir: string;
  private readonly idsDir: string;
  private readonly storeDir: string;

  constructor(storeDir: string) {
    this.storeDir = storeDir;
    this.childrenDir = join(storeDir, INDEX_DIR, 'children');
    this.idsDir = join(storeDir, INDEX_DIR, 'ids');
  }

  /** Records that `child` has `parent` (null for a root). Call before the child's record is written. */
  async add(parent: string | null, child: string): Promise<void> {
    assertValidId(child);
    if (parent !== null) assertValidId(parent, 'parent session id');
    try {
      // The children directory always exists once anything is indexed (see present()). Areas that
      // are links are refused: markers would be written outside the store.
      ensureStoreSync(this.storeDir);
      ensureAreaSync(dirname(this.childrenDir));
      ensureAreaSync(this.childrenDir);
      // A child list that is a link (a cloned or hand-made store) is refused too, and a marker is only
      // ever created, never opened: one that is a link stays as it is, not followed.
      if (parent !== null) ensureAreaSync(join(this.childrenDir, parent));
      if (parent !== null) await writeMarker(join(this.childrenDir, parent, child));
      ensureAreaSync(this.idsDir);
      await writeMarker(join(this.idsDir, child));
    } catch (err) {
      throw toSessionError(err, `indexing session ${child}`);
    }
  }

  /** `add` for many sessions at once (an import): each area checked once, the markers written in a row. */
  addMany(links: { parent: string | null; child: string }[], what = 'the imported sessions'): void {
    try {
      ensureStoreSync(this.storeDir);
      ensureAreaSync(dirname(this.childrenDir));
      ensureAreaSync(this.childrenDir);
      ensureAreaSync(this.idsDir);
      const made = new Set<string>();
      for (const { parent, child } of links) {
        // Hundreds of file creations in a row: on a loaded disk they outlast a lock's trusted time.
        keepLocksFresh();
        assertValidId(child);
        if (parent !== null) {
          assertValidId(parent, 'parent session id');
          if (!made.has(parent)) ensureAreaSync(join(this.childrenDir, parent));
          made.add(parent);
          writeMarkerSync(join(this.childrenDir, parent, child));
        }
        writeMarkerSync(join(this.idsDir, child));
      }
    } catch (err) {
      throw toSessionError(err, `indexing ${what}`);
    }
  }

  /**
   * Forgets a session (after its record is gone): its ids marker, its parent marker, and its own
   * child list once empty. Markers of other children stay: one may have been restored under it meanwhile.
   */
  async remove(parent: string | null, child: string): Promise<void> {
    assertValidId(child);
    try {
      for (const target of this.markersOf(parent, child)) await rm(target, { recursive: true, force: true });
    } catch (err) {
      throw toSessionError(err, `unindexing session ${child}`);
    }
    await rmdir(join(this.childrenDir, child)).catch(() => undefined);
  }

  /**
   * The marker paths of `child` that lie in directories of the index's own. A directory that is a link
   * is never gone through: removing through it would remove files outside the store.
   */
  private markersOf(parent: string | null, child: string): string[] {
    const markers: string[] = [];
    for (const dir of parent === null ? [this.idsDir] : [this.idsDir, join(this.childrenDir, parent)]) {
      if (ownDirectory(dir)) markers.push(join(dir, child));
    }
    return markers;
  }

  /**
   * `remove` for many sessions in a row (a subtree that moved to the trash): synchronous, one unlink per
   * marker and one rmdir per child list, no thread-pool round trip each.
   */
  removeMany(links: { parent: string | null; child: string }[]): void {
    for (const { parent, child } of links) {
      keepLocksFresh();
      assertValidId(child);
      try {
        for (const marker of this.markersOf(parent, child)) unlinkMarker(marker);
      } catch (err) {
        throw toSessionError(err, `unindexing session ${child}`);
      }
      try {
        rmdirSync(join(this.childrenDir, child));
      } catch {
        // Not empty (a child restored under it meanwhile) or none: either way nothing to remove.
      }
    }
  }

  /** The ids the index lists under `parent`; unverified (callers check the child's record). */
  async childIds(parent: string): Promise<string[]> {
    assertValidId(parent);
    const dir = join(this.childrenDir, parent);
    return ownDirectory(dir) ? listNames(dir) : [];
  }

  /** Whether the index exists as a whole (see the rules above). */
  present(): boolean {
    return existsSync(this.childrenDir) || !existsSync(this.idsDir);
  }

  /** Of `ids` (the session directories of the store), those the index does not cover. */
  async unindexed(ids: string[]): Promise<string[]> {
    if (!this.present()) return ids;
    const indexed = new Set(await listNames(this.idsDir));
    return ids.filter((id) => !indexed.has(id));
  }

  /** Every parent marker, as [parent, child] pairs (for doctor and rebuild). */
  async allLinks(): Promise<[string, string][]> {
    const links: [string, string][] = [];
    for (const parent of await listNames(this.childrenDir)) {
      const dir = join(this.childrenDir, parent);
      if (!ownDirectory(dir)) continue;
      for (const child of await listNames(dir)) links.push([parent, child]);
    }
    return links;
  }

  /** The entries of the child lists' and the ids markers' directories that are symbolic links (for doctor). */
  links(): string[] {
    return [this.childrenDir, this.idsDir].flatMap((dir) => {
      try {
        // One readdir each: the entry types come with the names.
        const entries = readdirSync(dir, { withFileTypes: true });
        return entries.filter((entry) => entry.isSymbolicLink()).map((entry) => join(dir, entry.name));
      } catch {
        return [];
      }
    });
  }

  async indexedIds(): Promise<string[]> {
    return listNames(this.idsDir);
  }

  /** Drops the whole index (it is rebuilt from the records). */
  async clear(): Promise<void> {
    await rm(dirname(this.childrenDir), { recursive: true, force: true });
  }
}

/** Whether `dir` is a directory itself, not a link to one (nor anything else): doctor reports the others. */
function ownDirectory(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Creates an empty marker; one already there (a file, or a link: never followed) is left as it is. */
async function writeMarker(file: string): Promise<void> {
  await writeFile(file, '', { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
}

function writeMarkerSync(file: string): void {
  try {
    writeFileSync(file, '', { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}

/** A marker is an empty file; one that is something else (a directory made by hand) goes too, as `rm` would. */
function unlinkMarker(file: string): void {
  try {
    unlinkSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    if (code === 'EISDIR' || code === 'EPERM') return rmSync(file, { recursive: true, force: true });
    throw err;
  }
}

async function listNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw toSessionError(err, `reading ${dir}`);
  }
}
