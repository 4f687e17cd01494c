// The pure rules (phases, resume decision, merge patch, ids, timestamps, update, finalize,
// settings), through the built library and its policy modules, with the clock passed in.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { RECORD_KEYS } from './helpers/record-keys.mjs';
import { DIST, loadLibrary, tempDir } from './helpers/run.mjs';

const load = (rel) => import(pathToFileURL(path.join(DIST, 'tools', rel)).href);
const lib = await loadLibrary();
const { isValidId, assertValidId, generateId } = await load('ids.js');
const { parseTimestamp, formatTimestamp } = await load('time.js');
const { applyUpdate, applyFinalize, newRecord } = await load('policy/lifecycle.js');
const { decideResume } = await load('policy/resume.js');
const { mergePatch } = await load('merge-patch.js');
// The modules above are the ones transpiled one by one; the library (`lib`) is their bundle, with
// classes of its own: what they throw is their SessionError.
const { SessionError } = await load('errors.js');

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0, 0);
const MIN = 60_000;

/** A library instance on a temp store whose clock is `clock.now`. */
function open(t, { clock = { now: T0 }, env = {}, settings, cwd } = {}) {
  const dir = path.join(tempDir(t), 'store');
  const sessions = lib.Sessions.open({ dir, cwd: cwd ?? path.dirname(dir), env, settings, now: () => clock.now });
  return { sessions, dir, clock, file: (id) => path.join(dir, id, 'state.json') };
}

async function rejects(promise, code) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof lib.SessionError, `not a SessionError: ${err}`);
    assert.equal(err.code, code);
    return true;
  });
}

function throwsCode(fn, code) {
  assert.throws(fn, (err) => err instanceof SessionError && err.code === code);
}

/** A record paused in approval at `at`, through the pure lifecycle functions. */
function paused(at = T0, extra = {}) {
  const created = newRecord({ id: 's1', agentName: 'a' }, at - 5 * MIN);
  return { ...applyUpdate(created, { phase: 'approval' }, at), ...extra };
}

test('phases: nine in order, three final outcomes, three resumable', () => {
  assert.deepEqual(lib.PHASES, [
    'initializing',
    'investigating',
    'planning',
    'approval',
    'executing',
    'validating',
    'completed',
    'failed',
    'abandoned',
  ]);
  assert.deepEqual(lib.OUTCOMES, ['completed', 'failed', 'abandoned']);
  assert.deepEqual([...lib.RESUMABLE_PHASES].sort(), ['approval', 'investigating', 'planning']);
});

test('resume decision: the defaults are a 30-minute window, 3 errors and a 60 s clock-skew allowance', (t) => {
  const { sessions } = open(t);
  assert.deepEqual(sessions.rules, { resumeWindowMs: 30 * MIN, errorBudget: 3, clockSkewMs: 60_000 });
});

test('resume decision at the window boundary: 29:59 and 30:00 resume, 30:01 expires', (t) => {
  const rules = open(t).sessions.rules;
  const record = paused();
  const at = (ms) => decideResume(record, T0 + ms, rules);
  assert.deepEqual([at(29 * MIN + 59_000).resume, at(29 * MIN + 59_000).reason], [true, 'resumable']);
  assert.deepEqual([at(30 * MIN).resume, at(30 * MIN).reason], [true, 'resumable']);
  assert.deepEqual([at(30 * MIN + 1000).resume, at(30 * MIN + 1000).reason], [false, 'expired']);
  assert.deepEqual([at(30 * MIN + 1).resume, at(30 * MIN + 1).reason], [false, 'expired']);
});

