// The audit trail: one hashed JSON line per change, whole under concurrency, bad lines detected,
// rotation by size, filters, and --follow streaming what another process writes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs, { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { CLI, DIST, cleanEnv, cli, cliJson, loadLibrary, runNode, tempDir } from './helpers/run.mjs';

const LIB = pathToFileURL(path.join(DIST, 'tools', 'index.js')).href;

function auditLines(dir, file = 'audit.jsonl') {
  return readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean);
}

function verifyLine(line) {
  const match = /,"hash":"([0-9a-f]{64})"\}$/.exec(line);
  assert.ok(match, `no hash at the end of ${line.slice(0, 80)}`);
  const body = `${line.slice(0, match.index)}}`;
  assert.equal(createHash('sha256').update(body).digest('hex'), match[1]);
  return JSON.parse(line);
}

function script(dir, name, code) {
  const file = path.join(dir, name);
  writeFileSync(file, `import * as lib from ${JSON.stringify(LIB)};\n${code}\n`);
  return file;
}

/** Appends `count` entries ({i, pad}) to the trail of <dir>/store through the library; the store's path. */
async function writeEntries(dir, count, env = {}) {
  const file = script(
    dir,
    'writer.mjs',
    `
    const sessions = lib.Sessions.open({ dir: process.argv[2] });
    for (let i = 0; i < ${count}; i++) await sessions.audit('test', ['s'], { i, pad: 'x'.repeat(200) });`,
  );
  const store = path.join(dir, 'store');
  const run = await runNode(file, [store], { env: cleanEnv(env) });
  assert.equal(run.code, 0, run.stderr);
  return store;
}

test('every change made through the CLI appends one verified line with actor cli', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  const parent = (await cliJson(dir, ['create', '--agent', 'planner'])).agent_id;
  const child = (await cliJson(dir, ['create', '--agent', 'worker', '--parent', parent])).agent_id;
  await cliJson(dir, ['update', child, '--phase', 'approval', '--metadata', '{"ticket":"A-1"}']);
  await cliJson(dir, ['finalize', child, 'completed']);
  await cliJson(dir, ['finalize', parent, 'completed']);
  await cliJson(dir, ['cleanup', '--hours', '0']);

  const entries = auditLines(dir).map(verifyLine);
  // One entry for the purged subtree as it went, then the run's summary (counts only).
  assert.deepEqual(
    entries.map((e) => e.action),
    ['create', 'create', 'update', 'finalize', 'finalize', 'cleanup', 'cleanup'],
  );
  for (const e of entries) {
    assert.equal(e.actor, 'cli');
    assert.match(e.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Number.isInteger(e.pid) && e.pid > 0 && e.pid !== process.pid);
  }
  assert.deepEqual(entries[0].ids, [parent]);
  assert.equal(entries[1].details.parent, parent);
  assert.deepEqual(entries[2].details, {
    phase: { from: 'initializing', to: 'approval' },
    metadata: { ticket: 'A-1' },
  });
  assert.equal(entries[3].details.outcome, 'completed');
  assert.deepEqual(new Set(entries[5].ids), new Set([parent, child]));
  assert.equal(entries[5].details.root, parent);
  assert.deepEqual(entries[6].ids, []);
  assert.equal(entries[6].details.purged, 2);
});

test('changes made through the library are recorded with actor api; a no-op change adds nothing', async (t) => {
  const { Sessions, readAudit } = await loadLibrary();
  const sessions = Sessions.open({ dir: tempDir(t) });
  const s = await sessions.create({ agentName: 'a' });
  await sessions.finalize(s.agent_id, 'failed', 'boom');
  await sessions.finalize(s.agent_id, 'failed', 'boom');
  const { entries, problems } = await readAudit(sessions);
  assert.deepEqual(problems, []);
  assert.deepEqual(
    entries.map((e) => [e.action, e.actor, e.pid]),
    [
      ['create', 'api', process.pid],
      ['finalize', 'api', process.pid],
    ],
  );
  assert.deepEqual(sessions.auditErrors, []);
});

