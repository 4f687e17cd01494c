// Editing a file of the user's project in place (Claude Code's settings): the text read
// before is compared before writing, and the write goes through symlinks and keeps the mode.
import { readFile, readlink, stat, mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { writeFileAtomic } from '../store/atomic.js';

/**
 * Replaces a text file read as `oldText` (undefined: there was none) with `text`, atomically (temp
 * file, fsync, rename), following a symlink (even one whose target does not exist yet) and keeping
 * the file's mode. Refuses (checkReplaceable) a read-only file, and a file that changed since it was
 * read. `prepare` runs once those checks pass, right before the write (a backup); its result is returned.
 */
export async function replaceTextFile<T>(
  file: string,
  oldText: string | undefined,
  text: string,
  prepare: () => Promise<T>,
): Promise<T> {
  const { target, mode } = await checkReplaceable(file, oldText);
  try {
    await mkdir(dirname(target), { recursive: true });
    const prepared = await prepare();
    await writeFileAtomic(target, text, mode === undefined ? {} : { mode, exactMode: true });
    return prepared;
  } catch (err) {
    throw toSessionError(err, `cannot write ${file}`);
  }
}

/**
 * Whether the file read as `oldText` may be replaced: unchanged since it was read, and not read-only.
 * Returns where the write goes (the end of its symlinks) and the mode to keep (none for a new file).
 */
export async function checkReplaceable(
  file: string,
  oldText: string | undefined,
): Promise<{ target: string; mode: number | undefined }> {
  try {
    if ((await readOptional(file)) !== oldText) {
      throw new SessionError(
        'EIO',
        `${file} changed while it was being edited; nothing was written, run the command again`,
        { details: { file } },
      );
    }
    const target = await writeTarget(file);
    const mode = oldText === undefined ? undefined : (await stat(target)).mode & 0o777;
    if (mode !== undefined && (mode & 0o200) === 0) {
      throw new SessionError(
        'EINVALID',
        `${file} is read-only; refusing to change it (make it writable, or edit it by hand)`,
        { details: { file } },
      );
    }
    return { target, mode };
  } catch (err) {
    throw toSessionError(err, `cannot write ${file}`);
  }
}

/** Where writing `file` goes: the file, or the end of its chain of symlinks (which may not exist yet). */
export async function writeTarget(file: string): Promise<string> {
  let target = resolve(file);
  for (let hops = 0; hops < 40; hops++) {
    const link = await readlink(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EINVAL' || err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (link === undefined) return target;
    target = resolve(dirname(target), link);
  }
  throw new SessionError('EINVALID', `${file}: too many levels of symbolic links`, { details: { file } });
}

/** A text file's content, or undefined when it does not exist. */
export async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw toSessionError(err, `cannot read ${file}`);
  }
}
