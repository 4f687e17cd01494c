// Issue 2, section 3: records written by the earlier Python tool (no schema_version, `+00:00`
// timestamps with microseconds, no finalized_at, optional keys missing) are read by the built CLI,
// and upgraded to schema_version 1 on their next write. Fixtures: tests/fixtures/legacy/store (as the
// Python tool wrote them: json.dump, indent 2, no trailing newline) and legacy/corrupt (no zone).
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { cleanEnv, FIXTURES, runCli, tempDir } from './helpers/run.mjs';

const LEGACY = path.join(FIXTURES, 'legacy');
const IDS = readdirSync(path.join(LEGACY, 'store')).sort();
const Z_STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Far enough that the fixtures' fixed dates stay inside the resume window. */
const WIDE_WINDOW = { AGENT_SESSION_RESUME_WINDOW_MINUTES: String(100 * 365 * 24 * 60) };

/** A temp store holding the legacy fixtures (plus the corrupt one when asked). */
function legacyStore(t, { corrupt = false } = {}) {
  const root = tempDir(t);
  const store = path.join(root, 'store');
  cpSync(path.join(LEGACY, 'store'), store, { recursive: true });
  if (corrupt) cpSync(path.join(LEGACY, 'corrupt'), store, { recursive: true });
  const file = (id) => path.join(store, id, 'state.json');
  return {
    store,
    file,
    read: (id) => readFileSync(file(id), 'utf8'),
    fixture: (id) => readFileSync(path.join(LEGACY, 'store', id, 'state.json'), 'utf8'),
    run: (args, env = {}) => runCli([...args, '--dir', store], { cwd: root, env: cleanEnv(env) }),
  };
}

function okJson(r) {
  assert.equal(r.stderr, '', r.stderr);
  assert.equal(r.code, 0, r.stdout);
  return JSON.parse(r.stdout);
}

