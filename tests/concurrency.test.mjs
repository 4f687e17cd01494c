// Many real processes on one session at once: no update is lost, the file always parses, and a
// contested create has exactly one winner.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cleanEnv, DIST, loadLibrary, runCli, tempDir } from './helpers/run.mjs';

const PROCESSES = 8;
const UPDATES = 25;

// Each worker imports the library, says "ready", waits for "go" on stdin (so all start together), then works.
const WORKER = `
import * as lib from ${JSON.stringify(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href)};
const [dir, mode, name, count] = process.argv.slice(2);
// Eight writers queue for one lock: on a loaded machine a turn can come later than the default 10 s.
const sessions = lib.Sessions.open({ dir, cwd: dir, env: { AGENT_SESSION_LOCK_TIMEOUT_MS: '60000' } });
process.stdout.write('ready\\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
if (mode === 'update') {
  for (let i = 0; i < Number(count); i++) {
    await sessions.update('shared', { metadata: { [name + '-' + i]: i }, error: name + '-' + i });
  }
  process.stdout.write('done\\n');
} else {
  try {
    await sessions.create({ agentName: name, id: 'contested' });
    process.stdout.write('created\\n');
  } catch (err) {
    process.stdout.write((err.code ?? 'unknown') + '\\n');
  }
}
process.stdin.destroy();
`;

/** A temp store and the worker script next to it. */
function setup(t) {
  const base = tempDir(t);
  const script = path.join(base, 'worker.mjs');
  writeFileSync(script, WORKER);
  return { dir: path.join(base, 'store'), script };
}

/** Starts `n` workers, releases them together once all are ready; resolves their {code, stdout, stderr}. */
async function runTogether(script, argsFor, n) {
  const children = [];
  const ready = [];
  const finished = [];
  for (let i = 0; i < n; i++) {
    const child = spawn(process.execPath, [script, ...argsFor(i)], {
      env: cleanEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    ready.push(
      new Promise((resolve, reject) => {
        child.stdout.on('data', (d) => {
          stdout += d;
          if (stdout.startsWith('ready\n')) resolve();
        });
        child.on('exit', () => reject(new Error(`worker ${i} exited before it was ready: ${stderr}`)));
      }),
    );
    finished.push(new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))));
    children.push(child);
  }
  await Promise.all(ready);
  for (const child of children) child.stdin.write('go\n');
  return Promise.all(finished);
}

test(
  `${PROCESSES} processes x ${UPDATES} updates on one session: every change is kept`,
  { timeout: 120_000 },
  async (t) => {
    const { dir, script } = setup(t);
    const { Sessions } = await loadLibrary();
    await Sessions.open({ dir, cwd: dir, env: {} }).create({
      agentName: 'shared',
      id: 'shared',
      metadata: { base: true },
    });

    const results = await runTogether(script, (i) => [dir, 'update', `w${i}`, String(UPDATES)], PROCESSES);
    for (const [i, result] of results.entries()) {
      assert.equal(result.code, 0, `worker ${i}: ${result.stderr}`);
      assert.match(result.stdout, /done\n$/);
    }

    const text = readFileSync(path.join(dir, 'shared', 'state.json'), 'utf8');
    const record = JSON.parse(text);
    assert.equal(text, `${JSON.stringify(record, null, 2)}\n`);
    assert.equal(record.error_count, PROCESSES * UPDATES);
    const expected = { base: true };
    for (let w = 0; w < PROCESSES; w++) for (let i = 0; i < UPDATES; i++) expected[`w${w}-${i}`] = i;
    assert.deepEqual(record.metadata, expected);
    assert.match(record.last_error.message, /^w\d-24$/, "the last error is some worker's last update");
    assert.deepEqual(record.history, []);
    // Through the library as well, and no temp file is left behind.
    assert.equal((await Sessions.open({ dir, cwd: dir, env: {} }).get('shared')).error_count, PROCESSES * UPDATES);
    assert.deepEqual(readdirSync(path.join(dir, 'shared')), ['state.json']);
  },
);

test('concurrent creates of one id: exactly one succeeds, the others get EEXIST', { timeout: 60_000 }, async (t) => {
  const { dir, script } = setup(t);

  const results = await runTogether(script, (i) => [dir, 'create', `c${i}`], PROCESSES);
  const answers = results.map((r) => r.stdout.replace('ready\n', '').trim());
  assert.deepEqual(
    results.map((r) => r.code),
    Array(PROCESSES).fill(0),
  );
  assert.equal(answers.filter((a) => a === 'created').length, 1, answers.join(','));
  assert.equal(answers.filter((a) => a === 'EEXIST').length, PROCESSES - 1, answers.join(','));
  const winner = `c${answers.indexOf('created')}`;
  assert.equal(JSON.parse(readFileSync(path.join(dir, 'contested', 'state.json'), 'utf8')).agent_name, winner);
});

test(
  'concurrent `agent-session create --id` of one id: one exits 0, the others exit 3',
  { timeout: 60_000 },
  async (t) => {
    const dir = tempDir(t);
    const results = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) =>
        runCli(['create', '--agent', `cli${i}`, '--id', 'same', '--dir', dir, '--json'], {
          cwd: dir,
          env: cleanEnv({ HOME: dir }),
        }),
      ),
    );
    const winners = results.filter((r) => r.code === 0);
    assert.equal(winners.length, 1, results.map((r) => r.stderr).join(''));
    for (const loser of results.filter((r) => r.code !== 0)) {
      assert.equal(loser.code, 3, loser.stderr);
      assert.equal(loser.stdout, '');
      assert.match(loser.stderr, /^agent-session: [^\n]+\n$/);
    }
    const record = JSON.parse(readFileSync(path.join(dir, 'same', 'state.json'), 'utf8'));
    assert.deepEqual(record, JSON.parse(winners[0].stdout));
  },
);
