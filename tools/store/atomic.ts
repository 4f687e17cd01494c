import { randomHex } from '../random.js';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let counter = 0;

export const TEMP_SUFFIX = '.tmp';

interface AtomicWriteOptions {
  /** The new file's mode (default 0o644), less the umask unless `exactMode`. */
  mode?: number;
  exactMode?: boolean;
  /**
   * Runs after the fsync, right before the rename (a lock's `check`: the fsync can be slow, and the
   * lock must still be ours when the file takes its place); if it throws, nothing changes.
   */
  beforeRename?: () => void;
  /** Where the temp file goes (default: next to `file`), created on demand; on `file`'s file system. */
  tempDir?: string;
  /** How the temp file's name starts (default: `file`'s name). */
  tempName?: string;
  /**
   * false skips the fsync: for a cache that can be rebuilt from fsynced files, where a lost write
   * after a crash costs a rebuild and the fsync would cost the hook a millisecond (default true).
   */
  sync?: boolean;
}

/**
 * A unique temp name, fsync, rename: readers see the old file or the new one. `data` may come in
 * pieces (a large trash manifest): no string of the whole file is ever made.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Iterable<string>,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = options.tempDir ?? dirname(file);
  const temp = join(
    dir,
    `${options.tempName ?? basename(file)}.${process.pid}.${++counter}.${randomHex(6)}${TEMP_SUFFIX}`,
  );
  const mode = options.mode ?? 0o644;
  try {
    // Open first and create a separate temp directory only when missing: no extra call per write.
    const handle = await open(temp, 'wx', mode).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT' || options.tempDir === undefined) throw err;
      await mkdir(dir, { recursive: true });
      return open(temp, 'wx', mode);
    });
    try {
      if (options.exactMode) await handle.chmod(mode);
      // writeFile writes all of its data from the current position (write may write part of it).
      if (typeof data === 'string') await handle.writeFile(data, 'utf8');
      else for (const piece of data) await handle.writeFile(piece, 'utf8');
      if (options.sync !== false) await handle.sync();
    } finally {
      await handle.close();
    }
    options.beforeRename?.();
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
