/**
 * The store opens only regular files and directories it made. A store arrives in cloned
 * repositories, so any name in it may be a FIFO (a read would block forever), a device, or a
 * symbolic link to a file outside the store (a read would quote it, a write would change it).
 * Opening with O_NOFOLLOW and checking the descriptor with fstat costs no extra call over readFile.
 */
import { isUtf8 } from 'node:buffer';
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, type Stats } from 'node:fs';
import { SessionError, toSessionError } from '../errors.js';

// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
// O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of blocking the opener.
const APPEND_FLAGS =
  constants.O_WRONLY |
  constants.O_APPEND |
  constants.O_CREAT |
  constants.O_NOFOLLOW |
  constants.O_NONBLOCK |
  constants.O_NOCTTY;

interface ReadOptions {
  /** Larger files are refused (ECORRUPT) without being read. */
  maxBytes: number;
  /** Follow a symbolic link (a file the user names, such as the config file); still only a regular file. */
  follow?: boolean;
}

/** What a file is, for messages: "a FIFO", "a directory", … */
export function kindOf(info: Stats): string {
  if (info.isFile()) return 'a regular file';
  if (info.isDirectory()) return 'a directory';
  if (info.isSymbolicLink()) return 'a symbolic link';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  return 'a device';
}

/**
 * The bytes of a regular file, or undefined when it does not exist. Anything else (a FIFO, a
 * device, a directory, a symbolic link, a file over `maxBytes`) is ECORRUPT naming the path and
 * what it is; nothing of a link's target is read. Other failures are thrown as they come.
 */
export function readRegularFileSync(file: string, options: ReadOptions): Buffer | undefined {
  const opened = openRegularFileSync(file, options);
  return opened && readOpenedFileSync(opened);
}

/** A regular file opened and checked as readRegularFileSync does, read later (readOpenedFileSync) or closed. */
export interface OpenedFile {
  fd: number;
  size: number;
}

/** The first half of readRegularFileSync: undefined when the file does not exist, the same errors. */
export function openRegularFileSync(file: string, options: ReadOptions): OpenedFile | undefined {
  let fd: number;
  try {
    fd = openSync(file, options.follow ? READ_FLAGS & ~constants.O_NOFOLLOW : READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    // ELOOP is what O_NOFOLLOW gives for a symbolic link; ENXIO a socket or a device with no driver.
    if (code === 'ELOOP') throw notRegular(file, 'a symbolic link');
    if (code === 'ENXIO') throw notRegular(file, 'a socket or device');
    throw err;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw notRegular(file, kindOf(info));
    if (info.size > options.maxBytes) {
      throw new SessionError(
        'ECORRUPT',
        `${file} is ${info.size} bytes, over the ${describeBytes(options.maxBytes)} limit`,
        { details: { path: file, bytes: info.size } },
      );
    }
    return { fd, size: info.size };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The bytes of an opened file (up to its size when opened); the file is closed. */
export function readOpenedFileSync(opened: OpenedFile): Buffer {
  try {
    return readAll(opened.fd, opened.size);
  } finally {
    closeSync(opened.fd);
  }
}

/** Strict UTF-8: invalid bytes are ECORRUPT, never turned into U+FFFD (the next write would keep those). */
export function decodeUtf8(data: Buffer, file: string): string {
  // isUtf8 validates natively (a strict TextDecoder costs a record several times as much).
  if (!isUtf8(data)) throw new SessionError('ECORRUPT', `${file} is not valid UTF-8`, { details: { path: file } });
  return data.toString('utf8');
}

/** A descriptor for appending to a regular file (created if missing); refuses links, FIFOs, devices. */
export function openAppendSync(file: string, mode = 0o644): number {
  let fd: number;
  try {
    fd = openSync(file, APPEND_FLAGS, mode);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw notRegular(file, 'a symbolic link');
    if (code === 'ENXIO') throw notRegular(file, 'a FIFO or device');
    throw err;
  }
  const info = fstatSync(fd);
  if (info.isFile()) return fd;
  closeSync(fd);
  throw notRegular(file, kindOf(info));
}

/** Why a store area (`.trash`, `.quarantine`, …) cannot be used, or undefined when it is a directory or absent. */
export function areaProblem(dir: string): string | undefined {
  return notWhatItShouldBe(
    dir,
    (info) => info.isDirectory(),
    'a directory the store made; move it out of the store (or delete it) and run the command again',
  );
}

/** Why `file` cannot be written by the store, or undefined when it is a regular file or absent. */
export function fileProblem(file: string): string | undefined {
  return notWhatItShouldBe(
    file,
    (info) => info.isFile(),
    'a regular file the store made; move it out of the store (or delete it)',
  );
}

function notWhatItShouldBe(file: string, ok: (info: Stats) => boolean, should: string): string | undefined {
  let info: Stats;
  try {
    info = lstatSync(file);
  } catch {
    return undefined;
  }
  return ok(info) ? undefined : `${file} is ${kindOf(info)}, not ${should}`;
}

/**
 * Throws ECORRUPT when `dir` exists as anything but a directory (a symbolic link would carry sessions out of
 * the store).
 */
export function assertArea(dir: string): void {
  const problem = areaProblem(dir);
  if (problem) throw new SessionError('ECORRUPT', problem, { details: { path: dir } });
}

/**
 * Makes a store area (and any missing parent) unless it is there as a directory; ECORRUPT when it is
 * anything else (through a symbolic link, locks and markers would be written outside the store).
 * One lstat when it exists: no more than the mkdir it replaces.
 */
export function ensureAreaSync(dir: string): void {
  try {
    if (lstatSync(dir).isDirectory()) return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw toSessionError(err, `creating ${dir}`);
    try {
      mkdirSync(dir, { recursive: true });
    } catch (made) {
      throw toSessionError(made, `creating ${dir}`);
    }
    return;
  }
  assertArea(dir);
}

export function notRegular(file: string, kind: string): SessionError {
  return new SessionError('ECORRUPT', `${file} is ${kind}, not a regular file`, { details: { path: file, kind } });
}

function readAll(fd: number, size: number): Buffer {
  const buffer = Buffer.allocUnsafe(size);
  let offset = 0;
  while (offset < size) {
    const n = readSync(fd, buffer, offset, size - offset, null);
    if (n === 0) break;
    offset += n;
  }
  // A file that shrank while read: what was there. One that grew is read up to its size at the fstat.
  return offset === size ? buffer : buffer.subarray(0, offset);
}

function describeBytes(bytes: number): string {
  return bytes % 1048576 === 0 ? `${bytes / 1048576} MiB` : `${bytes} bytes`;
}
