import {
  closeSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { sha256Hex } from '../audit/sha256.js';
import { randomHex } from '../random.js';
import { TEMP_SUFFIX } from '../store/atomic.js';
import { processRuns } from '../store/pid.js';

/** A temp file whose writer is gone is removed after this long; one untouched for STALE_MS whatever its pid. */
const DEAD_WRITER_MS = 60_000;
const STALE_MS = 3_600_000;

/**
 * A temp file's name after the bundle's: `.<pid>.<n>.<hex>.tmp`, with 6 hex digits (12 in the names older
 * versions of this package made). Nothing else: `<bundle>.2024.12.31.tmp` is somebody's file.
 */
const TEMP_NAME = /^\.(\d+)\.\d+\.(?:[0-9a-f]{6}|[0-9a-f]{12})\.tmp$/;

/** The longest file name the file systems take (ext4, xfs, btrfs, APFS): in bytes. */
const NAME_MAX_BYTES = 255;
/** The most a temp file's name adds to the bundle's: `.<pid>.<n>.<hex>.tmp`. */
const TEMP_SUFFIX_MAX_BYTES = 33;
/** How much of a bundle name too long for that its temp files' names keep, before a hash of the whole. */
const KEPT_BYTES = 200;

/** Text is written in chunks of about this size: one system call per chunk, not per line. */
const CHUNK_CHARS = 1 << 20;

/**
 * An export bundle is a file the user names, outside the store, written whole or not at all: it is
 * streamed into a temp file beside it (`<bundle>.<pid>.<n>.<hex>.tmp`), fsynced, renamed over the
 * bundle, and its directory fsynced. `abort` (an error, an interrupt) removes the temp file.
 */
export class BundleFile {
  private readonly target: string;
  private readonly temp: string;
  private fd: number | undefined;
  private pending: string[] = [];
  private pendingChars = 0;

  /** `store`: the store exported from, which the bundle may not be written into. */
  constructor(
    private readonly file: string,
    store: string,
  ) {
    refuseDirectoryPath(file, file);
    this.target = outputPath(process.cwd(), file);
    const bytes = Buffer.byteLength(basename(this.target));
    if (bytes > NAME_MAX_BYTES) {
      throw new SessionError('EINVALID', `${file}: a file name is at most ${NAME_MAX_BYTES} bytes, not ${bytes}`, {
        details: { file },
      });
    }
    refuseSpecialFile(this.target, file, 'export writes the bundle to a regular file, which it replaces whole');
    refuseInsideStore(this.target, file, store);
    // An export killed mid-write left its temp file beside the bundle, where no sweep of the store looks.
    removeStaleTemps(this.target, Date.now());
    // Joined, not resolved: a `..` in the path is the file system's to follow (see outputPath).
    this.temp = `${dirname(this.target)}${sep}${tempBase(this.target)}.${process.pid}.1.${randomHex(6)}${TEMP_SUFFIX}`;
    this.fd = this.openTemp();
    // A process ended mid-write (a second Ctrl-C exits at once) takes its temp file with it.
    process.once('exit', this.removeOnExit);
  }

  private readonly removeOnExit = () => this.abort();

  /** The temp file, created; a missing directory is named as such, not by the temp file's name. */
  private openTemp(): number {
    try {
      return openSync(this.temp, 'wx', 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw toSessionError(err, `writing ${this.file}`);
      const why = code === 'ENOENT' ? 'does not exist' : 'goes through a file that is not a directory';
      throw new SessionError('EIO', `writing ${this.file}: ${dirname(this.target)} ${why} (${code})`, {
        cause: err,
        details: { file: this.file },
      });
    }
  }

  write(text: string): void {
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= CHUNK_CHARS) this.flush();
  }

  /** Everything written reaches the disk, then the bundle takes its place. */
  commit(): void {
    this.flush();
    this.io(() => fsyncSync(this.fd!));
    this.io(() => closeSync(this.fd!));
    this.fd = undefined;
    process.off('exit', this.removeOnExit);
    try {
      this.io(() => renameSync(this.temp, this.target));
    } catch (err) {
      // A directory made at that path meanwhile, say: the temp file would stay for good.
      removeQuietly(this.temp);
      throw err;
    }
    // The rename itself is durable only once the directory is.
    const dir = this.io(() => openSync(dirname(this.target), 'r'));
    try {
      this.io(() => fsyncSync(dir));
    } finally {
      closeSync(dir);
    }
  }

  /** Nothing of the bundle is left (best effort). */
  abort(): void {
    process.off('exit', this.removeOnExit);
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // Already closed by a failed write: the temp file is removed all the same.
    }
    this.fd = undefined;
    removeQuietly(this.temp);
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const data = Buffer.from(this.pending.join(''), 'utf8');
    this.pending = [];
    this.pendingChars = 0;
    let off = 0;
    while (off < data.length) off += this.io(() => writeSync(this.fd!, data, off, data.length - off));
  }

  private io<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw toSessionError(err, `writing ${this.file}`);
    }
  }
}