test('per-phase resume windows: a phase with its own window uses it, the others the general one', (t) => {
  const { sessions } = open(t, {
    settings: { resumeWindowMinutesApproval: 1440 },
    env: { AGENT_SESSION_RESUME_WINDOW_MINUTES_PLANNING: '5' },
  });
  const rules = sessions.rules;
  assert.deepEqual(rules.phaseWindowsMs, { approval: 1440 * MIN, planning: 5 * MIN });
  const at = (record, ms) => decideResume(record, T0 + ms, rules).reason;
  assert.equal(at(paused(), 23 * 60 * MIN), 'resumable');
  assert.equal(at(paused(), 24 * 60 * MIN + 1), 'expired');
  assert.match(decideResume(paused(), T0 + 25 * 60 * MIN, rules).detail, /86400 s resume window of approval/);
  const investigating = applyUpdate(paused(), { phase: 'investigating' }, T0);
  assert.deepEqual([at(investigating, 30 * MIN), at(investigating, 30 * MIN + 1)], ['resumable', 'expired']);
  const planning = applyUpdate(paused(), { phase: 'planning' }, T0);
  assert.deepEqual([at(planning, 5 * MIN), at(planning, 5 * MIN + 1)], ['resumable', 'expired']);
  assert.throws(
    () => open(t, { env: { AGENT_SESSION_RESUME_WINDOW_MINUTES_APPROVAL: '-1' } }),
    (err) => err.code === 'EINVALID' && /RESUME_WINDOW_MINUTES_APPROVAL must be a number >= 0/.test(err.message),
  );
});

test('resume decision at the error budget: 2 errors resume, 3 do not', (t) => {
  const rules = open(t).sessions.rules;
  let record = paused();
  record = applyUpdate(record, { error: 'one' }, T0);
  record = applyUpdate(record, { error: 'two' }, T0);
  assert.equal(record.error_count, 2);
  assert.deepEqual(decideResume(record, T0 + MIN, rules).reason, 'resumable');
  record = applyUpdate(record, { error: 'three' }, T0);
  const decision = decideResume(record, T0 + MIN, rules);
  assert.deepEqual([decision.resume, decision.reason], [false, 'too_many_errors']);
});

test('resume decision: a future last_updated within the clock-skew allowance resumes, beyond it is expired', (t) => {
  const rules = open(t).sessions.rules;
  const record = paused();
  const before = (ms) => decideResume(record, T0 - ms, rules);
  assert.equal(before(59_000).reason, 'resumable');
  assert.equal(before(60_000).reason, 'resumable');
  assert.deepEqual([before(61_000).resume, before(61_000).reason], [false, 'expired']);
  assert.deepEqual([before(365 * 24 * 60 * MIN).resume, before(365 * 24 * 60 * MIN).reason], [false, 'expired']);
});

test('resume decision: every reason value', async (t) => {
  const rules = open(t).sessions.rules;
  const reason = (record, now = T0 + MIN) => {
    const d = decideResume(record, now, rules);
    assert.equal(d.resume, d.reason === 'resumable');
    assert.equal(typeof d.detail, 'string');
    return d.reason;
  };
  assert.equal(reason(paused()), 'resumable');
  assert.equal(reason(undefined), 'not_found');
  assert.equal(reason(applyFinalize(paused(), 'completed', null, T0).record), 'finalized');
  // A final phase without finalized_at (a record of agent_session.py) is final too.
  assert.equal(reason({ ...paused(), phase: 'failed' }), 'finalized');
  for (const phase of ['initializing', 'executing', 'validating'])
    assert.equal(reason(applyUpdate(paused(), { phase }, T0)), 'phase_not_resumable');
  assert.equal(reason(paused(T0, { resume_ready: false })), 'not_resume_ready');
  assert.equal(reason(paused(), T0 + 31 * MIN), 'expired');
  assert.equal(reason(paused(T0, { error_count: 3 })), 'too_many_errors');
  for (const phase of ['investigating', 'planning', 'approval'])
    assert.equal(reason(applyUpdate(paused(), { phase }, T0)), 'resumable');

  // `corrupt` comes from the library, which reads the file.
  const { sessions, dir } = open(t);
  mkdirSync(path.join(dir, 'bad'), { recursive: true });
  writeFileSync(path.join(dir, 'bad', 'state.json'), '{"agent_id": "bad", ');
  const decision = await sessions.shouldResume('bad');
  assert.deepEqual([decision.resume, decision.reason, decision.session], [false, 'corrupt', null]);
  assert.equal((await sessions.shouldResume('nobody')).reason, 'not_found');
});

test('shouldResume through the store uses the given instant and the record on disk', async (t) => {
  const { sessions } = open(t);
  await sessions.create({ agentName: 'a', id: 'p' });
  await sessions.update('p', { phase: 'planning' });
  const at = async (ms) => (await sessions.shouldResume('p', T0 + ms)).reason;
  assert.equal(await at(30 * MIN), 'resumable');
  assert.equal(await at(30 * MIN + 1000), 'expired');
  const decision = await sessions.shouldResume('p', T0);
  assert.equal(decision.session.agent_id, 'p');
  assert.equal(decision.session.phase, 'planning');
});