test('many processes appending at once produce only whole, valid lines', async (t) => {
  const dir = tempDir(t);
  const writers = 6;
  const each = 60;
  const file = script(
    dir,
    'writer.mjs',
    `
    const sessions = lib.Sessions.open({ dir: process.argv[2] });
    const n = Number(process.argv[3]);
    for (let i = 0; i < ${each}; i++) {
      // Sizes from tiny to near the line limit, so that writes of different lengths race.
      await sessions.audit('test', ['w' + n], { i, pad: 'x'.repeat((i * 397) % 1900) });
    }`,
  );
  const store = path.join(dir, 'store');
  const results = await Promise.all(Array.from({ length: writers }, (_, n) => runNode(file, [store, String(n)])));
  for (const r of results) assert.equal(r.code, 0, r.stderr);
  const lines = auditLines(store);
  assert.equal(lines.length, writers * each);
  const seen = new Set(lines.map(verifyLine).map((e) => `${e.ids[0]}:${e.details.i}`));
  assert.equal(seen.size, writers * each);
});

test(
  'a change naming many sessions is split into whole lines under 4 KiB; ' + 'oversized details are truncated',
  async (t) => {
    const { Sessions, readAudit } = await loadLibrary();
    const dir = tempDir(t);
    const sessions = Sessions.open({ dir });
    const ids = Array.from({ length: 300 }, (_, i) => `agent-20261122-000000-${String(i).padStart(8, '0')}`);
    await sessions.audit('delete', ids, { removed: 300 });
    await sessions.audit('update', ['x'], { metadata: { blob: 'y'.repeat(10_000) } });
    const lines = auditLines(dir);
    assert.ok(lines.length > 2);
    for (const line of lines) assert.ok(Buffer.byteLength(line) + 1 <= 4096, `a line of ${line.length} bytes`);
    const parts = lines.slice(0, -1).map(verifyLine);
    assert.deepEqual(
      parts.map((e) => e.part),
      parts.map((_, i) => [i + 1, parts.length]),
    );
    assert.deepEqual(
      parts.flatMap((e) => e.ids),
      ids,
    );
    assert.ok(parts.every((e) => e.details.removed === 300));
    const last = verifyLine(lines.at(-1));
    assert.equal(last.details.truncated, true);
    assert.deepEqual(last.details.keys, ['metadata']);
    const one = await readAudit(sessions, { session: ids[250] });
    assert.equal(one.entries.length, 1);
    assert.equal(one.entries[0].action, 'delete');
  },
);

test('a torn last line and an edited line are detected, reported and skipped', async (t) => {
  const { Sessions, readAudit } = await loadLibrary();
  const dir = tempDir(t);
  const sessions = Sessions.open({ dir });
  for (const name of ['a', 'b', 'c']) await sessions.create({ agentName: name });
  const file = path.join(dir, 'audit.jsonl');
  const lines = auditLines(dir);
  lines[1] = lines[1].replace('"agent_name":"b"', '"agent_name":"B"');
  writeFileSync(file, `${lines.join('\n')}\n`);
  appendFileSync(file, lines[2].slice(0, 70));

  const result = await readAudit(sessions);
  assert.deepEqual(
    result.entries.map((e) => e.details.agent_name),
    ['a', 'c'],
  );
  assert.deepEqual(
    result.problems.map((p) => [p.line, p.reason]),
    [
      [2, 'hash'],
      [4, 'torn'],
    ],
  );

  // The next append after a torn fragment is still read (recovered from the end of the merged line).
  await sessions.create({ agentName: 'd' });
  const after = await readAudit(sessions);
  assert.deepEqual(
    after.entries.map((e) => e.details.agent_name),
    ['a', 'c', 'd'],
  );
  assert.equal(after.problems.length, 2);

  const shown = await cli(dir, ['audit', '--json']);
  assert.equal(shown.code, 0);
  assert.equal(JSON.parse(shown.stdout).problems.length, 2);
  assert.match(shown.stderr, /^agent-session: /);
});

