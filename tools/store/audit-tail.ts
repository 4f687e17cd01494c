import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { toSessionError } from '../errors.js';

/**
 * Reads what is appended to the active file. Holds the file open; after a rotation (the path names
 * another file) it reads the rest of the old file, then any files rotated since, then the new one.
 */
export class AuditTail {
  private fd: number | undefined;
  private ino = -1;
  private offset = 0;
  private pending = Buffer.alloc(0);
  private readonly file: string;

  /** `active` is the active file's name in `dir`; rotated files are `audit.<n>.jsonl` beside it. */
  constructor(private readonly dir: string, active: string) {
    this.file = path.join(dir, active);
  }

  /** Starts at the current end of the file (or at its start when `fromStart`). */
  start(fromStart: boolean): void {
    this.reopen();
    if (!fromStart && this.fd !== undefined) this.offset = fstatSync(this.fd).size;
  }

  /** Complete new lines since the last call (without their "\n"). */
  read(): string[] {
    const lines = this.drain();
    const current = statIno(this.file);
    if (current !== this.ino) {
      for (const rotated of this.rotatedSince()) lines.push(...rotated.split('\n').filter(Boolean));
      this.reopen();
      lines.push(...this.drain());
    } else if (this.fd !== undefined && fstatSync(this.fd).size < this.offset) {
      this.offset = 0;
    }
    return lines;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /** Whole texts of the files rotated after the one we were reading (found by its inode), oldest first. */
  private rotatedSince(): string[] {
    const texts: string[] = [];
    for (let n = 1; n < 1000; n++) {
      const file = path.join(this.dir, `audit.${n}.jsonl`);
      const ino = statIno(file);
      if (ino === this.ino || ino === -1) break;
      try {
        texts.unshift(readFileSync(file, 'utf8'));
      } catch {
        break;
      }
    }
    return texts;
  }

  private reopen(): void {
    this.close();
    this.offset = 0;
    this.pending = Buffer.alloc(0);
    try {
      this.fd = openSync(this.file, 'r');
      this.ino = fstatSync(this.fd).ino;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw toSessionError(err, `reading ${this.file}`);
      this.ino = -1;
    }
  }

  private drain(): string[] {
    if (this.fd === undefined) return [];
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
    if (end < 0) return [];
    return all.subarray(0, end).toString('utf8').split('\n');
  }
}

function statIno(file: string): number {
  try {
    return statSync(file).ino;
  } catch {
    return -1;
  }
}