test('merge patch: the RFC 7386 examples', () => {
  const cases = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, expected] of cases) {
    const before = structuredClone(target);
    assert.deepEqual(mergePatch(target, patch), expected, `${JSON.stringify(target)} + ${JSON.stringify(patch)}`);
    assert.deepEqual(target, before, 'the target is not modified');
    // The library exports the same merge patch.
    assert.deepEqual(lib.mergePatch(target, patch), expected, `library: ${JSON.stringify(patch)}`);
    assert.deepEqual(target, before, 'the library leaves the target as it was');
  }
});

test('merge patch: nested objects merge, arrays replace, null deletes only its key', () => {
  const target = { ticket: 'A-1', files: { a: 1, b: { x: 1, y: 2 } }, tags: ['x', 'y'] };
  const patch = { files: { b: { y: null, z: 3 }, c: 4 }, tags: ['z'], ticket: null, added: true };
  assert.deepEqual(mergePatch(target, patch), { files: { a: 1, b: { x: 1, z: 3 }, c: 4 }, tags: ['z'], added: true });
});

test('merge patch: a "__proto__" key is stored as data, never as a prototype', () => {
  const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": {"__proto__": {"deep": 1}}}');
  const result = mergePatch({}, patch);
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  assert.ok(Object.hasOwn(result, '__proto__'));
  assert.deepEqual(JSON.parse(JSON.stringify(result)), {
    ['__proto__']: { polluted: true },
    a: { ['__proto__']: { deep: 1 } },
  });
  assert.equal({}.polluted, undefined);
  assert.equal(result.polluted, undefined);
  // A later patch merges into the stored data and can delete it.
  const merged = mergePatch(result, JSON.parse('{"__proto__": {"more": 2}}'));
  assert.deepEqual(JSON.parse(JSON.stringify(merged)).__proto__, { polluted: true, more: 2 });
  assert.ok(!Object.hasOwn(mergePatch(result, JSON.parse('{"__proto__": null}')), '__proto__'));
});

test('merge patch through update: "__proto__" metadata is written to the file and read back as data', async (t) => {
  const { sessions, file } = open(t);
  await sessions.create({ agentName: 'a', id: 'm', metadata: { keep: 1 } });
  await sessions.update('m', { metadata: JSON.parse('{"__proto__": {"admin": true}, "n": {"x": 1}}') });
  const updated = await sessions.update('m', { metadata: { n: { y: 2 }, keep: null } });
  assert.equal(updated.metadata.admin, undefined);
  const onDisk = JSON.parse(readFileSync(file('m'), 'utf8'));
  assert.deepEqual(Object.keys(onDisk.metadata).sort(), ['__proto__', 'n']);
  assert.deepEqual(onDisk.metadata.n, { x: 1, y: 2 });
  assert.ok(Object.hasOwn((await sessions.get('m')).metadata, '__proto__'));
});

test('ids: 1-128 characters of [A-Za-z0-9._-], not starting with "."', () => {
  for (const id of [
    'a',
    'Z',
    '0',
    '_x',
    '-x',
    'a.b',
    'A-b_c.d-9',
    'x'.repeat(128),
    'agent-20261122-120000-0a1b2c3d',
    'x..y',
  ]) {
    assert.ok(isValidId(id), id);
    assertValidId(id);
  }
  const bad = [
    '',
    'x'.repeat(129),
    '.',
    '..',
    '.hidden',
    '../x',
    '..\\x',
    'a/b',
    'a\\b',
    '/abs',
    'a b',
    ' a',
    'a\n',
    'é',
    'a\0b',
    'a:b',
    'a*',
  ];
  for (const id of bad) {
    assert.equal(isValidId(id), false, JSON.stringify(id));
    throwsCode(() => assertValidId(id), 'EINVALID');
  }
  for (const value of [undefined, null, 1, true, {}, ['a'], Symbol('a')]) {
    assert.equal(isValidId(value), false, String(value));
    throwsCode(() => assertValidId(value), 'EINVALID');
  }
});

