// Hook-like updaters write to sessions while delete and cleanup remove them: no acknowledged update is
// lost (it is in the live record or in the trashed one), and no update brings a deleted session back.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { flow, hook, project } from './helpers/hooks.mjs';
import { cleanEnv, DIST, PRE_DELEGATE, runNode, SUBAGENT_STOP, tempDir, cli } from './helpers/run.mjs';
import { auditedPlaces, build, liveIds, trashEntries, treeSpec } from './helpers/trees.mjs';

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
  const warm = new Promise((resolve) =>
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('warm\n')) resolve();
    }),
  );
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
  return { warm, done };
}

/** The record of `id`, live or in a trash entry (undefined if neither). */
function findRecord(dir, id, entries) {
  if (existsSync(path.join(dir, id, 'state.json')))
    return JSON.parse(readFileSync(path.join(dir, id, 'state.json'), 'utf8'));
  const entry = entries.find((e) => e.held.includes(id));
  return entry
    ? JSON.parse(readFileSync(path.join(dir, '.trash', entry.entry, 'sessions', id, 'state.json'), 'utf8'))
    : undefined;
}

test('updates racing delete and cleanup: none lost, none lands in a deleted session', async (t) => {
  const base = tempDir(t);
  const dir = path.join(base, 'store');
  // Paused long ago: cleanup purges what no updater touched, delete --force takes what it is told.
  const spec = [
    ...treeSpec('d', 3, 3, { phase: 'planning', hoursAgo: 48 }),
    ...treeSpec('c', 3, 3, { phase: 'planning', hoursAgo: 48 }),
  ];
  await build(dir, spec);
  const ids = spec.map((s) => s.id);
  const script = path.join(base, 'updater.mjs');
  writeFileSync(script, UPDATER);
  // Each updater writes to its own slice plus the shared roots, so some sessions see several writers.
  const updaters = Array.from({ length: UPDATERS }, (_, k) =>
    startUpdater(script, [dir, String(k), 'd', 'c', ...ids.filter((_, i) => i % UPDATERS === k)]),
  );
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
      } else {
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
  t.diagnostic(
    `${acks} updates acknowledged, ${inTrash} last updates kept in trashed records, ${gone} refused as gone`,
  );
  for (const id of ids) assert.ok(live.has(id) !== trashed.has(id), `${id} must be live or trashed, exactly one`);
});

const ROUNDS = 3;

// Deletes and restores subtrees in a loop: a restore may be refused (its parent went to the trash
// meanwhile) or find its session gone already (cleanup): both are answers, never damage.
const DELETER = `
import * as lib from ${JSON.stringify(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href)};
const [dir, ...targets] = process.argv.slice(2);
const sessions = lib.Sessions.open({ dir, cwd: dir, env: {}, actor: 'cli' });
const end = Date.now() + ${RUN_MS};
const tolerated = new Set(['ENOTFOUND', 'EREFUSED', 'EEXIST', 'ELOCKED']);
const counts = { deleted: 0, restored: 0, refused: 0 };
for (let n = 0; Date.now() < end; n++) {
  const target = targets[n % targets.length];
  const steps = {
    deleted: () => lib.deleteSession(sessions, target, { force: true }),
    restored: () => lib.restoreSession(sessions, target)
  };
  for (const [done, step] of Object.entries(steps)) {
    try { await step(); counts[done]++; } catch (err) { if (!tolerated.has(err.code)) throw err; counts.refused++; }
  }
}
process.stdout.write(JSON.stringify(counts));
`;

const CLEANER = `
import * as lib from ${JSON.stringify(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href)};
const [dir] = process.argv.slice(2);
const sessions = lib.Sessions.open({ dir, cwd: dir, env: {}, actor: 'cli' });
const end = Date.now() + ${RUN_MS};
while (Date.now() < end) {
  try { await lib.cleanup(sessions, { olderThanHours: 1 }); } catch (err) { if (err.code !== 'ELOCKED') throw err; }
}
`;

/** Runs `step(n)` again and again for RUN_MS; resolves the failures (non-zero exits) it saw. */
async function loop(step) {
  const failures = [];
  const end = Date.now() + RUN_MS;
  for (let n = 0; Date.now() < end; n++) {
    const r = await step(n);
    if (r.code !== 0) failures.push(r);
  }
  return failures;
}