/**
 * Calls `onLine` with the bytes of each line of the file (without its newline, the last one even
 * without a newline), reading it in chunks: a bundle of any size costs a chunk of memory.
 * `onLine` may return a promise (it is awaited before the next line).
 */
export async function forEachLine(file: string, onLine: (line: Buffer) => void | Promise<void>): Promise<void> {
  const fd = openBundle(file);
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_CHARS);
    let rest: Buffer = Buffer.alloc(0);
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const data = rest.length > 0 ? Buffer.concat([rest, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      let start = 0;
      for (let end = data.indexOf(10, start); end !== -1; end = data.indexOf(10, start)) {
        await onLine(data.subarray(start, end));
        start = end + 1;
      }
      // The chunk buffer is reused: what is left of it is copied.
      rest = Buffer.from(data.subarray(start));
    }
    if (rest.length > 0) await onLine(rest);
  } catch (err) {
    if (err instanceof SessionError) throw err;
    throw toSessionError(err, `reading ${file}`);
  } finally {
    closeSync(fd);
  }
}

/** The first line of the file (at most 64 KiB of it), to tell a version 1 bundle from a line-based one. */
export function firstLine(file: string): string {
  const fd = openBundle(file);
  try {
    const buffer = Buffer.alloc(65536);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const end = buffer.subarray(0, n).indexOf(10);
    return buffer.subarray(0, end === -1 ? n : end).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

const IMPORT_NEEDS_FILE = 'import reads a bundle from a regular file: save it to one first';

function openBundle(file: string): number {
  // Checked before opening: a pipe (/dev/stdin) cannot be read twice, and import reads the start first to
  // tell the format; opening a FIFO with no writer would wait for one, signals unheard.
  const info = statSync(resolve(file), { throwIfNoEntry: false });
  if (info && !info.isFile()) throw notRegular(file, IMPORT_NEEDS_FILE);
  try {
    return openSync(resolve(file), 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SessionError('ENOTFOUND', `no bundle file ${file}`, { details: { file } });
    throw toSessionError(err, `reading ${file}`);
  }
}

/**
 * An export's target may be missing, a regular file, or a link to one or to nothing (the link is replaced,
 * not followed); never a directory, a device (/dev/full), a pipe, a socket or a link to one (/dev/stdout),
 * which the rename of the finished bundle would replace for everyone who uses it.
 */
function refuseSpecialFile(target: string, file: string, why: string): void {
  let info;
  try {
    const own = lstatSync(target);
    info = own.isSymbolicLink() ? statSync(target, { throwIfNoEntry: false }) : own;
  } catch {
    // Nothing there (or no way to look): the temp file's creation says what is wrong, if anything.
    return;
  }
  if (info && !info.isFile()) throw notRegular(file, why);
}

function notRegular(file: string, why: string): SessionError {
  return new SessionError('EINVALID', `${file} is not a regular file: ${why}`, { details: { file } });
}

export async function readBundleFile(file: string): Promise<string> {
  try {
    return await readFile(resolve(file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SessionError('ENOTFOUND', `no bundle file ${file}`, { details: { file } });
    throw toSessionError(err, `reading ${file}`);
  }
}

/**
 * Refuses a path ending in a separator, `.` or `..` (`out/`, `notes.txt/.`): a directory's name, never a
 * file's. Resolved, it would lose that ending and name another file (`notes.txt`, replaced by the bundle).
 */
export function refuseDirectoryPath(path: string, what: string): void {
  if (path.trim() === '') {
    const blank = path === '' ? 'empty' : 'blank';
    throw new SessionError('EINVALID', `the bundle's path is ${blank}: name its file`, { details: { file: path } });
  }
  const last = path.split(sep === '/' ? '/' : /[\\/]/).pop();
  if (last !== '' && last !== '.' && last !== '..') return;
  const why = last === '' ? 'ends with a slash' : 'names a directory';
  throw new SessionError('EINVALID', `${what} ${why}: name the bundle's file, not a directory`, {
    details: { file: path },
  });
}

/**
 * `file` as an absolute path. A `..` in it is left for the file system to follow, as a shell does:
 * `link/../x` is beside the link's target, and `notes.txt/../x` is no path at all, where resolve() would
 * drop `link` or `notes.txt` with the `..` and name `./x`, replacing that file if there is one.
 */
export function outputPath(cwd: string, file: string): string {
  if (!file.split(/[\\/]/).includes('..')) return resolve(cwd, file);
  return isAbsolute(file) ? file : `${cwd}${sep}${file}`;
}

/** A bundle written into the store would replace one of its files: a record, the audit trail. */
function refuseInsideStore(target: string, file: string, store: string): void {
  let dir: string;
  let root: string;
  try {
    dir = realpathSync(dirname(target));
    root = realpathSync(store);
  } catch {
    // No such directory (the temp file's creation says so) or no store yet: nothing to replace.
    return;
  }
  if (dir === root || dir.startsWith(root.endsWith(sep) ? root : `${root}${sep}`)) {
    throw new SessionError('EINVALID', `${file} is inside the store ${store}: write the bundle elsewhere`, {
      details: { file, store },
    });
  }
}

/**
 * The start of the names of the bundle's temp files: the bundle's own name. One too long for a temp
 * file's name keeps its first 200 bytes (whole characters) and a hash of the whole name, so that the
 * temp files of two long names that start alike are told apart, and only this bundle's are swept.
 */
function tempBase(target: string): string {
  const name = basename(target);
  if (Buffer.byteLength(name) + TEMP_SUFFIX_MAX_BYTES <= NAME_MAX_BYTES) return name;
  let kept = '';
  let bytes = 0;
  for (const char of name) {
    bytes += Buffer.byteLength(char);
    if (bytes > KEPT_BYTES) break;
    kept += char;
  }
  return `${kept}.${sha256Hex(name).slice(0, 12)}`;
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}

/**
 * Removes `<bundle>.<pid>.<n>.<hex>.tmp` files (the names BundleFile gives this bundle's temp files) of writers
 * that died, or untouched for an hour. Only regular files of exactly that name; best effort.
 */
function removeStaleTemps(target: string, now: number): string[] {
  const base = tempBase(target);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dirname(target));
  } catch {
    return removed;
  }
  for (const name of names) {
    // The bundle itself may have a name of that form: it is never a temp file.
    if (name === basename(target) || !name.startsWith(`${base}.`) || !name.endsWith(TEMP_SUFFIX)) continue;
    const pid = TEMP_NAME.exec(name.slice(base.length))?.[1];
    if (pid === undefined || Number(pid) === process.pid) continue;
    const file = `${dirname(target)}${sep}${name}`;
    try {
      const info = lstatSync(file);
      const age = now - info.mtimeMs;
      if (!info.isFile() || !(age > STALE_MS || (age > DEAD_WRITER_MS && !processRuns(Number(pid))))) continue;
      unlinkSync(file);
      removed.push(file);
    } catch {
      // Gone meanwhile, or not ours to remove: left alone.
    }
  }
  return removed;
}