test('ids: generated as agent-YYYYMMDD-HHMMSS-<8 hex> in UTC, and valid', () => {
  const id = generateId(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)));
  assert.match(id, /^agent-20260102-030405-[0-9a-f]{8}$/);
  assert.ok(isValidId(id));
  assert.notEqual(generateId(new Date(T0)), generateId(new Date(T0)));
});

test('ids are validated wherever they enter the library', async (t) => {
  const { sessions, dir } = open(t);
  for (const id of ['../x', 'a/b', '.x', '', 'x'.repeat(129)]) {
    await rejects(sessions.create({ agentName: 'a', id }), 'EINVALID');
    await rejects(sessions.get(id), 'EINVALID');
    await rejects(sessions.update(id, { phase: 'planning' }), 'EINVALID');
    await rejects(sessions.finalize(id, 'completed'), 'EINVALID');
    await rejects(sessions.shouldResume(id), 'EINVALID');
    await rejects(sessions.list({ parent: id }), 'EINVALID');
    await rejects(sessions.create({ agentName: 'a', parent: id }), 'EINVALID');
  }
  await rejects(sessions.get(42), 'EINVALID');
  assert.throws(
    () => readFileSync(path.join(dir, '..', 'x', 'state.json')),
    { code: 'ENOENT' },
    'nothing written next to the store',
  );
});

test('timestamps: Z, +00:00, microseconds and other offsets are read as instants; no zone is rejected', () => {
  const at = Date.UTC(2026, 0, 2, 3, 4, 5, 123);
  assert.equal(parseTimestamp('2026-01-02T03:04:05.123Z'), at);
  assert.equal(parseTimestamp('2026-01-02T03:04:05.123+00:00'), at);
  assert.equal(parseTimestamp('2026-01-02T03:04:05.123456+00:00'), at, 'Python isoformat microseconds');
  assert.equal(parseTimestamp('2026-01-02T03:04:05.123999Z'), at, 'truncated to milliseconds');
  assert.equal(parseTimestamp('2026-01-02T03:04:05+00:00'), at - 123, 'Python isoformat without a fraction');
  assert.equal(parseTimestamp('2026-01-02T05:04:05.123+02:00'), at);
  assert.equal(parseTimestamp('2026-01-01T22:04:05.123-05:00'), at);
  for (const bad of [
    '2026-01-02T03:04:05.123456',
    '2026-01-02T03:04:05',
    '2026-01-02',
    '2026-01-02 03:04:05Z',
    'yesterday',
    '',
    '2026-13-02T03:04:05Z',
    '2026-01-02T03:04:05.123+0000',
  ]) {
    assert.equal(parseTimestamp(bad), undefined, bad);
  }
  for (const bad of [undefined, null, at, {}]) assert.equal(parseTimestamp(bad), undefined);
  assert.equal(formatTimestamp(at), '2026-01-02T03:04:05.123Z');
  assert.equal(formatTimestamp(Date.UTC(2026, 0, 2)), '2026-01-02T00:00:00.000Z');
});

test('formatTimestamp writes exactly what toISOString writes, for any time', () => {
  // Built from the UTC fields (tools/time.ts says why): it must never differ from toISOString.
  const samples = [
    0,
    1,
    -1,
    999,
    Date.UTC(1970, 0, 1, 0, 0, 0, 1),
    Date.UTC(2000, 1, 29, 23, 59, 59, 999),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
  ];
  samples.push(
    Date.UTC(0, 0, 1) - 1,
    Date.UTC(0, 0, 1),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1,
    8.64e15,
    -8.64e15,
  );
  samples[samples.indexOf(Date.UTC(0, 0, 1))] = new Date('0000-01-01T00:00:00.000Z').getTime();
  let seed = 7;
  for (let i = 0; i < 2000; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    samples.push(Math.round((seed / 2 ** 31 - 0.5) * 2 * 8.64e15 * (i % 2 ? 1 : 1e-3)));
  }
  for (const ms of samples) assert.equal(formatTimestamp(ms), new Date(ms).toISOString(), String(ms));
  assert.throws(() => formatTimestamp(Number.NaN), RangeError);
  assert.throws(() => formatTimestamp(8.64e15 + 1), RangeError);
});

