import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
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
 * the rest of the old file, the rotated files it has not read, then the new one; the old file stays
 * open for one more poll, for an append that raced the rotation. Files are told apart by inode.
 */
export class AuditTail {
  private current: Cursor | undefined;
  private previous: Cursor | undefined;
  /** Inodes of rotated files already read, or there before the start. */
  private consumed = new Set<number>();
  private readonly file: string;

  /** `active` is the active file's name in `dir`; rotated files are `audit.<n>.jsonl` beside it. */
  constructor(
    private readonly dir: string,
    active: string,
  ) {
    this.file = join(dir, active);
  }

  /** Starts at the current end of the file (or at its start when `fromStart`). */
  start(fromStart: boolean): void {
    this.current = Cursor.open(this.file);
    if (this.current && !fromStart) this.current.offset = fstatSync(this.current.fd).size;
    for (const name of this.rotatedNames()) {
      const ino = statIno(join(this.dir, name));
      if (ino !== -1) this.consumed.add(ino);
    }
  }

  /** Complete new lines since the last call (without their "\n"). */
  read(): string[] {
    const lines = this.previous?.drain() ?? [];
    this.previous?.close();
    this.previous = undefined;
    lines.push(...(this.current?.drain() ?? []));
    if (statIno(this.file) === (this.current?.ino ?? -1)) return lines;
    // The new file is opened before the rotated ones are listed: a rotation in between is seen next poll.
    const next = Cursor.open(this.file);
    if (this.current) this.consumed.add(this.current.ino);
    const present = new Set<number>();
    for (const cursor of this.openRotated()) {
      present.add(cursor.ino);
      if (!this.consumed.has(cursor.ino) && cursor.ino !== next?.ino) {
        this.consumed.add(cursor.ino);
        lines.push(...cursor.drain(), ...(cursor.pending.length > 0 ? [cursor.pending.toString('utf8')] : []));
      }
      cursor.close();
    }
    // Forget files that are gone, so that a reused inode is not mistaken for one already read.
    for (const ino of this.consumed) if (!present.has(ino)) this.consumed.delete(ino);
    this.previous = this.current;
    this.current = next;
    lines.push(...(next?.drain() ?? []));
    return lines;
  }

  close(): void {
    this.previous?.close();
    this.current?.close();
    this.previous = this.current = undefined;
  }

  /**
   * The rotated files, oldest first, each open (read through the descriptor: a name can point to
   * another file by the time it is opened). A rotation while they are opened renames each one place
   * up, so a name could give a newer file than its place says and the entries would come out of
   * order: listed and opened again until the names and their files stay the same throughout.
   */
  private openRotated(): Cursor[] {
    for (let attempt = 1; ; attempt++) {
      const names = this.rotatedNames();
      const cursors = names.map((name) => Cursor.open(join(this.dir, name)));
      const again = this.rotatedNames();
      const stable =
        again.length === names.length &&
        again.every((name, i) => name === names[i] && statIno(join(this.dir, name)) === (cursors[i]?.ino ?? -1));
      if (stable || attempt === 10) return cursors.filter((c): c is Cursor => c !== undefined);
      for (const cursor of cursors) cursor?.close();
    }
  }

  /** Rotated file names, oldest first. */
  private rotatedNames(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((n) => ROTATED.test(n))
        .sort((a, b) => rank(b) - rank(a));
    } catch {
      return [];
    }
  }
}

const ROTATED = /^audit\.(\d+)\.jsonl$/;

function rank(name: string): number {
  return Number(ROTATED.exec(name)?.[1] ?? 0);
}

function statIno(file: string): number {
  try {
    return statSync(file).ino;
  } catch {
    return -1;
  }
}
