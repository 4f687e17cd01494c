import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { toSessionError } from '../errors.js';

/** One open file and how far it has been read; `pending` is a line not yet ended by "\n". */
class Cursor {
  offset = 0;
  pending = Buffer.alloc(0);

  constructor(
    readonly fd: number,
    readonly ino: number,
  ) {}

  static open(file: string): Cursor | undefined {
    try {
      const fd = openSync(file, 'r');
      return new Cursor(fd, fstatSync(fd).ino);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw toSessionError(err, `reading ${file}`);
    }
  }

  /** Complete new lines (without their "\n"). */
  drain(): string[] {
    const chunks: Buffer[] = [this.pending];
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = readSync(this.fd, buffer, 0, buffer.length, this.offset);
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
      this.offset += n;
    }
    const all = Buffer.concat(chunks);
    const end = all.lastIndexOf(0x0a);
    this.pending = end < 0 ? all : all.subarray(end + 1);
    return end < 0 ? [] : all.subarray(0, end).toString('utf8').split('\n');
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Reads what is appended to the active file. After a rotation (the path names another file) it reads
 * the rest of the old file, the files rotated since, then the new one; the old file stays open for
 * one more poll, for an append that raced the rotation.
 */
export class AuditTail {
  private current: Cursor | undefined;
  private previous: Cursor | undefined;
  private readonly file: string;

  /** `active` is the active file's name in `dir`; rotated files are `audit.<n>.jsonl` beside it. */
  constructor(
    private readonly dir: string,
    active: string,
  ) {
    this.file = path.join(dir, active);
  }

  /** Starts at the current end of the file (or at its start when `fromStart`). */
  start(fromStart: boolean): void {
    this.current = Cursor.open(this.file);
    if (this.current && !fromStart) this.current.offset = fstatSync(this.current.fd).size;
  }

  /** Complete new lines since the last call (without their "\n"). */
  read(): string[] {
    const lines = this.previous?.drain() ?? [];
    this.previous?.close();
    this.previous = undefined;
    lines.push(...(this.current?.drain() ?? []));
    if (statIno(this.file) === (this.current?.ino ?? -1)) return lines;
    const old = this.current;
    // With no file open before, the rotated files all hold entries from before the start.
    if (old) for (const text of this.rotatedSince(old.ino)) lines.push(...text.split('\n').filter(Boolean));
    this.previous = old;
    this.current = Cursor.open(this.file);
    lines.push(...(this.current?.drain() ?? []));
    return lines;
  }

  close(): void {
    this.previous?.close();
    this.current?.close();
    this.previous = this.current = undefined;
  }

  /** Whole texts of the files rotated after the one with inode `ino`, oldest first. */
  private rotatedSince(ino: number): string[] {
    const texts: string[] = [];
    for (let n = 1; n < 1000; n++) {
      const file = path.join(this.dir, `audit.${n}.jsonl`);
      const found = statIno(file);
      if (found === ino || found === -1) break;
      try {
        texts.unshift(readFileSync(file, 'utf8'));
      } catch {
        break;
      }
    }
    return texts;
  }
}

function statIno(file: string): number {
  try {
    return statSync(file).ino;
  } catch {
    return -1;
  }
}
