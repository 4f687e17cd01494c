// Crash safety of writes: processes updating sessions in a tight loop are killed with SIGKILL at random
// moments, many times. Every state.json left behind parses and is a complete version some writer
// produced (the one it last reported, or the one it was committing), never older; readers ignore the
// temp files the kills leave (in the store's .tmp/, never in a session directory).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { runAndKill } from './helpers/kill.mjs';
import { DIST, loadLibrary, tempDir } from './helpers/run.mjs';

const SESSIONS = 6;
const ROUNDS = 8;
const MAX_UPDATES = 400;

// Update n (1, 2, ...) of a session: metadata {n, k<n>: n}, error e<n>, phase investigating (odd) or
// planning (even), so a record's every field can be checked against its n. The worker reports each
// committed n; "ready" follows its first commit (after any wait for a killed holder's stale lock).
const WORKER = `
import * as lib from ${JSON.stringify(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href)};
const [dir, id, max] = process.argv.slice(2);
const sessions = lib.Sessions.open({ dir, cwd: dir, env: {} });
for (let done = 0; done < Number(max); done++) {
  const n = ((await sessions.get(id)).metadata.n ?? 0) + 1;
  try {
    await sessions.update(id, {
      phase: n % 2 ? 'investigating' : 'planning',
      metadata: { n, ['k' + n]: n },
      error: 'e' + n
    });
  } catch (err) {
    // A holder too slow to refresh its lock on a loaded machine loses it and does not commit: try again.
    if (err.code !== 'ELOCKED') throw err;
    continue;
  }
  process.stdout.write((done === 0 ? 'ready\\n' : '') + n + '\\n');
}
process.stdout.write('done\\n');
`;

/** Checks that `text` is a complete record of update n and returns n. */
function checkVersion(text, id) {
  assert.equal(
    text,
    `${JSON.stringify(JSON.parse(text), null, 2)}\n`,
    `${id}: not a whole file as the store writes it`,
  );
  const r = JSON.parse(text);
  const n = r.metadata.n ?? 0;
  assert.equal(r.agent_id, id);
  assert.equal(r.error_count, n, `${id}: error_count vs n`);
  assert.equal(r.history.length, n, `${id}: history vs n`);
  assert.deepEqual(Object.keys(r.metadata).length, n === 0 ? 0 : n + 1, `${id}: metadata keys vs n`);
  for (let k = 1; k <= n; k++) assert.equal(r.metadata[`k${k}`], k, `${id}: k${k}`);
  if (n > 0) {
    assert.equal(r.last_error.message, `e${n}`);
    assert.equal(r.phase, n % 2 ? 'investigating' : 'planning');
  } else assert.equal(r.phase, 'initializing');
  return n;
}

/** Runs a worker and kills it `delayMs` after it is ready; resolves its pid and the last n it reported. */
async function updateAndKill(script, dir, id, delayMs) {
  const { pid, stdout, killed } = await runAndKill(script, [dir, id, String(MAX_UPDATES)], delayMs);
  const reported = stdout
    .split('\n')
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
  return { pid, acked: reported.at(-1) ?? null, killed };
}

test(
  `SIGKILL at random moments while ${SESSIONS} sessions are updated leaves each state.json old or new, never torn`,
  { timeout: 120_000 },
  async (t) => {
    const base = tempDir(t);
    const dir = path.join(base, 'store');
    const script = path.join(base, 'worker.mjs');
    writeFileSync(script, WORKER);
    const { Sessions } = await loadLibrary();
    const sessions = Sessions.open({ dir, cwd: dir, env: {} });
    const ids = Array.from({ length: SESSIONS }, (_, i) => `crash-${i}`);
    for (const id of ids) await sessions.create({ agentName: 'crasher', id });
    // Temp files as a crash leaves them, from before any of this (one in .tmp/, one where earlier
    // versions put them): they must never matter.
    writeFileSync(
      path.join(dir, '.tmp', `${ids[0]}.state.json.99999.1.abcdef.tmp`),
      '{"agent_id": "crash-0", "metadata": {"n": 10',
    );
    writeFileSync(
      path.join(dir, ids[1], 'state.json.99998.1.abcdef.tmp'),
      '{"agent_id": "crash-1", "metadata": {"n": 10',
    );

    const seen = new Map(ids.map((id) => [id, 0]));
    let kills = 0;
    const killedWorkers = new Set();
    let committing = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const runs = await Promise.all(ids.map((id) => updateAndKill(script, dir, id, Math.floor(Math.random() * 60))));
      for (const [i, id] of ids.entries()) {
        const { pid, acked, killed } = runs[i];
        if (killed) {
          kills++;
          killedWorkers.add(`${pid} ${id}`);
        }
        const n = checkVersion(readFileSync(path.join(dir, id, 'state.json'), 'utf8'), id);
        assert.ok(acked !== null, `${id}: the worker committed before it was killed`);
        // The last reported version, or the next one if the kill fell between the rename and the report.
        assert.ok(n === acked || n === acked + 1, `${id} round ${round}: file has ${n}, worker reported ${acked}`);
        assert.ok(n >= seen.get(id), `${id}: went back from ${seen.get(id)} to ${n}`);
        if (n === acked + 1) committing++;
        seen.set(id, n);
      }
      // Readers see every session and no problem, whatever temp files the kills left.
      const listed = await sessions.list();
      assert.deepEqual(listed.problems, []);
      assert.deepEqual(listed.sessions.map((s) => s.agent_id).sort(), ids);
      for (const id of ids) assert.equal((await sessions.get(id)).metadata.n ?? 0, seen.get(id));
    }
    // Every temp file a kill left is in .tmp/, named for its session; session directories hold only their record.
    const temps = readdirSync(path.join(dir, '.tmp'));
    for (const name of temps) assert.match(name, /^crash-\d\.state\.json\.\d+\.\d+\.[0-9a-f]+\.tmp$/);
    // Besides the one put there above, each was left by a killed worker, for the session it was updating.
    const leftByKills = temps.filter((name) => name !== `${ids[0]}.state.json.99999.1.abcdef.tmp`);
    assert.ok(leftByKills.length >= 1, 'no kill landed while a record was being written');
    for (const name of leftByKills) {
      const [, id, pid] = /^(.+)\.state\.json\.(\d+)\./.exec(name);
      assert.ok(killedWorkers.has(`${pid} ${id}`), `${name}: not the temp file of a killed worker`);
    }
    for (const id of ids)
      assert.deepEqual(
        readdirSync(path.join(dir, id)).sort(),
        id === ids[1] ? ['state.json', 'state.json.99998.1.abcdef.tmp'] : ['state.json'],
      );
    const updates = [...seen.values()].reduce((a, b) => a + b);
    t.diagnostic(
      `${kills} kills; ${committing} landed between a commit and its report; ` +
        `${leftByKills.length} temp files left; ${updates} updates`,
    );
    assert.ok(kills >= SESSIONS * ROUNDS * 0.9, `only ${kills} workers were killed`);
  },
);
