// Records written by gaia-ops v3.5.1's agent_session.py (tests/fixtures/legacy/python: json.dump with
// indent 2, no trailing newline, no schema_version, isoformat `+00:00` timestamps with or without microseconds, no
// finalized_at, optional keys missing, \u escapes) are read by the built CLI and library and upgraded on
// their next write; tests/fixtures/legacy/python-refused holds a zone-less record and a newer one.
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { RECORD_KEYS } from './helpers/record-keys.mjs';
import { cleanEnv, FIXTURES, loadLibrary, runCli, tempDir } from './helpers/run.mjs';

const PYTHON = path.join(FIXTURES, 'legacy', 'python');
const REFUSED = path.join(FIXTURES, 'legacy', 'python-refused');
const PAUSED = 'agent-20260301-090000-1a2b3c4d';
const DONE = 'agent-20260228-170000-deadbeef';
const MINIMAL = 'legacy-minimal';
const Z_STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const { Sessions } = await loadLibrary();

/** A temp store holding copies of the fixtures in `from`. */
function store(t, from = PYTHON) {
  const dir = path.join(tempDir(t), 'store');
  cpSync(from, dir, { recursive: true });
  const file = (id) => path.join(dir, id, 'state.json');
  return {
    dir,
    read: (id) => readFileSync(file(id), 'utf8'),
    original: (id) => readFileSync(path.join(from, id, 'state.json'), 'utf8'),
    run: async (...args) => {
      const result = await runCli([...args, '--dir', dir], {
        cwd: path.dirname(dir),
        env: cleanEnv({ HOME: path.dirname(dir) }),
      });
      return { ...result, json: result.stdout.trim().startsWith('{') ? JSON.parse(result.stdout) : undefined };
    },
  };
}

/** Every timestamp a record holds, by where it is. */
function timestamps(r) {
  const out = { created_at: r.created_at, last_updated: r.last_updated };
  if (r.finalized_at) out.finalized_at = r.finalized_at;
  if (r.last_error) out['last_error.timestamp'] = r.last_error.timestamp;
  (r.history ?? []).forEach((h, i) => (out[`history.${i}`] = h.timestamp));
  return out;
}

test('the fixtures are as agent_session.py wrote them', () => {
  for (const id of [PAUSED, DONE, MINIMAL]) {
    const text = readFileSync(path.join(PYTHON, id, 'state.json'), 'utf8');
    const r = JSON.parse(text);
    assert.ok(!text.endsWith('\n'));
    assert.ok(!('schema_version' in r) && !('finalized_at' in r));
    for (const stamp of Object.values(timestamps(r))) assert.match(stamp, /\+00:00$/);
  }
  assert.match(readFileSync(path.join(PYTHON, PAUSED, 'state.json'), 'utf8'), /\\u00e9/);
});

test('get, show, list and should-resume read legacy records (version 0, defaults for missing keys)', async (t) => {
  const s = store(t);
  const [paused, minimal, shown, listed, resume] = await Promise.all([
    s.run('get', PAUSED, '--json'),
    s.run('get', MINIMAL, '--json'),
    s.run('show', DONE),
    s.run('list', '--json'),
    s.run('should-resume', PAUSED, '--json'),
  ]);
  for (const result of [paused, minimal, shown, listed]) assert.equal(result.code, 0, result.stderr);
  const raw = JSON.parse(s.original(PAUSED));
  assert.deepEqual(paused.json, { ...raw, schema_version: 0 });
  assert.equal(paused.json.purpose, 'Review the café payment refactor');
  assert.deepEqual(minimal.json, {
    agent_id: MINIMAL,
    agent_name: 'planner',
    purpose: null,
    created_at: '2026-03-01T08:00:00.000000+00:00',
    last_updated: '2026-03-01T08:00:00.000000+00:00',
    phase: 'planning',
    metadata: {},
    resume_ready: false,
    history: [],
    error_count: 0,
    last_error: null,
    parent_session_id: null,
    schema_version: 0,
  });
  assert.match(shown.stdout, /debugger/);
  assert.match(shown.stdout, /ago/);
  // Newest first by instant: 09:20:30 on 1 March, 08:00 on 1 March, 28 February.
  assert.deepEqual(
    listed.json.sessions.map((x) => x.agent_id),
    [PAUSED, MINIMAL, DONE],
  );
  assert.deepEqual(listed.json.problems, []);
  // Long past its window today, but read: the decision is about time, not a read failure.
  assert.equal(resume.code, 1);
  assert.deepEqual([resume.json.resume, resume.json.reason], [false, 'expired']);
  for (const id of [PAUSED, DONE, MINIMAL]) assert.equal(s.read(id), s.original(id), 'reads never rewrite');
});

