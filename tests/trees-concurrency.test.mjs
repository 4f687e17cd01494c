// Hook-like updaters write to sessions while delete and cleanup remove them: no acknowledged update is
// lost (it is in the live record or in the trashed one), and no update brings a deleted session back.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { cleanEnv, DIST, tempDir } from './helpers/run.mjs';
import { build, cli, liveIds, trashEntries, treeSpec } from './helpers/trees.mjs';

const UPDATERS = 3;
const RUN_MS = 2500;

const UPDATER = `
import * as lib from ${JSON.stringify(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href)};
const [dir, k, ...ids] = process.argv.slice(2);
const sessions = lib.Sessions.open({ dir, cwd: dir, env: {}, actor: 'hook' });
const end = Date.now() + ${RUN_MS};
const lines = [];
for (let n = 1; Date.now() < end; n++) {
  for (const id of ids) {
    try {
      await sessions.update(id, { metadata: { ['w' + k]: n } });
      lines.push('ack ' + id + ' ' + n);
    } catch (err) {
      lines.push((err.code === 'ENOTFOUND' ? 'gone ' : 'fail ') + id + ' ' + n + ' ' + err.code);
    }
    if (n === 2 && id === ids[0]) process.stdout.write('warm\\n');
  }
}
process.stdout.write(lines.join('\\n') + '\\n');
`;

function startUpdater(script, args) {
  const child = spawn(process.execPath, [script, ...args], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const warm = new Promise((resolve) => child.stdout.on('data', (d) => {
    out += d;
    if (out.includes('warm\n')) resolve();
  }));
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
  return { warm, done };
}

/** The record of `id`, live or in a trash entry (undefined if neither). */
function findRecord(dir, id, entries) {
  if (existsSync(path.join(dir, id, 'state.json'))) return JSON.parse(readFileSync(path.join(dir, id, 'state.json'), 'utf8'));
  const entry = entries.find((e) => e.held.includes(id));
  return entry ? JSON.parse(readFileSync(path.join(dir, '.trash', entry.entry, 'sessions', id, 'state.json'), 'utf8')) : undefined;
}

test('updates racing delete and cleanup: none lost, none lands in a deleted session', async (t) => {
  const base = tempDir(t);
  const dir = path.join(base, 'store');
  // Paused long ago: cleanup purges what no updater touched, delete --force takes what it is told.
  const spec = [...treeSpec('d', 3, 3, { phase: 'planning', hoursAgo: 48 }), ...treeSpec('c', 3, 3, { phase: 'planning', hoursAgo: 48 })];
  await build(dir, spec);
  const ids = spec.map((s) => s.id);
  const script = path.join(base, 'updater.mjs');
  writeFileSync(script, UPDATER);
  // Each updater writes to its own slice plus the shared roots, so some sessions see several writers.
  const updaters = Array.from({ length: UPDATERS }, (_, k) => startUpdater(script, [dir, String(k), 'd', 'c', ...ids.filter((_, i) => i % UPDATERS === k)]));
  await Promise.all(updaters.map((u) => u.warm));

  const [del, clean, delChild] = await Promise.all([
    cli(dir, ['delete', 'd', '--force', '--json']),
    cli(dir, ['cleanup', '--hours', '1', '--json']),
    cli(dir, ['delete', 'c-2', '--force', '--json']),
  ]);
  const results = await Promise.all(updaters.map((u) => u.done));
  assert.equal(del.code, 0, del.stderr);
  assert.equal(clean.code, 0, clean.stderr);
  assert.ok(delChild.code === 0 || delChild.code === 1, delChild.stderr);

  const entries = trashEntries(dir);
  const live = new Set(liveIds(dir));
  const trashed = new Set(entries.flatMap((e) => e.held));
  // Everything under d went to the trash, and nothing of it is live again.
  for (const id of ids.filter((id) => id.startsWith('d'))) {
    assert.ok(trashed.has(id), `${id} not in the trash`);
    assert.ok(!existsSync(path.join(dir, id)), `${id} came back after its delete`);
  }
  let acks = 0;
  let gone = 0;
  let inTrash = 0;
  for (const [k, r] of results.entries()) {
    assert.equal(r.code, 0, r.err);
    const last = new Map();
    const goneAt = new Map();
    for (const line of r.out.split('\n').filter((l) => l.startsWith('ack ') || l.startsWith('gone '))) {
      const [kind, id, n] = line.split(' ');
      if (kind === 'gone') {
        gone++;
        goneAt.set(id, goneAt.get(id) ?? Number(n));
      }
      else {
        acks++;
        assert.ok(!goneAt.has(id), `updater ${k}: ${id} accepted update ${n} after it was gone`);
        last.set(id, Number(n));
      }
    }
    for (const [id, n] of last) {
      const rec = findRecord(dir, id, entries);
      assert.ok(rec, `${id} had acknowledged updates and is neither live nor in the trash`);
      assert.equal(rec.metadata[`w${k}`], n, `updater ${k}: ${id} lost update ${n}`);
      if (trashed.has(id)) inTrash++;
    }
    for (const id of goneAt.keys()) assert.ok(!live.has(id), `${id} was gone and is live again`);
  }
  assert.ok(acks > UPDATERS * 10, `only ${acks} updates acknowledged`);
  // The race was real: sessions were updated up to their delete, and updates found them gone after.
  assert.ok(inTrash > 0 && gone > 0, `acknowledged into trashed sessions: ${inTrash}, refused as gone: ${gone}`);
  t.diagnostic(`${acks} updates acknowledged, ${inTrash} last updates kept in trashed records, ${gone} refused as gone`);
  for (const id of ids) assert.ok(live.has(id) !== trashed.has(id), `${id} must be live or trashed, exactly one`);
});