test('a record whose timestamp has no zone is corrupt, not read as UTC', async (t) => {
  const { sessions, dir } = open(t);
  await sessions.create({ agentName: 'a', id: 'z' });
  const file = path.join(dir, 'z', 'state.json');
  const record = JSON.parse(readFileSync(file, 'utf8'));
  writeFileSync(file, JSON.stringify({ ...record, last_updated: '2026-11-22T12:00:00.000000' }));
  await rejects(sessions.get('z'), 'ECORRUPT');
  await rejects(sessions.update('z', { phase: 'planning' }), 'ECORRUPT');
});

test('create: initializing, not resume ready, stable key order, pretty JSON with a trailing newline', async (t) => {
  const { sessions, file } = open(t);
  const record = await sessions.create({ agentName: 'rev', purpose: 'p', metadata: { a: { b: 1 } } });
  assert.match(record.agent_id, /^agent-20261122-120000-[0-9a-f]{8}$/);
  const text = readFileSync(file(record.agent_id), 'utf8');
  assert.equal(text, `${JSON.stringify(JSON.parse(text), null, 2)}\n`);
  const onDisk = JSON.parse(text);
  assert.deepEqual(Object.keys(onDisk), RECORD_KEYS);
  assert.deepEqual(onDisk, {
    schema_version: 1,
    agent_id: record.agent_id,
    agent_name: 'rev',
    purpose: 'p',
    created_at: '2026-11-22T12:00:00.000Z',
    last_updated: '2026-11-22T12:00:00.000Z',
    phase: 'initializing',
    metadata: { a: { b: 1 } },
    resume_ready: false,
    history: [],
    error_count: 0,
    last_error: null,
    parent_session_id: null,
  });
  await rejects(sessions.create({ agentName: 'rev', id: record.agent_id }), 'EEXIST');
  assert.equal(readFileSync(file(record.agent_id), 'utf8'), text, 'EEXIST never overwrites');
  // A given parent must exist.
  await rejects(sessions.create({ agentName: 'kid', parent: 'nobody' }), 'EINVALID');
  const kid = await sessions.create({ agentName: 'kid', parent: record.agent_id, id: 'kid' });
  assert.equal(kid.parent_session_id, record.agent_id);
  await rejects(sessions.create({ agentName: '' }), 'EINVALID');
  await rejects(sessions.create({ agentName: 'a', metadata: [1] }), 'EINVALID');
});

test(
  'update: same phase adds no history, ' + 'resume_ready follows the phase, errors count, last_updated moves',
  async (t) => {
    const { sessions, clock } = open(t);
    await sessions.create({ agentName: 'a', id: 'u' });
    const steps = [
      ['investigating', true],
      ['investigating', true],
      ['planning', true],
      ['executing', false],
      ['approval', true],
      ['validating', false],
      ['initializing', false],
    ];
    let expectedHistory = 0;
    let previous = 'initializing';
    for (const [phase, ready] of steps) {
      clock.now += 1000;
      const record = await sessions.update('u', { phase });
      if (phase !== previous) expectedHistory++;
      assert.equal(record.history.length, expectedHistory, phase);
      assert.equal(record.resume_ready, ready, phase);
      assert.equal(record.last_updated, formatTimestamp(clock.now));
      const last = record.history.at(-1);
      if (phase !== previous)
        assert.deepEqual(last, { from_phase: previous, to_phase: phase, timestamp: formatTimestamp(clock.now) });
      previous = phase;
    }
    clock.now += 1000;
    const errored = await sessions.update('u', { error: 'boom' });
    assert.deepEqual(
      [errored.error_count, errored.last_error],
      [1, { message: 'boom', timestamp: formatTimestamp(clock.now) }],
    );
    assert.equal(errored.history.length, expectedHistory, 'an error is not a phase change');
    clock.now += 1000;
    const again = await sessions.update('u', { error: 'bang', metadata: { n: 1 } });
    assert.deepEqual([again.error_count, again.last_error.message, again.metadata], [2, 'bang', { n: 1 }]);
    clock.now += 1000;
    const touched = await sessions.update('u', {});
    assert.equal(touched.last_updated, formatTimestamp(clock.now), 'every successful update moves last_updated');
  },
);

