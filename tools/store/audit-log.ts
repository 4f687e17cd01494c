import {
  closeSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';
import { withLock } from './lock.js';
import {
  ensureAreaSync,
  fileProblem,
  notRegular,
  openAppendSync,
  openRegularFileSync,
  READ_FLAGS,
  readOpenedFileSync,
  type OpenedFile,
} from './regular-file.js';
import { randomHex } from '../random.js';
import { ensureStoreSync } from './store-root.js';

export const AUDIT_FILE = 'audit.jsonl';
const ROTATED = /^audit\.(\d+)\.jsonl$/;
/** Store-level locks are named with a leading "." in `.locks/`, so no session's lock can collide. */
const ROTATE_LOCK = join('.locks', '.audit.lock');
/** Near the longest string V8 makes: a larger audit file is refused with a clear error, not a crash. */
const MAX_FILE_BYTES = 512 * 1024 * 1024;

interface AuditLogOptions {
  /** Rotate when the active file reaches this size. */
  maxBytes: number;
  /** Rotated files kept: audit.1.jsonl (newest) … audit.<keep>.jsonl (oldest). */
  keep: number;
  lockTimeoutMs: number;
}

interface AuditFileText {
  /** Relative to the store, e.g. `audit.1.jsonl`. */
  file: string;
  text: string;
}

/**
 * `<store>/audit.jsonl` and its rotated files. Appends take no lock: each line is one `write` on an
 * O_APPEND descriptor, opened per append so that a rotation (a rename) is seen at once. No fsync:
 * the line records a change already made durable; a crash can lose the last lines, not tear others.
 */
export class AuditLog {
  readonly dir: string;
  private readonly options: AuditLogOptions;

  constructor(storeDir: string, options: AuditLogOptions) {
    this.dir = storeDir;
    this.options = options;
  }

  get activePath(): string {
    return join(this.dir, AUDIT_FILE);
  }

  /**
   * Appends whole lines (each under MAX_LINE_BYTES), then rotates if the file grew past its limit.
   * With `sync`, the lines go in one write followed by an fsync: a bulk command records a batch of
   * changes that way before it marks them done, so that no kill can leave them done and unrecorded.
   */
  async append(lines: string[], sync = false): Promise<void> {
    let size = 0;
    try {
      const fd = this.openActive();
      try {
        if (sync) {
          writeAll(fd, Buffer.from(lines.join('')));
          fsyncSync(fd);
        } else for (const line of lines) writeSync(fd, line);
        size = fstatSync(fd).size;
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      throw toSessionError(err, `appending to ${this.activePath}`);
    }
    if (size >= this.options.maxBytes) await this.rotate();
  }

  /** Writes raw bytes at the end of the active file (doctor's repair of a torn last line). */
  appendRaw(text: string): void {
    const fd = this.openActive();
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
  }

  /** Whether the active file ends in the middle of a line (a torn write, or one in flight). */
  endsTorn(): boolean {
    try {
      const fd = openSync(this.activePath, READ_FLAGS);
      try {
        const size = fstatSync(fd).size;
        if (size === 0) return false;
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        return last[0] !== 0x0a;
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw toSessionError(err, `reading ${this.activePath}`);
    }
  }

  /** Keeps copies of bad lines in `.quarantine/.audit-<stamp>-<hex>.jsonl` (lossless repair); returns the file. */
  async quarantineLines(lines: string[], now: number): Promise<string> {
    const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
    const file = join(this.dir, '.quarantine', `.audit-${stamp}-${randomHex(4)}.jsonl`);
    try {
      ensureStoreSync(this.dir);
      mkdirSync(dirname(file), { recursive: true });
      await writeFileAtomic(file, lines.map((l) => `${l}\n`).join(''));
    } catch (err) {
      throw toSessionError(err, `writing ${file}`);
    }
    return file;
  }

  /**
   * Every audit file, oldest first (audit.<keep>.jsonl … audit.1.jsonl, audit.jsonl); absent ones skipped.
   * Read one at a time as the caller asks for the next: a 30 MiB trail is never all in memory as text.
   * Every file is opened and checked before the first is read, so that a bad one (a link, a FIFO, a
   * directory such as an old session named audit.1.jsonl) fails the read before anything of it is used.
   */
  *readAll(): Generator<AuditFileText> {
    const opened: { file: string; handle: OpenedFile }[] = [];
    try {
      for (const file of [...this.rotatedFiles().reverse(), AUDIT_FILE]) {
        const handle = openAuditFile(this.dir, file);
        if (handle) opened.push({ file, handle });
      }
      for (let next = opened.shift(); next; next = opened.shift()) {
        const data = readOpenedFileSync(next.handle);
        yield { file: next.file, text: data.toString('utf8') };
      }
    } finally {
      for (const { handle } of opened) closeSync(handle.fd);
    }
  }

  /** Rotated file names, newest first. */
  rotatedFiles(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw toSessionError(err, `reading the store ${this.dir}`);
    }
    return names
      .map((name) => ROTATED.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => Number(a[1]) - Number(b[1]))
      .map((m) => m[0]);
  }

  /** Shifts audit.jsonl → audit.1.jsonl → … under a store-level lock, so two rotators never race. */
  async rotate(force = false): Promise<void> {
    const lockPath = join(this.dir, ROTATE_LOCK);
    ensureStoreSync(this.dir);
    ensureAreaSync(dirname(lockPath));
    await withLock(lockPath, { timeoutMs: this.options.lockTimeoutMs, what: 'the audit trail' }, async () => {
      // Another process may have rotated while we waited for the lock.
      if (!force && this.activeSize() < this.options.maxBytes) return;
      const keep = this.options.keep;
      const names = this.rotatedFiles();
      // Only regular files move: a link would be followed by the next read, a directory is not ours.
      for (const name of [AUDIT_FILE, ...names]) {
        const problem = fileProblem(join(this.dir, name));
        if (problem)
          throw new SessionError('ECORRUPT', `cannot rotate the audit trail: ${problem}`, {
            details: { path: join(this.dir, name) },
          });
      }
      for (const name of names) {
        if (Number(ROTATED.exec(name)![1]) >= keep) unlinkSync(join(this.dir, name));
      }
      for (let n = keep - 1; n >= 1; n--)
        renameIfExists(join(this.dir, `audit.${n}.jsonl`), join(this.dir, `audit.${n + 1}.jsonl`));
      renameIfExists(this.activePath, join(this.dir, 'audit.1.jsonl'));
    });
  }

  private activeSize(): number {
    try {
      return lstatSync(this.activePath).size;
    } catch {
      return 0;
    }
  }

  /** O_NOFOLLOW and a regular file only: a link planted in a cloned store must not be appended through. */
  private openActive(): number {
    try {
      return openAppendSync(this.activePath);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EISDIR') throw notRegular(this.activePath, 'a directory');
      if (code !== 'ENOENT') throw err;
      ensureStoreSync(this.dir);
      mkdirSync(this.dir, { recursive: true });
      return openAppendSync(this.activePath);
    }
  }
}

function renameIfExists(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function writeAll(fd: number, data: Buffer): void {
  for (let at = 0; at < data.length;) at += writeSync(fd, data, at, data.length - at);
}

/** An audit file opened for readAll: never a link's target, a FIFO or a directory (ECORRUPT naming it). */
function openAuditFile(dir: string, file: string): OpenedFile | undefined {
  try {
    return openRegularFileSync(join(dir, file), { maxBytes: MAX_FILE_BYTES });
  } catch (err) {
    if (err instanceof SessionError)
      throw new SessionError(err.code, `cannot read the audit trail: ${err.message}; move it out of the store`, {
        cause: err,
        details: err.details,
      });
    throw toSessionError(err, `reading ${file}`);
  }
}