test('the resume rules apply to legacy records as written, at their own time', async (t) => {
  const s = store(t);
  const lastUpdated = Date.parse('2026-03-01T09:20:30.654Z');
  const sessions = Sessions.open({ dir: s.dir, cwd: s.dir, env: {}, now: () => lastUpdated });
  const at = async (id, ms) => (await sessions.shouldResume(id, lastUpdated + ms)).reason;
  assert.equal(await at(PAUSED, 30 * 60_000), 'resumable', '30:00 after the microsecond timestamp');
  assert.equal(await at(PAUSED, 30 * 60_000 + 1000), 'expired');
  assert.equal(await at(DONE, 0), 'finalized', 'phase completed without finalized_at is final');
  assert.equal(await at(MINIMAL, 0), 'not_resume_ready', 'resume_ready missing reads as false');
  const active = await sessions.list({ activeOnly: true });
  assert.deepEqual(
    active.sessions.map((x) => x.agent_id),
    [PAUSED],
  );
});

test(
  'an update upgrades a legacy record: ' + 'schema_version 1, new timestamps in Z form, everything else kept',
  async (t) => {
    const s = store(t);
    const raw = JSON.parse(s.original(PAUSED));
    const result = await s.run(
      'update',
      PAUSED,
      '--phase',
      'planning',
      '--metadata',
      '{"review":{"approved":true}}',
      '--error',
      'again',
      '--json',
    );
    assert.equal(result.code, 0, result.stderr);
    const text = s.read(PAUSED);
    assert.ok(text.endsWith('}\n'));
    const disk = JSON.parse(text);
    assert.deepEqual(result.json, disk, 'the CLI prints what is on disk');
    assert.equal(disk.schema_version, 1);
    assert.equal(Object.keys(disk)[0], 'schema_version');
    for (const stamp of [disk.last_updated, disk.last_error.timestamp, disk.history.at(-1).timestamp])
      assert.match(stamp, Z_STAMP);
    // What agent_session.py recorded keeps its instants (to the millisecond).
    const ms = (stamp) => Math.floor(Date.parse(stamp.replace(/(\.\d{3})\d+/, '$1')));
    assert.equal(ms(disk.created_at), ms(raw.created_at));
    raw.history.forEach((h, i) => {
      assert.deepEqual([disk.history[i].from_phase, disk.history[i].to_phase], [h.from_phase, h.to_phase]);
      assert.equal(ms(disk.history[i].timestamp), ms(h.timestamp));
    });
    assert.deepEqual(disk.history.at(-1), {
      from_phase: 'approval',
      to_phase: 'planning',
      timestamp: disk.last_updated,
    });
    assert.deepEqual(disk.metadata, { ...raw.metadata, review: { blocking: 1, approved: true } });
    assert.deepEqual([disk.error_count, disk.purpose, disk.agent_name], [2, raw.purpose, raw.agent_name]);
    // The upgraded record reads back as version 1 through every reader.
    const [got, listed] = await Promise.all([s.run('get', PAUSED, '--json'), s.run('list', '--json')]);
    assert.equal(got.json.schema_version, 1);
    assert.deepEqual(listed.json.problems, []);
    assert.equal(listed.json.sessions.length, 3);
  },
);

test('a minimal legacy record gains every key in the stable order on its first write', async (t) => {
  const s = store(t);
  const result = await s.run('update', MINIMAL, '--phase', 'approval', '--json');
  assert.equal(result.code, 0, result.stderr);
  const disk = JSON.parse(s.read(MINIMAL));
  assert.deepEqual(Object.keys(disk), RECORD_KEYS);
  assert.deepEqual([disk.schema_version, disk.resume_ready, disk.history.length, disk.error_count], [1, true, 1, 0]);
  assert.equal((await s.run('should-resume', MINIMAL)).code, 0);
});

