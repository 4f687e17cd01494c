// How the executables write stdout (tools/stdio.ts): plain writes to a pipe, so that a piped command
// builds no stream; the stream while the command listens for SIGINT/SIGTERM, so that a reader that stops
// reading cannot keep a signal from being handled; a reader that goes away ends the output quietly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fullFifo, readAll, spawnOnFifo } from './helpers/full-pipe.mjs';
import { CLI, cleanEnv, DIST, loadLibrary, tempDir } from './helpers/run.mjs';

const STDIO = pathToFileURL(path.join(DIST, 'tools', 'stdio.js')).href;

/**
 * A script that writes `megabytes` MB to stdout through fdOutput, after setting a SIGTERM handler when
 * `handler` is true; "written" on stderr once every write call has returned, then which of Node's stream
 * modules it loaded (`net` comes with a stream on a pipe).
 */
function writerScript(dir, { handler, megabytes }) {
  const script = path.join(dir, `writer-${handler}.mjs`);
  writeFileSync(
    script,
    `import { fdOutput } from ${JSON.stringify(STDIO)};
${handler ? "process.on('SIGTERM', () => { process.stderr.write('stopping\\n'); process.exit(130); });" : ''}
const out = fdOutput(1, (err) => { process.stderr.write('failed ' + err.code + '\\n'); process.exitCode = 4; });
for (let i = 0; i < ${megabytes}; i++) out.write('x'.repeat(1 << 20));
const net = process.moduleLoadList.includes('NativeModule net');
process.stderr.write('written net=' + net + '\\n');
`,
  );
  return script;
}

function start(script, args = []) {
  const child = spawn(process.execPath, [script, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const lines = [];
  child.stderr.setEncoding('utf8').on('data', (d) => {
    stderr += d;
    lines.push(...d.split('\n').filter(Boolean));
  });
  const stderrLine = (prefix) =>
    new Promise((resolve) => {
      const look = () => {
        const line = lines.find((l) => l.startsWith(prefix));
        if (line) resolve(line);
        else child.stderr.once('data', () => setImmediate(look));
      };
      look();
    });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, stderrLine, exited, stderr: () => stderr };
}

test('output to a pipe is written with plain writes: no stream, no net', async (t) => {
  const run = start(writerScript(tempDir(t), { handler: false, megabytes: 1 }));
  let bytes = 0;
  run.child.stdout.on('data', (d) => (bytes += d.length));
  assert.equal(await run.stderrLine('written'), 'written net=false');
  assert.deepEqual(await run.exited, { code: 0, signal: null });
  assert.equal(bytes, 1 << 20);
});

test('a command that listens for SIGTERM is never stuck in a write to a reader that stopped reading', async (t) => {
  const run = start(writerScript(tempDir(t), { handler: true, megabytes: 8 }));
  // Nothing is read: the socket between the two fills after a few hundred KB. Plain writes would block
  // there, and the SIGTERM handler could not run until the reader read again.
  run.child.stdout.pause();
  assert.equal(await run.stderrLine('written'), 'written net=true');
  run.child.kill('SIGTERM');
  assert.deepEqual(await run.exited, { code: 130, signal: null });
  assert.match(run.stderr(), /stopping\n/);
  run.child.stdout.destroy();
});

test('a reader that closes its end of the socket mid-output ends the CLI quietly with its own exit code', async (t) => {
  const { Sessions } = await loadLibrary();
  const base = tempDir(t);
  const dir = path.join(base, 'store');
  const sessions = Sessions.open({ dir, cwd: base, env: {} });
  for (let i = 0; i < 20; i++) await sessions.create({ agentName: 'big', purpose: 'p'.repeat(50_000) });
  // Node gives a child's 'pipe' stdio as a socket. Closed by its reader mid-output, it fails the CLI's next
  // write with EPIPE, or with ECONNRESET when the reader left data unread (seen with a reader that reads
  // 1,000 bytes and closes): either way the reader went away.
  for (let round = 0; round < 5; round++) {
    const run = start(CLI, ['--dir', dir, 'list', '--json']);
    run.child.stdout.once('data', () => run.child.stdout.destroy());
    assert.deepEqual(await run.exited, { code: 0, signal: null }, `round ${round}: ${run.stderr()}`);
    assert.equal(run.stderr(), '', `round ${round}`);
  }
});

test('output to a full non-blocking pipe (EAGAIN) arrives whole and in order before the CLI exits', async (t) => {
  const { Sessions } = await loadLibrary();
  const root = tempDir(t);
  const store = path.join(root, 'store');
  // About 120 kB of JSON, written in pieces: every piece after the first EAGAIN waits in Node's stream.
  const sessions = Sessions.open({ dir: store, cwd: root, env: {} });
  const ids = Array.from({ length: 30 }, (_, i) => `s${String(i).padStart(2, '0')}`);
  for (const id of ids) await sessions.create({ agentName: 'worker', id, purpose: 'p'.repeat(4000) });
  const pipe = fullFifo(root);
  const child = spawnOnFifo(pipe, [CLI, 'list', '--json', '--dir', store], {
    cwd: root,
    env: cleanEnv({ HOME: root }),
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = new Promise((resolve) => child.on('close', resolve));
  const text = await readAll(pipe);
  assert.equal(await code, 0, stderr);
  assert.equal(stderr, '');
  assert.equal(text.slice(0, pipe.filled), '.'.repeat(pipe.filled));
  const listed = JSON.parse(text.slice(pipe.filled));
  assert.deepEqual(
    listed.sessions.map((s) => [s.agent_id, s.purpose.length]).sort(),
    ids.map((id) => [id, 4000]),
  );
});
