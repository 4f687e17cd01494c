// A stdout that is a full, non-blocking pipe: the first plain write of the process gets EAGAIN, which
// the executables (tools/stdio.ts) answer by handing the rest to Node's stream.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, createReadStream, openSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * A FIFO in `dir` filled up to the brim, with a write end to give a child as its stdout and a read end
 * (`probe`) that keeps the FIFO open until `readAll` or until the test closes it (the reader gone).
 */
export function fullFifo(dir) {
  const fifo = path.join(dir, 'stdout.fifo');
  const made = spawnSync('mkfifo', [fifo]);
  assert.equal(made.status, 0, `mkfifo: ${made.stderr}`);
  const probe = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  const filler = Buffer.alloc(4096, 0x2e);
  let filled = 0;
  for (;;) {
    try {
      filled += writeSync(writer, filler);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
      break;
    }
  }
  return { fifo, probe, writer, filled };
}

/**
 * Starts `node <args>` with the FIFO's write end as a non-blocking stdout (a perl wrapper sets
 * O_NONBLOCK: a Node parent makes its children's stdio blocking). Closes the parent's copy of the write end.
 */
export function spawnOnFifo(pipe, args, options) {
  const nonBlocking = 'fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV or die';
  const child = spawn('perl', ['-MFcntl', '-e', nonBlocking, process.execPath, ...args], {
    ...options,
    stdio: ['pipe', pipe.writer, 'pipe'],
  });
  closeSync(pipe.writer);
  return child;
}

/** Everything the FIFO holds until its last writer closes it, the filler included. */
export async function readAll(pipe) {
  const reader = openSync(pipe.fifo, 'r');
  closeSync(pipe.probe);
  const chunks = [];
  for await (const chunk of createReadStream(null, { fd: reader })) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}
