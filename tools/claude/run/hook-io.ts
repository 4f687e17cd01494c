// A hook process's stdin and stdout: Claude Code's payload in, the protocol answer out.
import { readSync, writeSync } from 'node:fs';

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
