import { randomHex } from '../random.js';
import { open, rename, unlink } from 'node:fs/promises';

let counter = 0;

/**
 * A unique temp name in the same directory, fsync, rename: readers see the old file or the new one.
 * `beforeRename` runs after the fsync, right before the rename (a lock's `check`: the fsync can be
 * slow, and the lock must still be ours when the file takes its place); if it throws, nothing changes.
 */
export async function writeFileAtomic(file: string, data: string, mode = 0o644, beforeRename?: () => void): Promise<void> {
  const temp = `${file}.${process.pid}.${++counter}.${randomHex(6)}.tmp`;
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    beforeRename?.();
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

export const TEMP_SUFFIX = '.tmp';