test('the file rotates by size, keeps N files, and readers read across them in order', async (t) => {
  const dir = tempDir(t);
  const env = { AGENT_SESSION_AUDIT_MAX_BYTES: '4096', AGENT_SESSION_AUDIT_KEEP: '2' };
  const store = await writeEntries(dir, 60, env);
  assert.ok(existsSync(path.join(store, 'audit.1.jsonl')));
  assert.ok(existsSync(path.join(store, 'audit.2.jsonl')));
  assert.ok(!existsSync(path.join(store, 'audit.3.jsonl')));
  const older = auditLines(store, 'audit.2.jsonl').map(verifyLine);
  assert.ok(Buffer.byteLength(readFileSync(path.join(store, 'audit.1.jsonl'))) >= 4096);

  const shown = await cliJson(store, ['audit'], { env });
  const numbers = shown.entries.map((e) => e.details.i);
  assert.equal(numbers[0], older[0].details.i);
  assert.equal(numbers.at(-1), 59);
  assert.deepEqual(
    numbers,
    numbers.toSorted((a, b) => a - b),
  );
  assert.ok(numbers[0] > 0, 'the oldest entries were rotated out');
});

test('audit --json with a bad rotated file fails before printing anything of the trail', async (t) => {
  const store = await writeEntries(tempDir(t), 600);
  // The oldest file is whole and valid, far more than one 64 kB piece of output; the next is a directory.
  renameSync(path.join(store, 'audit.jsonl'), path.join(store, 'audit.2.jsonl'));
  fs.mkdirSync(path.join(store, 'audit.1.jsonl'));
  const shown = await cli(store, ['audit', '--json']);
  assert.equal(shown.code, 4, shown.stderr);
  assert.equal(shown.stdout, '', 'nothing of the trail printed before the error');
  assert.match(shown.stderr, /cannot read the audit trail: .*audit\.1\.jsonl is a directory/);
});

test('--session, --action and --since filter the trail', async (t) => {
  const { Sessions } = await loadLibrary();
  const dir = tempDir(t);
  const now = Date.now();
  const old = Sessions.open({ dir, now: () => now - 3 * 3_600_000 });
  const a = await old.create({ agentName: 'a' });
  const sessions = Sessions.open({ dir });
  const b = await sessions.create({ agentName: 'b' });
  await sessions.update(a.agent_id, { phase: 'executing' });
  await sessions.update(b.agent_id, { phase: 'executing' });

  const forA = await cliJson(dir, ['audit', '--session', a.agent_id]);
  assert.deepEqual(
    forA.entries.map((e) => e.action),
    ['create', 'update'],
  );
  assert.ok(forA.entries.every((e) => e.ids.includes(a.agent_id)));
  const updates = await cliJson(dir, ['audit', '--action', 'update']);
  assert.deepEqual(
    updates.entries.map((e) => e.ids[0]),
    [a.agent_id, b.agent_id],
  );
  const recent = await cliJson(dir, ['audit', '--since', '2h']);
  assert.deepEqual(
    recent.entries.map((e) => `${e.action}:${e.ids[0]}`),
    [`create:${b.agent_id}`, `update:${a.agent_id}`, `update:${b.agent_id}`],
  );
  const bad = await cli(dir, ['audit', '--since', 'yesterday']);
  assert.equal(bad.code, 2);
});

/** Spawns `audit --follow --json`, collecting its stdout lines. */
function follow(dir, args, env) {
  const child = spawn(process.execPath, [CLI, '--dir', dir, 'audit', '--follow', '--json', ...args], {
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entries = [];
  const waiters = [];
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const line of lines) entries.push(JSON.parse(line));
    for (const w of [...waiters]) if (w.done()) waiters.splice(waiters.indexOf(w), 1);
  });
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const until = (predicate) =>
    new Promise((resolve, reject) => {
      const w = { done: () => predicate(entries) && (resolve(entries), true) };
      if (!w.done()) waiters.push(w);
      exited.then(() => reject(new Error(`follower exited; saw ${entries.length} entries`)));
    });
  return { child, entries, until, exited };
}

