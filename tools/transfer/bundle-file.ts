import {
  closeSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
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

/**
 * File names are at most 255 bytes (ext4, xfs, btrfs, APFS), and a temp file's name adds up to 33 to
 * the bundle's (`.<pid>.<n>.<hex>.tmp`): a longer bundle name is cut to this many bytes in its temp
 * files' names.
 */
const TEMP_BASE_BYTES = 255 - 33;

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

  constructor(private readonly file: string) {
    this.target = resolve(file);
    refuseSpecialFile(this.target, file, 'export writes the bundle to a regular file, which it replaces whole');
    // An export killed mid-write left its temp file beside the bundle, where no sweep of the store looks.
    removeStaleTemps(this.target, Date.now());
    this.temp = join(dirname(this.target), `${tempBase(this.target)}.${process.pid}.1.${randomHex(6)}${TEMP_SUFFIX}`);
    this.fd = this.io(() => openSync(this.temp, 'wx', 0o644));
    // A process ended mid-write (a second Ctrl-C exits at once) takes its temp file with it.
    process.once('exit', this.removeOnExit);
  }

  private readonly removeOnExit = () => this.abort();

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
    this.io(() => renameSync(this.temp, this.target));
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
    try {
      unlinkSync(this.temp);
    } catch {
      // Gone already.
    }
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

/** The start of the names of the bundle's temp files: its own name, cut to fit (on a character's boundary). */
function tempBase(target: string): string {
  const name = basename(target);
  if (Buffer.byteLength(name) <= TEMP_BASE_BYTES) return name;
  let cut = Buffer.from(name).subarray(0, TEMP_BASE_BYTES).toString();
  // A character cut in half decodes as U+FFFD: drop it.
  if (cut.endsWith('\uFFFD') && !name.startsWith(cut)) cut = cut.slice(0, -1);
  return cut;
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
    if (!name.startsWith(`${base}.`) || !name.endsWith(TEMP_SUFFIX)) continue;
    const pid = TEMP_NAME.exec(name.slice(base.length))?.[1];
    if (pid === undefined || Number(pid) === process.pid) continue;
    const file = join(dirname(target), name);
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
