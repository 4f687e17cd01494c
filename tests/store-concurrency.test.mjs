// Issue 2, section 5: many processes changing one session at once lose nothing.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DIST, runCli, runNode, tempDir } from './helpers/run.mjs';

const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'helpers', 'store-worker.mjs');
const PROCESSES = 8;
const UPDATES = 25;

test(`${PROCESSES} processes x ${UPDATES} updates on one session: every key and every error is kept`, async (t) => {
  const dir = tempDir(t);
  const created = await runCli(['create', '--agent', 'shared', '--id', 'hot', '--dir', dir]);
  assert.equal(created.code, 0, created.stderr);

  const results = await Promise.all(
    Array.from({ length: PROCESSES }, (_, p) => runNode(WORKER, [DIST, dir, 'count-up', 'hot', String(UPDATES), `p${p}`])),
  );
  for (const result of results) {
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim().split('\n').length, UPDATES);
  }

  const record = JSON.parse(readFileSync(path.join(dir, 'hot', 'state.json'), 'utf8'));
  const expected = Array.from({ length: PROCESSES }, (_, p) => Array.from({ length: UPDATES }, (_, n) => `p${p}-${n}`)).flat();
  assert.deepEqual(Object.keys(record.metadata).sort(), expected.sort());
  assert.equal(record.error_count, PROCESSES * UPDATES);
  assert.match(record.last_error.message, /^p\d error \d+$/);
});

test('processes creating the same id at once: exactly one succeeds, the others get EEXIST', async (t) => {
  const dir = tempDir(t);
  const results = await Promise.all(
    Array.from({ length: PROCESSES }, (_, p) => runNode(WORKER, [DIST, dir, 'create', 'same', '1', `p${p}`])),
  );
  const outcomes = results.map((r) => r.stdout.trim()).sort();
  assert.deepEqual(outcomes, ['EEXIST', 'EEXIST', 'EEXIST', 'EEXIST', 'EEXIST', 'EEXIST', 'EEXIST', 'created']);
  const record = JSON.parse(readFileSync(path.join(dir, 'same', 'state.json'), 'utf8'));
  const winner = results.findIndex((r) => r.stdout.trim() === 'created');
  assert.equal(record.metadata.by, `p${winner}`, 'the file is the winner’s, never overwritten by a loser');
});