describe('records of the earlier Python tool', { concurrency: 3 }, () => {
  test('the fixtures are what the earlier tool wrote: no schema_version, +00:00 timestamps, no finalized_at', () => {
    assert.deepEqual(IDS, ['legacy-approval', 'legacy-child', 'legacy-completed', 'legacy-minimal']);
    for (const id of IDS) {
      const text = readFileSync(path.join(LEGACY, 'store', id, 'state.json'), 'utf8');
      const raw = JSON.parse(text);
      assert.ok(!('schema_version' in raw) && !('finalized_at' in raw), id);
      assert.match(raw.last_updated, /\+00:00$/);
      assert.ok(!text.endsWith('\n'));
    }
  });

  test('get reads every legacy record as version 0, with defaults for the missing keys', async (t) => {
    const s = legacyStore(t);
    const records = await Promise.all(IDS.map(async (id) => okJson(await s.run(['get', id, '--json']))));
    for (const [i, record] of records.entries()) {
      const raw = JSON.parse(s.fixture(IDS[i]));
      assert.equal(record.schema_version, 0);
      for (const [key, value] of Object.entries(raw)) assert.deepEqual(record[key], value, `${IDS[i]}.${key} as written`);
    }
    const minimal = records[IDS.indexOf('legacy-minimal')];
    assert.deepEqual(
      [minimal.purpose, minimal.resume_ready, minimal.history, minimal.error_count, minimal.last_error, minimal.parent_session_id],
      [null, false, [], 0, null, null],
    );
    // Reading never rewrites.
    for (const id of IDS) assert.equal(s.read(id), s.fixture(id));
  });

  test('list sorts legacy records by instant and filters them', async (t) => {
    const s = legacyStore(t);
    const listed = okJson(await s.run(['list', '--json']));
    assert.deepEqual(listed.problems, []);
    assert.deepEqual(listed.sessions.map((x) => x.agent_id), ['legacy-child', 'legacy-approval', 'legacy-minimal', 'legacy-completed']);
    const kids = okJson(await s.run(['list', '--json', '--parent', 'legacy-approval']));
    assert.deepEqual(kids.sessions.map((x) => x.agent_id), ['legacy-child']);
    const active = okJson(await s.run(['list', '--json', '--active-only'], WIDE_WINDOW));
    assert.deepEqual(active.sessions.map((x) => x.agent_id), ['legacy-approval']);
  });

  test('should-resume decides on legacy records: resumable, expired, finalized without finalized_at, not resume ready', async (t) => {
    const s = legacyStore(t);
    const decide = async (id, env = {}, code = 1) => {
      const r = await s.run(['should-resume', id, '--json'], env);
      assert.equal(r.code, code, `${id}: ${r.stderr}`);
      return JSON.parse(r.stdout).reason;
    };
    assert.equal(await decide('legacy-approval', WIDE_WINDOW, 0), 'resumable');
    assert.equal(await decide('legacy-approval'), 'expired');
    assert.equal(await decide('legacy-completed', WIDE_WINDOW), 'finalized');
    assert.equal(await decide('legacy-minimal', WIDE_WINDOW), 'not_resume_ready');
    assert.equal(await decide('legacy-child', WIDE_WINDOW), 'phase_not_resumable');
  });

  test('an update upgrades to schema_version 1 with Z timestamps for what it writes, keeping metadata and history', async (t) => {
    const s = legacyStore(t);
    const raw = JSON.parse(s.fixture('legacy-approval'));
    const updated = okJson(await s.run(['update', 'legacy-approval', '--metadata', '{"review":{"approved":true}}', '--error', 'timeout', '--json']));
    const text = s.read('legacy-approval');
    assert.ok(text.endsWith('}\n'));
    const disk = JSON.parse(text);
    assert.deepEqual(disk, updated);
    assert.equal(disk.schema_version, 1);
    assert.equal(Object.keys(disk)[0], 'schema_version');
    assert.match(disk.last_updated, Z_STAMP);
    assert.match(disk.last_error.timestamp, Z_STAMP);
    assert.deepEqual(disk.last_error, { message: 'timeout', timestamp: disk.last_updated });
    assert.equal(disk.error_count, 2);
    assert.equal(disk.created_at, raw.created_at);
    assert.deepEqual(disk.history, raw.history);
    assert.deepEqual(disk.metadata, { ...raw.metadata, review: { blocking: 1, approved: true } });
    assert.deepEqual([disk.phase, disk.resume_ready, disk.purpose], [raw.phase, true, raw.purpose]);
    // The others are untouched, and the upgraded record reads back as version 1.
    for (const id of IDS.filter((x) => x !== 'legacy-approval')) assert.equal(s.read(id), s.fixture(id));
    assert.equal(okJson(await s.run(['get', 'legacy-approval'])).schema_version, 1);
  });

  test('a phase change on a minimal legacy record fills in its missing keys and appends a Z history entry', async (t) => {
    const s = legacyStore(t);
    okJson(await s.run(['update', 'legacy-minimal', '--phase', 'approval', '--json']));
    const disk = JSON.parse(s.read('legacy-minimal'));
    assert.deepEqual(Object.keys(disk), [
      'schema_version', 'agent_id', 'agent_name', 'purpose', 'created_at', 'last_updated', 'phase', 'metadata',
      'resume_ready', 'history', 'error_count', 'last_error', 'parent_session_id',
    ]);
    assert.deepEqual(disk.history, [{ from_phase: 'investigating', to_phase: 'approval', timestamp: disk.last_updated }]);
    assert.match(disk.last_updated, Z_STAMP);
    assert.deepEqual([disk.schema_version, disk.resume_ready, disk.metadata, disk.error_count], [1, true, { ticket: 'OPS-7' }, 0]);
    assert.equal((await s.run(['should-resume', 'legacy-minimal'])).code, 0);
  });

  test('finalize upgrades a legacy record; a legacy final record stays final', async (t) => {
    const s = legacyStore(t);
    const done = okJson(await s.run(['finalize', 'legacy-child', 'completed', '--summary', 'ok', '--json']));
    assert.equal(done.schema_version, 1);
    assert.match(done.finalized_at, Z_STAMP);
    const expected = (Date.parse(done.finalized_at) - Date.parse('2026-11-22T09:59:00.000Z')) / 1000;
    assert.ok(Math.abs(done.duration_seconds - expected) < 0.01, `${done.duration_seconds} vs ${expected}`);
    assert.deepEqual(done.history.at(-1), { from_phase: 'executing', to_phase: 'completed', timestamp: done.finalized_at, event: 'finalized' });
    // legacy-completed has phase completed but no finalized_at: still final.
    for (const args of [['update', 'legacy-completed', '--phase', 'planning'], ['finalize', 'legacy-completed', 'failed']]) {
      const r = await s.run(args);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stderr, /^agent-session: [^\n]+\n$/);
    }
    // The same outcome again is a no-op: nothing is written, not even the upgrade.
    assert.equal((await s.run(['finalize', 'legacy-completed', 'completed'])).code, 0);
    assert.equal(s.read('legacy-completed'), s.fixture('legacy-completed'));
  });

  test('a timestamp without a zone is corrupt: exit 4 on get and update (file kept), a problem for list', async (t) => {
    const s = legacyStore(t, { corrupt: true });
    const before = s.read('legacy-zoneless');
    for (const args of [['get', 'legacy-zoneless', '--json'], ['update', 'legacy-zoneless', '--phase', 'planning']]) {
      const r = await s.run(args);
      assert.equal(r.code, 4, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^agent-session: [^\n]+\n$/);
    }
    assert.equal(s.read('legacy-zoneless'), before);
    const r = await s.run(['list', '--json']);
    assert.equal(r.code, 0);
    const listed = JSON.parse(r.stdout);
    assert.deepEqual(listed.sessions.map((x) => x.agent_id).sort(), IDS);
    assert.deepEqual(listed.problems.map((p) => [p.id, p.code, p.path]), [['legacy-zoneless', 'ECORRUPT', s.file('legacy-zoneless')]]);
    assert.match(r.stderr, /^agent-session: skipped legacy-zoneless\b[^\n]*\n$/);
    const decision = await s.run(['should-resume', 'legacy-zoneless', '--json'], WIDE_WINDOW);
    assert.deepEqual([decision.code, JSON.parse(decision.stdout).reason], [1, 'corrupt']);
  });
});
