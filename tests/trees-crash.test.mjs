// Crash safety of delete and cleanup: processes working on large trees are killed with SIGKILL at random
// moments. Afterwards (once the trash is recovered) every session is live or in exactly one complete trash
// entry, no live session lost a parent it had, and restoring every entry gives back the store byte for byte.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { runAndKill } from './helpers/kill.mjs';
import { DIST, loadLibrary, tempDir } from './helpers/run.mjs';
import { build, liveIds, record, sessionFiles, trashEntries, treeSpec } from './helpers/trees.mjs';

const ROOTS = ['t0', 't1', 't2', 't3', 't4', 't5'];
const ITERATIONS = 5;

const WORKER = `
import * as lib from ${JSON.stringify(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href)};
const [dir, mode, ...roots] = process.argv.slice(2);
const sessions = lib.Sessions.open({ dir, cwd: dir, env: {} });
process.stdout.write('ready\\n');
if (mode === 'delete') for (const root of roots) await lib.deleteSession(sessions, root, { force: true });
else await lib.cleanup(sessions, { olderThanHours: 1 });
process.stdout.write('done\\n');
`;

test('SIGKILL during delete and cleanup of large trees never leaves a half-deleted subtree', async (t) => {
  const base = tempDir(t);
  const template = path.join(base, 'template');
  // 6 trees of depth 4 (40 sessions each), all finished two days ago: delete and cleanup both take them.
  await build(
    template,
    ROOTS.flatMap((root) => treeSpec(root, 4, 3, { outcome: 'completed', hoursAgo: 48 })),
  );
  const original = sessionFiles(template);
  const allIds = liveIds(template);
  const parentOf = new Map(allIds.map((id) => [id, record(template, id).parent_session_id]));
  const kids = new Map();
  for (const [id, parent] of parentOf) if (parent) kids.set(parent, [...(kids.get(parent) ?? []), id]);
  const script = path.join(base, 'worker.mjs');
  writeFileSync(script, WORKER);
  const { Sessions, doctor, recoverTrash, restoreSession } = await loadLibrary();

  let interrupted = 0;
  let rolledBack = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const dir = path.join(base, `run${i}`);
    cpSync(template, dir, { recursive: true });
    const mode = i % 2 === 0 ? 'delete' : 'cleanup';
    const { stdout } = await runAndKill(script, [dir, mode, ...ROOTS], Math.floor(Math.random() * 400));
    if (!stdout.includes('done')) interrupted++;

    const sessions = Sessions.open({ dir, cwd: dir, env: {} });
    const recovered = await recoverTrash(sessions);
    rolledBack += recovered.filter((r) => r.action === 'rolled back').length;
    // doctor agrees: no interrupted trash entry, no broken parent link, no child missing from the index.
    const health = await doctor(sessions);
    const errors = health.findings.filter(
      (f) => f.severity === 'error' && ['trash', 'parent', 'index'].includes(f.check),
    );
    assert.deepEqual(errors, [], `${mode} #${i}`);
    const entries = trashEntries(dir);
    assert.deepEqual(
      entries.filter((e) => e.manifest.status !== 'complete').map((e) => e.entry),
      [],
      'an incomplete entry survived recovery',
    );
    const live = new Set(liveIds(dir));
    const held = new Map();
    for (const e of entries)
      for (const id of e.held) {
        assert.ok(!held.has(id), `${id} is in two trash entries`);
        assert.ok(!live.has(id), `${id} is both live and in the trash`);
        held.set(id, e.entry);
      }
    for (const id of allIds)
      assert.ok(live.has(id) || held.has(id), `${mode} #${i}: ${id} is neither live nor restorable`);
    for (const id of live) {
      const parent = parentOf.get(id);
      if (parent) assert.ok(live.has(parent), `${mode} #${i}: live ${id} lost its parent ${parent}`);
    }
    // A trashed session's children went with it, into the same entry.
    for (const [id, entry] of held)
      for (const kid of kids.get(id) ?? []) assert.equal(held.get(kid), entry, `${kid} not with ${id}`);

    for (const e of entries) await restoreSession(sessions, e.entry);
    assert.deepEqual(sessionFiles(dir), original, `${mode} #${i}: the restored store differs`);
  }
  t.diagnostic(
    `${interrupted} of ${ITERATIONS} workers killed before they finished; ` +
      `${rolledBack} interrupted trash entries rolled back`,
  );
});

test('recovery rolls an interrupted delete back and finishes an interrupted restore, whatever was moved', async (t) => {
  const dir = tempDir(t);
  await build(dir, [...treeSpec('r', 4, 2, { outcome: 'completed', hoursAgo: 48 }), { id: 'x', outcome: 'completed' }]);
  const original = sessionFiles(dir);
  const { Sessions, deleteSession, recoverTrash } = await loadLibrary();
  const sessions = Sessions.open({ dir, cwd: dir, env: {} });
  for (const [status, moved] of [
    ['moving', 0],
    ['moving', 6],
    ['moving', 15],
    ['restoring', 3],
    ['restoring', 14],
  ]) {
    const { backup } = await deleteSession(sessions, 'r');
    const manifestFile = path.join(backup.path, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    // The state a kill leaves: a delete had moved the first `moved` (leaves first); a restore had put back the rest.
    const back = status === 'moving' ? manifest.sessions.slice(moved) : manifest.sessions.slice(moved).reverse();
    for (const s of back) renameSync(path.join(backup.path, 'sessions', s.id), path.join(dir, s.id));
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, status }));
    const recovered = await recoverTrash(sessions);
    assert.deepEqual(
      recovered.map((r) => r.action),
      ['rolled back'],
      `${status} ${moved}`,
    );
    assert.deepEqual(trashEntries(dir), []);
    assert.deepEqual(sessionFiles(dir), original, `${status} ${moved}`);
  }
  // An entry killed before its manifest was written holds nothing and is removed.
  mkdirSync(path.join(dir, '.trash', '20260101-000000-abcd-r', 'sessions'), { recursive: true });
  assert.deepEqual(await recoverTrash(sessions), []);
  assert.deepEqual(trashEntries(dir), []);
});