test('update: an invalid request changes nothing at all', async (t) => {
  const { sessions, file, clock } = open(t);
  await sessions.create({ agentName: 'a', id: 'v', metadata: { keep: 1 } });
  await sessions.update('v', { phase: 'approval' });
  const before = readFileSync(file('v'), 'utf8');
  clock.now += MIN;
  const invalid = [
    { phase: 'bogus', error: 'half', metadata: { x: 1 } },
    { phase: 'completed', error: 'half' },
    { phase: 'failed', metadata: { x: 1 } },
    { phase: 'APPROVAL' },
    { metadata: [1], error: 'half' },
    { metadata: 'x' },
    { error: '' },
    { error: 42, phase: 'planning' },
  ];
  for (const request of invalid) {
    await rejects(sessions.update('v', request), 'EINVALID');
    assert.equal(readFileSync(file('v'), 'utf8'), before, JSON.stringify(request));
  }
  await rejects(sessions.update('missing', { phase: 'planning' }), 'ENOTFOUND');
});

test('update: a final session cannot be updated (EFINAL), and the file stays as it was', async (t) => {
  const { sessions, file } = open(t);
  await sessions.create({ agentName: 'a', id: 'f' });
  await sessions.finalize('f', 'failed');
  const before = readFileSync(file('f'), 'utf8');
  for (const request of [{ phase: 'planning' }, { error: 'x' }, { metadata: { a: 1 } }, {}]) {
    await rejects(sessions.update('f', request), 'EFINAL');
  }
  assert.equal(readFileSync(file('f'), 'utf8'), before);
  // The pure rule too: a record with finalized_at is final whatever its phase says.
  throwsCode(
    () => applyUpdate({ ...paused(), finalized_at: formatTimestamp(T0) }, { phase: 'planning' }, T0),
    'EFINAL',
  );
});

test('finalize: outcome, summary, finalized_at, duration_seconds and a history entry', async (t) => {
  const { sessions, clock, file } = open(t);
  await sessions.create({ agentName: 'a', id: 'fin' });
  clock.now += 1000;
  await sessions.update('fin', { phase: 'approval' });
  clock.now = T0 + 90_500;
  const done = await sessions.finalize('fin', 'completed', 'merged');
  const stamp = formatTimestamp(T0 + 90_500);
  assert.deepEqual(
    [
      done.phase,
      done.outcome,
      done.summary,
      done.finalized_at,
      done.last_updated,
      done.resume_ready,
      done.duration_seconds,
    ],
    ['completed', 'completed', 'merged', stamp, stamp, false, 90.5],
  );
  assert.deepEqual(done.history.at(-1), {
    from_phase: 'approval',
    to_phase: 'completed',
    timestamp: stamp,
    event: 'finalized',
  });
  assert.equal(done.history.length, 2);
  const onDisk = JSON.parse(readFileSync(file('fin'), 'utf8'));
  assert.deepEqual(Object.keys(onDisk).slice(-4), ['finalized_at', 'outcome', 'summary', 'duration_seconds']);
  assert.deepEqual(onDisk, JSON.parse(JSON.stringify(done)));
  const noSummary = await sessions.create({ agentName: 'a', id: 'fin2' });
  assert.equal(noSummary.phase, 'initializing');
  assert.equal((await sessions.finalize('fin2', 'abandoned')).summary, null);
});

test(
  'finalize: a bad outcome is EINVALID, never coerced; ' + 'the same outcome twice is a no-op; another is EFINAL',
  async (t) => {
    const { sessions, file, clock } = open(t);
    await sessions.create({ agentName: 'a', id: 'g' });
    const fresh = readFileSync(file('g'), 'utf8');
    for (const outcome of ['done', 'success', 'executing', 'Completed', '', undefined, null, 1]) {
      await rejects(sessions.finalize('g', outcome), 'EINVALID');
    }
    await rejects(sessions.finalize('g', 'completed', 42), 'EINVALID');
    assert.equal(readFileSync(file('g'), 'utf8'), fresh);
    await sessions.finalize('g', 'completed', 'first');
    const final = readFileSync(file('g'), 'utf8');
    clock.now += MIN;
    const again = await sessions.finalize('g', 'completed', 'second');
    assert.deepEqual([again.summary, again.finalized_at], ['first', formatTimestamp(T0)]);
    assert.equal(readFileSync(file('g'), 'utf8'), final, 'idempotent: nothing is written');
    await rejects(sessions.finalize('g', 'failed'), 'EFINAL');
    await rejects(sessions.finalize('g', 'abandoned'), 'EFINAL');
    assert.equal(readFileSync(file('g'), 'utf8'), final);
    await rejects(sessions.finalize('nobody', 'completed'), 'ENOTFOUND');
    // Pure rule: the same outcome on a final record reports no change.
    const { record } = applyFinalize(paused(), 'failed', null, T0);
    assert.equal(applyFinalize(record, 'failed', null, T0 + MIN).changed, false);
    throwsCode(() => applyFinalize(record, 'completed', null, T0), 'EFINAL');
  },
);

