// Issue 2, section 5: writers killed with SIGKILL at random moments leave every state.json whole:
// the old version or the new one, and never lose an update they had acknowledged.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cleanEnv, DIST, runCli, tempDir } from './helpers/run.mjs';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'store-worker.mjs');
const SESSIONS = ['c1', 'c2', 'c3'];
const ROUNDS = 8;

/** Starts a counter worker and kills it with SIGKILL after a random number of acknowledged updates. */
function runAndKill(dir, id) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, DIST, dir, 'counter', id], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const killAfter = 1 + Math.floor(Math.random() * 40);
    let acked = 0;
    let seen = 0;
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      for (const line of chunk.split('\n').filter(Boolean)) {
        acked = Math.max(acked, Number(line.split(' ')[1]));
        if (++seen === killAfter) child.kill('SIGKILL');
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`worker ended by itself (${code}): ${stderr}`));
      else resolve(acked);
    });
  });
}

function checkWhole(dir, id, acked) {
  const text = readFileSync(path.join(dir, id, 'state.json'), 'utf8');
  const record = JSON.parse(text); // a torn file fails here
  assert.ok(text.endsWith('}\n'), `${id}: not a complete file`);
  // Both fields move in the same write: a mix of two versions would break the equality.
  assert.equal(record.metadata.counter ?? 0, record.error_count, `${id}: counter and error_count disagree`);
  assert.ok(record.error_count >= acked, `${id}: acknowledged update ${acked} lost (file has ${record.error_count})`);
  return record.error_count;
}

test(`SIGKILL at random moments, ${ROUNDS} rounds x ${SESSIONS.length} writers: every file is whole and no acknowledged update is lost`, async (t) => {
  const dir = tempDir(t);
  for (const id of SESSIONS) assert.equal((await runCli(['create', '--agent', 'crash', '--id', id, '--dir', dir])).code, 0);
  const best = Object.fromEntries(SESSIONS.map((id) => [id, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    const acked = await Promise.all(SESSIONS.map((id) => runAndKill(dir, id)));
    SESSIONS.forEach((id, i) => {
      best[id] = Math.max(best[id], acked[i]);
      const now = checkWhole(dir, id, best[id]);
      assert.ok(now <= best[id] + 1, `${id}: at most the one unacknowledged write in flight may have landed`);
      best[id] = now;
    });
  }

  // Temp files a kill left behind are ignored by readers.
  const list = await runCli(['list', '--json', '--dir', dir]);
  assert.equal(list.code, 0, list.stderr);
  const listed = JSON.parse(list.stdout);
  assert.deepEqual(listed.sessions.map((s) => s.agent_id).sort(), SESSIONS);
  assert.deepEqual(listed.problems, []);
  for (const id of SESSIONS) {
    const got = await runCli(['get', id, '--dir', dir]);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(JSON.parse(got.stdout).error_count, best[id]);
  }
  const leftovers = SESSIONS.flatMap((id) => readdirSync(path.join(dir, id)).filter((f) => f !== 'state.json'));
  assert.ok(leftovers.every((f) => f.endsWith('.tmp')), `unexpected files: ${leftovers}`);
});