test('finalize upgrades a legacy record; a legacy final record stays final; unknown keys survive', async (t) => {
  const s = store(t);
  const finalized = await s.run('finalize', PAUSED, 'completed', '--summary', 'ok', '--json');
  assert.equal(finalized.code, 0, finalized.stderr);
  const disk = JSON.parse(s.read(PAUSED));
  assert.deepEqual(finalized.json, disk);
  assert.equal(disk.schema_version, 1);
  assert.match(disk.finalized_at, Z_STAMP);
  const expected = (Date.parse(disk.finalized_at) - Date.parse('2026-03-01T09:00:00.123Z')) / 1000;
  assert.ok(Math.abs(disk.duration_seconds - expected) < 0.01, `${disk.duration_seconds} vs ${expected}`);

  const [update, other, same] = await Promise.all([
    s.run('update', DONE, '--phase', 'planning', '--json'),
    s.run('finalize', DONE, 'failed', '--json'),
    s.run('finalize', DONE, 'completed', '--json'),
  ]);
  assert.deepEqual([update.code, other.code, same.code], [3, 3, 0]);
  assert.match(update.stderr, /^agent-session: [^\n]+\n$/);
  // agent_session.py's own key (final_summary) is kept through a write that upgrades the record.
  const kept = Sessions.open({ dir: s.dir, cwd: s.dir, env: {} });
  await kept.store.update(DONE, (r) => ({ ...r, metadata: { touched: true } }));
  const upgraded = JSON.parse(s.read(DONE));
  assert.deepEqual(
    [upgraded.schema_version, upgraded.final_summary, upgraded.phase],
    [1, 'Fixed the race in the fixture', 'completed'],
  );
});

test('a timestamp without a zone is corrupt (exit 4), kept byte for byte, a problem for list', async (t) => {
  const s = store(t, REFUSED);
  const before = s.read('legacy-naive');
  const [get, update, list, resume] = await Promise.all([
    s.run('get', 'legacy-naive', '--json'),
    s.run('update', 'legacy-naive', '--phase', 'approval', '--json'),
    s.run('list', '--json'),
    s.run('should-resume', 'legacy-naive', '--json'),
  ]);
  for (const result of [get, update]) {
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stderr, /^agent-session: [^\n]+\n$/);
  }
  assert.deepEqual(list.json.problems.map((p) => [p.id, p.code]).sort(), [
    ['from-the-future', 'EVERSION'],
    ['legacy-naive', 'ECORRUPT'],
  ]);
  assert.deepEqual([resume.code, resume.json.reason], [1, 'corrupt']);
  assert.equal(s.read('legacy-naive'), before);
});

test(
  'a record with a newer schema_version is refused (EVERSION, exit 4) and never rewritten, ' + 'moved or deleted',
  async (t) => {
    const s = store(t, REFUSED);
    const id = 'from-the-future';
    const before = s.read(id);
    const runs = [
      ['get', id, '--json'],
      ['show', id],
      ['update', id, '--phase', 'planning', '--json'],
      ['update', id, '--metadata', '{"a":null}', '--json'],
      ['finalize', id, 'completed', '--json'],
      ['create', '--agent', 'x', '--id', id, '--json'],
    ];
    const results = await Promise.all(runs.map((args) => s.run(...args)));
    results.forEach((result, i) => {
      assert.equal(result.code, 4, `${runs[i]}: ${result.stderr}`);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /^agent-session: [^\n]+\n$/);
    });
    const sessions = Sessions.open({ dir: s.dir, cwd: s.dir, env: {} });
    await assert.rejects(sessions.get(id), { code: 'EVERSION' });
    const cleanup = await s.run('cleanup', '--hours', '0', '--json');
    assert.equal(cleanup.code, 0, cleanup.stderr);
    assert.ok(
      cleanup.json.skipped.some((x) => x.id === id),
      'cleanup reports it and leaves it',
    );
    assert.equal(s.read(id), before);
    assert.deepEqual(readdirSync(path.join(s.dir, id)), ['state.json']);
    assert.ok(existsSync(path.join(s.dir, id, 'state.json')));
  },
);
