// An executable's stdin, stdout and stderr (fd 0, 1 and 2), read and written with plain calls on the
// descriptors. `process.stdin`, `process.stdout` and `process.stderr` build a Node stream on first use
// and load `net` for a pipe: about a tenth of a hook's start-up, and 3 to 5 ms of every CLI command
// whose output is piped. The streams are only used where plain calls cannot do: a non-blocking
// descriptor (EAGAIN), a terminal, and a pipe while a command waits for signals (see fdOutput).
import { fstatSync, readSync, statSync, writeSync } from 'node:fs';
import { builtinModule } from './builtin.js';

export type StdinResult = { ok: true; text: string } | { ok: false; bytes: number };

/**
 * Hook payloads are a few KiB, but a delegation's prompt or a subagent's last message can be long: the cap
 * is the record's (16 MiB), so that no payload a session could hold is dropped, and a larger one is not parsed.
 */
export const STDIN_MAX_BYTES = 16 * 1024 * 1024;

/** Reads stdin to its end, giving up (without buffering more) once it passes STDIN_MAX_BYTES. */
export async function readStdin(): Promise<StdinResult> {
  const max = STDIN_MAX_BYTES;
  // `process.stdin` is only touched (and Node's stream machinery loaded) when plain reads cannot be used.
  const direct = readStdinSync(max);
  if (direct) return direct;
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    bytes += buffer.length;
    if (bytes > max) return { ok: false, bytes };
    chunks.push(buffer);
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}

/**
 * Reads fd 0 to its end with plain reads, giving up once past `max` bytes. Cheaper at start-up than
 * `process.stdin`, which loads Node's stream machinery. Undefined when stdin is non-blocking (EAGAIN):
 * the caller then reads the stream instead.
 */
function readStdinSync(max: number): StdinResult | undefined {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let n: number;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EOF') break;
      if (code === 'EAGAIN' && bytes === 0) return undefined;
      throw err;
    }
    if (n === 0) break;
    bytes += n;
    if (bytes > max) return { ok: false, bytes };
    chunks.push(chunk.subarray(0, n));
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}

/**
 * Writes all of `text` to fd 1 or 2 with plain writes. Touching `process.stdout` costs a hook about a
 * tenth of Node's start-up (it builds a stream and loads `net` for a pipe). A non-blocking descriptor
 * that fills up (EAGAIN) gets the rest through the stream, which waits for it to drain: then it
 * returns false (the process must not exit before the stream is done). If the reader closes the pipe
 * meanwhile, the rest is dropped quietly and the process ends normally.
 */
export function writeAllSync(fd: 1 | 2, text: string): boolean {
  const buffer = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += writeSync(fd, buffer, offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      const stream = fd === 1 ? process.stdout : process.stderr;
      // A reader that goes away while we wait (EPIPE) leaves nobody to tell: no unhandled 'error'.
      stream.on('error', () => undefined);
      stream.write(buffer.subarray(offset));
      return false;
    }
  }
  return true;
}

/** An output of the CLI: stdout or stderr. */
export interface Output {
  /** Whether the descriptor is a terminal (then it is written through its stream). */
  readonly isTTY: boolean;
  /** Writes `text` after everything written before. False when it waits in the stream for a slow reader. */
  write(text: string): boolean;
  /** Resolves once nothing waits in the stream any more (at once when nothing does). */
  drain(): Promise<void>;
}

/**
 * Writes to fd 1 or 2, in order: plain writes while they work (a file, a pipe), the stream for a
 * terminal, and the stream for the rest from the first EAGAIN on (a non-blocking pipe that filled up), so
 * that nothing written later overtakes what waits in its buffer. A plain write to a pipe whose reader does
 * not read blocks the process, signals included: while the command listens for SIGINT or SIGTERM (a bulk
 * command that stops cleanly, `audit --follow`), pipes and sockets are written through the stream too.
 * A reader that went away (EPIPE, ECONNRESET) drops the rest quietly; any other failure (a full disk) is
 * given to `onError` once, and the rest is dropped.
 */
export function fdOutput(fd: 1 | 2, onError: (err: NodeJS.ErrnoException) => void): Output {
  const kind = descriptorKind(fd);
  let stream: NodeJS.WriteStream | undefined;
  let gone = false;
  const fail = (err: NodeJS.ErrnoException) => {
    if (gone) return;
    gone = true;
    if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') onError(err);
  };
  const toStream = () => {
    stream = fd === 1 ? process.stdout : process.stderr;
    stream.on('error', fail);
    return stream;
  };
  const wouldHoldUpSignals = () =>
    kind === 'pipe' && process.listenerCount('SIGINT') + process.listenerCount('SIGTERM') > 0;
  if (kind === 'terminal') toStream();
  return {
    isTTY: kind === 'terminal',
    write(text) {
      if (gone) return true;
      if (stream || wouldHoldUpSignals()) return (stream ?? toStream()).write(text);
      const buffer = Buffer.from(text, 'utf8');
      let offset = 0;
      try {
        while (offset < buffer.length) offset += writeSync(fd, buffer, offset);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') fail(err as NodeJS.ErrnoException);
        else return toStream().write(buffer.subarray(offset));
      }
      return true;
    },
    drain: () =>
      new Promise<void>((resolve) => {
        const waiting = stream;
        if (gone || !waiting?.writableNeedDrain) return resolve();
        const done = () => {
          waiting.off('drain', done).off('error', done).off('close', done);
          resolve();
        };
        waiting.on('drain', done).on('error', done).on('close', done);
      }),
  };
}

/**
 * What fd 1 or 2 is. A terminal is a character device; so is /dev/null, where scripts and cron jobs send
 * what they do not read: told apart by its device number, since `node:tty`, which tells the others apart,
 * loads `net`.
 */
function descriptorKind(fd: 1 | 2): 'terminal' | 'pipe' | 'other' {
  try {
    const stats = fstatSync(fd);
    if (stats.isFIFO() || stats.isSocket()) return 'pipe';
    if (!stats.isCharacterDevice() || stats.rdev === devNull()) return 'other';
    return builtinModule('node:tty').isatty(fd) ? 'terminal' : 'other';
  } catch {
    return 'other';
  }
}

function devNull(): number | undefined {
  try {
    return statSync('/dev/null').rdev;
  } catch {
    return undefined;
  }
}