test(
  'writers, deletes, restores, cleanups, sweeps and hooks at once, round after round: ' +
    'nothing acknowledged is lost, nothing is split, the audit accounts for every move',
  async (t) => {
    const proj = project(t);
    const dir = proj.store;
    const base = tempDir(t);
    const spec = [
      ...treeSpec('x', 3, 3, { phase: 'planning', hoursAgo: 48 }),
      ...treeSpec('y', 3, 3, { phase: 'planning', hoursAgo: 48 }),
      ...treeSpec('z', 3, 2, { outcome: 'completed', hoursAgo: 48 }),
    ];
    await build(dir, spec);
    const ids = spec.map((s) => s.id);
    const scripts = Object.fromEntries(
      Object.entries({ updater: UPDATER, deleter: DELETER, cleaner: CLEANER }).map(([name, text]) => {
        const file = path.join(base, `${name}.mjs`);
        writeFileSync(file, text);
        return [name, file];
      }),
    );
    const runScript = (name, args) => runNode(scripts[name], args, { cwd: base });
    const lastAck = new Map();
    for (let round = 1; round <= ROUNDS; round++) {
      const updaters = Array.from({ length: UPDATERS }, (_, k) =>
        startUpdater(scripts.updater, [dir, String(k), 'x', 'y', ...ids.filter((_, i) => i % UPDATERS === k)]),
      );
      await Promise.all(updaters.map((u) => u.warm));
      // Two deleters: one takes whole trees while the other deletes and restores parts of them.
      const [deleter, deleter2, cleaner, sweeps, hooks] = await Promise.all([
        runScript('deleter', [dir, 'x', 'y']),
        runScript('deleter', [dir, 'x-1', 'y-2', 'x-0-2', 'y-1-1']),
        runScript('cleaner', [dir]),
        loop(() => runNode(SUBAGENT_STOP, ['--sweep'], { cwd: proj.dir, env: cleanEnv({ AGENT_SESSION_DIR: dir }) })),
        loop(async (n) => {
          const f = flow({ session: `s${round}`, toolUseId: `toolu_${round}_${n}`, agentId: `a${round}-${n}` });
          for (const payload of [f.pre, f.post, f.start, f.stop('Done.')]) {
            const r = await hook(payload === f.pre ? PRE_DELEGATE : SUBAGENT_STOP, proj, payload);
            if (r.code !== 0 || r.stderr) return r;
          }
          return { code: 0 };
        }),
      ]);
      const results = await Promise.all(updaters.map((u) => u.done));
      const moves = [deleter, deleter2].map((d) => {
        assert.equal(d.code, 0, `round ${round}: deleter: ${d.stderr}`);
        return JSON.parse(d.stdout);
      });
      // One deleter may see every restore refused (the other held the parents in the trash), not both.
      const done = (what) => moves.reduce((sum, m) => sum + m[what], 0);
      assert.ok(
        done('deleted') > 0 && done('restored') > 0,
        `round ${round}: the deleters got nothing done: ${JSON.stringify(moves)}`,
      );
      assert.equal(cleaner.code, 0, `round ${round}: cleaner: ${cleaner.stderr}`);
      assert.deepEqual(sweeps, [], `round ${round}: sweeps`);
      assert.deepEqual(hooks, [], `round ${round}: hooks`);
      for (const [k, r] of results.entries()) {
        assert.equal(r.code, 0, r.err);
        for (const line of r.out.split('\n').filter((l) => l.startsWith('ack '))) {
          const [, id, n] = line.split(' ');
          lastAck.set(`${id} ${k}`, Number(n));
        }
      }

      const entries = trashEntries(dir);
      assert.deepEqual(
        entries.filter((e) => e.manifest.status !== 'complete'),
        [],
        `round ${round}: every trash entry is complete`,
      );
      const live = new Set(liveIds(dir));
      const held = new Map();
      for (const e of entries) for (const id of e.held) held.set(id, [...(held.get(id) ?? []), e.entry]);
      // Every session is live or in exactly one complete entry, never both.
      for (const id of new Set([...live, ...held.keys(), ...ids])) {
        const places = (live.has(id) ? 1 : 0) + (held.get(id)?.length ?? 0);
        assert.equal(places, 1, `round ${round}: ${id} is live: ${live.has(id)}, in the trash: ${held.get(id) ?? []}`);
      }
      // Every acknowledged update is in the session's record, wherever that is now.
      for (const [key, n] of lastAck) {
        const [id, k] = key.split(' ');
        const rec = findRecord(dir, id, entries);
        assert.ok(rec, `round ${round}: ${id} had acknowledged updates and is neither live nor in the trash`);
        if (rec.metadata[`w${k}`] !== n)
          assert.ok(rec.metadata[`w${k}`] > n, `round ${round}: updater ${k}: ${id} lost update ${n}`);
      }
      // No live session has its parent in the trash; the index and the records agree.
      const doc = await cli(dir, ['doctor', '--json']);
      assert.equal(
        doc.code,
        0,
        `round ${round}: ${JSON.stringify(doc.json?.findings?.filter((f) => f.severity === 'error'))}`,
      );
      // The audit trail accounts for every move: what it says last of each session is where it is.
      const audited = auditedPlaces(dir);
      for (const id of new Set([...live, ...held.keys()])) {
        assert.equal(
          audited.get(id),
          live.has(id) ? 'live' : 'trash',
          `round ${round}: the audit trail's last word on ${id}`,
        );
      }
      t.diagnostic(
        `round ${round}: ${JSON.stringify(moves)}, ${sweeps.length} sweeps failed, ` +
          `${live.size} live, ${held.size} in ${entries.length} trash entries`,
      );
    }
  },
);