// The timeout turns a follower that misses an entry into a failure instead of a hang.
test(
  'audit --follow streams entries written by another process, across a rotation, and stops on SIGINT',
  { timeout: 30_000 },
  async (t) => {
    const { Sessions } = await loadLibrary();
    const dir = tempDir(t);
    // Enough rotated files kept that none is deleted before a slow follower reads it.
    const env = { AGENT_SESSION_AUDIT_MAX_BYTES: '4096', AGENT_SESSION_AUDIT_KEEP: '20' };
    const seed = await Sessions.open({ dir }).create({ agentName: 'seed' });
    const f = follow(dir, ['--since', '1h'], env);
    t.after(() => f.child.kill('SIGKILL'));
    // The backlog shows the follower is reading before anything new is written.
    await f.until((es) => es.some((e) => e.ids.includes(seed.agent_id)));
    const file = script(
      dir,
      'writer.mjs',
      `
    const sessions = lib.Sessions.open({ dir: process.argv[2] });
    for (let i = 0; i < 40; i++) await sessions.audit('tick', ['w'], { i, pad: 'x'.repeat(300) });`,
    );
    const run = await runNode(file, [dir], { env: cleanEnv(env) });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(existsSync(path.join(dir, 'audit.1.jsonl')), 'the writer rotated the file');
    await f.until((es) => es.filter((e) => e.action === 'tick').length >= 40);
    const ticks = f.entries.filter((e) => e.action === 'tick').map((e) => e.details.i);
    assert.deepEqual(
      ticks,
      Array.from({ length: 40 }, (_, i) => i),
    );
    f.child.kill('SIGINT');
    assert.deepEqual(await f.exited, { code: 0, signal: null });
  },
);

// A rotation renames every file one place up. One that lands while the follower opens the rotated
// files it listed must not make it read a newer file before an older one. The rotation is made to land
// exactly there: inside the follower's own open of `audit.1.jsonl` (fs.openSync, patched for the test).
test('audit --follow reads rotated files oldest first even when a rotation lands while it opens them', async (t) => {
  const { AuditTail } = await import(pathToFileURL(path.join(DIST, 'tools', 'store', 'audit-tail.js')).href);
  const dir = tempDir(t);
  const file = (name) => path.join(dir, name);
  const rotate = () => {
    for (let n = 9; n >= 1; n--)
      if (existsSync(file(`audit.${n}.jsonl`))) renameSync(file(`audit.${n}.jsonl`), file(`audit.${n + 1}.jsonl`));
    renameSync(file('audit.jsonl'), file('audit.1.jsonl'));
  };
  writeFileSync(file('audit.jsonl'), 'a0\na1\n');
  const tail = new AuditTail(dir, 'audit.jsonl');
  tail.start(true);
  t.after(() => tail.close());
  const seen = [...tail.read()];
  // Two rotations the follower has not seen yet: audit.2 is the file it has open, audit.1 is unread.
  appendFileSync(file('audit.jsonl'), 'a2\n');
  rotate();
  writeFileSync(file('audit.jsonl'), 'b0\nb1\n');
  rotate();
  writeFileSync(file('audit.jsonl'), 'c0\n');
  const openSync = fs.openSync;
  let rotatedInside = false;
  fs.openSync = (name, ...rest) => {
    if (!rotatedInside && String(name) === file('audit.1.jsonl')) {
      rotatedInside = true;
      rotate();
      writeFileSync(file('audit.jsonl'), 'd0\n');
    }
    return openSync(name, ...rest);
  };
  syncBuiltinESMExports();
  t.after(() => {
    fs.openSync = openSync;
    syncBuiltinESMExports();
  });
  seen.push(...tail.read());
  assert.ok(rotatedInside, 'the follower never opened audit.1.jsonl: the test proves nothing');
  fs.openSync = openSync;
  syncBuiltinESMExports();
  seen.push(...tail.read(), ...tail.read());
  assert.deepEqual(seen, ['a0', 'a1', 'a2', 'b0', 'b1', 'c0', 'd0']);
});