test('list: newest first by instant (not by string), with a limit', async (t) => {
  const { sessions, dir } = open(t);
  const write = (id, last) => {
    mkdirSync(path.join(dir, id), { recursive: true });
    const r = {
      agent_id: id,
      agent_name: 'a',
      created_at: '2026-01-01T00:00:00Z',
      last_updated: last,
      phase: 'planning',
    };
    writeFileSync(path.join(dir, id, 'state.json'), JSON.stringify(r));
  };
  write('ten-z', '2026-01-01T10:00:00.000Z');
  write('nine-thirty', '2026-01-01T11:30:00+02:00'); // 09:30Z: sorts after 10:00Z although its string is larger
  write('eleven', '2026-01-01T11:00:00.000001+00:00');
  const { sessions: listed, problems } = await sessions.list();
  assert.deepEqual(
    listed.map((s) => s.agent_id),
    ['eleven', 'ten-z', 'nine-thirty'],
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(
    (await sessions.list({ limit: 2 })).sessions.map((s) => s.agent_id),
    ['eleven', 'ten-z'],
  );
  for (const limit of [0, -1, 1.5, Number.NaN]) await rejects(sessions.list({ limit }), 'EINVALID');
  await rejects(sessions.list({ phase: 'bogus' }), 'EINVALID');
});

test('settings: options > environment > config file > default', async (t) => {
  const project = tempDir(t);
  mkdirSync(path.join(project, '.claude'));
  const settingsOf = (env = {}, settings) =>
    lib.Sessions.open({ cwd: project, env: { HOME: project, ...env }, settings }).settings;
  assert.deepEqual(
    [settingsOf().resumeWindowMinutes, settingsOf().errorBudget, settingsOf().clockSkewSeconds],
    [30, 3, 60],
  );

  writeFileSync(
    path.join(project, '.claude', 'agent-session.json'),
    JSON.stringify({ resume_window_minutes: 10, error_budget: 5 }),
  );
  assert.deepEqual([settingsOf().resumeWindowMinutes, settingsOf().errorBudget], [10, 5]);
  const env = { AGENT_SESSION_RESUME_WINDOW_MINUTES: '20' };
  assert.deepEqual([settingsOf(env).resumeWindowMinutes, settingsOf(env).errorBudget], [20, 5]);
  assert.equal(
    settingsOf({ AGENT_SESSION_RESUME_WINDOW_MINUTES: '' }).resumeWindowMinutes,
    10,
    'an empty variable is unset',
  );
  assert.equal(
    settingsOf({ AGENT_SESSION_RESUME_WINDOW_MINUTES: ' 12.5 ' }).resumeWindowMinutes,
    12.5,
    'decimal text, blanks around it',
  );
  assert.equal(settingsOf({ AGENT_SESSION_RESUME_WINDOW_MINUTES: '1e1' }).resumeWindowMinutes, 10);
  const both = settingsOf({ ...env, AGENT_SESSION_ERROR_BUDGET: '7' }, { resumeWindowMinutes: 40 });
  assert.deepEqual([both.resumeWindowMinutes, both.errorBudget], [40, 7]);

  // The settings drive the decisions: a 10-minute window from the file expires at 10:01.
  const sessions = lib.Sessions.open({ cwd: project, env: { HOME: project }, now: () => T0 });
  await sessions.create({ agentName: 'a', id: 'w' });
  await sessions.update('w', { phase: 'approval' });
  assert.equal((await sessions.shouldResume('w', T0 + 10 * MIN)).reason, 'resumable');
  assert.equal((await sessions.shouldResume('w', T0 + 10 * MIN + 1000)).reason, 'expired');
  for (let i = 0; i < 4; i++) await sessions.update('w', { error: `e${i}` });
  assert.equal((await sessions.shouldResume('w', T0)).reason, 'resumable', '4 errors are within a budget of 5');
  await sessions.update('w', { error: 'e4' });
  assert.equal((await sessions.shouldResume('w', T0)).reason, 'too_many_errors');
});

test('settings: a bad value is EINVALID and names where it came from', (t) => {
  const project = tempDir(t);
  mkdirSync(path.join(project, '.claude'));
  const configFile = path.join(project, '.claude', 'agent-session.json');
  const fails = (env, settings, names) => {
    assert.throws(
      () => lib.Sessions.open({ cwd: project, env: { HOME: project, ...env }, settings }),
      (err) => {
        assert.equal(err.code, 'EINVALID');
        assert.ok(err.message.includes(names), `${err.message} should name ${names}`);
        return true;
      },
    );
  };
  fails({ AGENT_SESSION_RESUME_WINDOW_MINUTES: 'soon' }, undefined, 'AGENT_SESSION_RESUME_WINDOW_MINUTES');
  fails({ AGENT_SESSION_ERROR_BUDGET: '0' }, undefined, 'AGENT_SESSION_ERROR_BUDGET');
  fails({ AGENT_SESSION_CLOCK_SKEW_SECONDS: '-1' }, undefined, 'AGENT_SESSION_CLOCK_SKEW_SECONDS');
  // Number() would read these as 0 and 16: a blank or hexadecimal variable is a mistake, not a value.
  fails({ AGENT_SESSION_RESUME_WINDOW_MINUTES: ' ' }, undefined, 'AGENT_SESSION_RESUME_WINDOW_MINUTES');
  fails({ AGENT_SESSION_ERROR_BUDGET: '0x10' }, undefined, 'AGENT_SESSION_ERROR_BUDGET');
  fails({ AGENT_SESSION_LOCK_TIMEOUT_MS: '1e3x' }, undefined, 'AGENT_SESSION_LOCK_TIMEOUT_MS');
  fails({}, { errorBudget: 'three' }, 'errorBudget');
  fails({}, { resumeWindowMinutes: -5 }, 'resumeWindowMinutes');
  writeFileSync(configFile, JSON.stringify({ error_budget: 'lots' }));
  fails({}, undefined, 'error_budget');
  writeFileSync(configFile, '{ not json');
  fails({}, undefined, configFile);
  writeFileSync(configFile, '[1]');
  fails({}, undefined, configFile);
  // A good option does not hide a bad variable for another setting.
  writeFileSync(configFile, '{}');
  fails({ AGENT_SESSION_ERROR_BUDGET: 'x' }, { resumeWindowMinutes: 5 }, 'AGENT_SESSION_ERROR_BUDGET');
});

test("cleanup's reasons grouped for its summary: the figures go, the words around them still read", async () => {
  const { judgeSession, reasonKind } = await load('policy/cleanup-plan.js');
  const H = 60 * MIN;
  const rules = { cutoffMs: 0, runningMs: 30 * MIN, resumeWindowMs: 30 * MIN, stuckMs: 48 * H, clockSkewMs: 60_000 };
  const kindOf = (phase, ageMs, extra = {}) =>
    reasonKind(judgeSession({ phase, last_updated: formatTimestamp(T0 - ageMs), ...extra }, T0, rules).reason);
  assert.equal(kindOf('completed', 70 * H), 'completed, last activity over the cutoff');
  assert.equal(kindOf('initializing', 3000), 'running (initializing, updated within the running window)');
  assert.equal(kindOf('executing', 30 * H), 'running (executing, under the stuck limit)');
  assert.equal(kindOf('executing', 50 * H), 'stuck in executing past the stuck limit');
  assert.equal(kindOf('approval', 30 * H), 'paused in approval; its resume window has passed');
  assert.equal(kindOf('completed', -3 * H), 'last_updated is in the future (a wrong clock?); not judged');
  assert.equal(
    reasonKind(`kept for its descendant agent-x: running (executing, updated 3 s ago)`),
    'kept for a descendant: running (executing, updated within the running window)',
  );
  // Two sessions of one kind at different ages are counted together.
  assert.equal(kindOf('executing', 31 * H), kindOf('executing', 47 * H));
});
