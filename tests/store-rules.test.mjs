// Issue 2, sections 3 and 4: the pure rules (resume decision, merge patch, ids, timestamps, update,
// finalize, record parsing, settings) through the built modules, with the clock passed in.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DIST } from './helpers/run.mjs';

const load = (rel) => import(pathToFileURL(path.join(DIST, 'tools', rel)).href);
const { decideResume } = await load('policy/resume.js');
const { newRecord, applyUpdate, applyFinalize } = await load('policy/lifecycle.js');
const { isValidId, assertValidId, generateId } = await load('ids.js');
const { mergePatch } = await load('merge-patch.js');
const { parseTimestamp, formatTimestamp } = await load('time.js');
const { parseRecord, serializeRecord, SCHEMA_VERSION } = await load('record.js');
const { resolveSettings } = await load('config.js');

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0, 0);
const SEC = 1000;
const MIN = 60 * SEC;

/** The resume rules the default settings give (Sessions.rules does the same conversion). */
function defaultRules() {
  const s = resolveSettings({});
  return { resumeWindowMs: s.resumeWindowMinutes * MIN, errorBudget: s.errorBudget, clockSkewMs: s.clockSkewSeconds * SEC };
}

/** A session created 5 minutes before `at` and paused in approval at `at`. */
function paused(at = T0, extra = {}) {
  const created = newRecord({ id: 's1', agentName: 'agent' }, at - 5 * MIN);
  return { ...applyUpdate(created, { phase: 'approval' }, at), ...extra };
}

function throwsCode(fn, code) {
  assert.throws(fn, (err) => {
    assert.equal(err.name, 'SessionError');
    assert.equal(err.code, code);
    return true;
  });
}

test('resume rules: defaults are a 30 minute window, a budget of 3 errors and 60 s of clock skew', () => {
  assert.deepEqual(defaultRules(), { resumeWindowMs: 30 * MIN, errorBudget: 3, clockSkewMs: 60 * SEC });
});

test('resume window: 29:59 and exactly 30:00 resume, 30:01 is expired', () => {
  const rules = defaultRules();
  const record = paused();
  const at = (ms) => decideResume(record, T0 + ms, rules);
  assert.deepEqual([at(29 * MIN + 59 * SEC).resume, at(29 * MIN + 59 * SEC).reason], [true, 'resumable']);
  assert.deepEqual([at(30 * MIN).resume, at(30 * MIN).reason], [true, 'resumable']);
  assert.deepEqual([at(30 * MIN + SEC).resume, at(30 * MIN + SEC).reason], [false, 'expired']);
  assert.equal(at(30 * MIN + 1).reason, 'expired');
});

test('error budget: 2 errors resume, 3 are too many', () => {
  const rules = defaultRules();
  let record = paused();
  record = applyUpdate(record, { error: 'one' }, T0);
  record = applyUpdate(record, { error: 'two' }, T0);
  assert.equal(record.error_count, 2);
  const ok = decideResume(record, T0 + MIN, rules);
  assert.deepEqual([ok.resume, ok.reason], [true, 'resumable']);
  record = applyUpdate(record, { error: 'three' }, T0);
  const decision = decideResume(record, T0 + MIN, rules);
  assert.deepEqual([decision.resume, decision.reason], [false, 'too_many_errors']);
});

test('a last_updated in the future: within the clock-skew allowance resumes, beyond it is expired', () => {
  const rules = defaultRules();
  const record = paused(T0);
  assert.equal(decideResume(record, T0 - 59 * SEC, rules).reason, 'resumable');
  assert.equal(decideResume(record, T0 - 60 * SEC, rules).reason, 'resumable');
  const far = decideResume(record, T0 - 61 * SEC, rules);
  assert.deepEqual([far.resume, far.reason], [false, 'expired']);
  // A year ahead is not "fresh forever".
  assert.equal(decideResume(paused(T0 + 365 * 24 * 60 * MIN), T0, rules).reason, 'expired');
});

test('resume decision: every reason value', () => {
  const rules = defaultRules();
  const now = T0 + MIN;
  const reason = (record) => {
    const d = decideResume(record, now, rules);
    assert.equal(d.resume, d.reason === 'resumable');
    assert.equal(typeof d.detail, 'string');
    return d.reason;
  };
  const fresh = newRecord({ id: 's1', agentName: 'agent' }, T0);
  assert.equal(reason(undefined), 'not_found');
  assert.equal(reason(applyFinalize(paused(), 'completed', null, T0).record), 'finalized');
  assert.equal(reason(applyUpdate(fresh, { phase: 'executing' }, T0)), 'phase_not_resumable');
  assert.equal(reason(fresh), 'phase_not_resumable');
  assert.equal(reason(paused(T0, { resume_ready: false })), 'not_resume_ready');
  assert.equal(reason(paused(T0 - 31 * MIN)), 'expired');
  assert.equal(reason(paused(T0, { error_count: 3 })), 'too_many_errors');
  assert.equal(reason(paused()), 'resumable');
  for (const phase of ['investigating', 'planning']) assert.equal(reason(applyUpdate(fresh, { phase }, T0)), 'resumable');
  // finalized_at alone (a record finalized by another writer) also counts as final.
  assert.equal(reason(paused(T0, { finalized_at: formatTimestamp(T0) })), 'finalized');
});

test('merge patch: the RFC 7386 appendix examples', () => {
  const cases = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [['a', 'b'], ['c', 'd'], ['c', 'd']],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, expected] of cases) {
    assert.deepEqual(mergePatch(target, patch), expected, `${JSON.stringify(target)} + ${JSON.stringify(patch)}`);
  }
});

test('merge patch: nested objects merge, null deletes only its key, arrays replace, the target is not mutated', () => {
  const target = { keep: 1, nested: { a: 1, b: { deep: true }, list: [1, 2, 3] }, gone: 'x' };
  const before = structuredClone(target);
  const result = mergePatch(target, { nested: { b: { more: 2 }, list: [9] }, gone: null, added: { x: 1 } });
  assert.deepEqual(result, { keep: 1, nested: { a: 1, b: { deep: true, more: 2 }, list: [9] }, added: { x: 1 } });
  assert.deepEqual(target, before);
});

test('merge patch: a "__proto__" key is stored as data and Object.prototype is untouched', () => {
  const patch = JSON.parse('{"__proto__": {"polluted": true}, "nested": {"__proto__": {"polluted": 1}}}');
  const result = mergePatch({}, patch);
  assert.equal({}.polluted, undefined);
  assert.equal(Object.prototype.polluted, undefined);
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
  assert.ok(Object.hasOwn(result, '__proto__'));
  assert.deepEqual(Object.keys(result), ['__proto__', 'nested']);
  assert.equal(result.polluted, undefined);
  assert.ok(Object.hasOwn(result.nested, '__proto__'));
  assert.equal(JSON.stringify(result), '{"__proto__":{"polluted":true},"nested":{"__proto__":{"polluted":1}}}');
});

test('ids: 1-128 characters of [A-Za-z0-9._-], not starting with "."', () => {
  for (const id of ['a', 'agent-20261122-120000-0123abcd', 'A.b_c-9', '_x', '-x', 'x.', 'a'.repeat(128)]) {
    assert.equal(isValidId(id), true, id);
    assert.doesNotThrow(() => assertValidId(id));
  }
  for (const id of ['', 'a'.repeat(129), '.hidden', '..', '.', '../x', 'a/b', 'a\\b', 'a b', 'é', 'a\0b', 'x\n', 42, null, undefined, {}, ['a']]) {
    assert.equal(isValidId(id), false, JSON.stringify(id) ?? String(id));
    throwsCode(() => assertValidId(id), 'EINVALID');
  }
});

test('ids: generated as agent-YYYYMMDD-HHMMSS-<8 hex> in UTC', () => {
  const id = generateId(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)));
  assert.match(id, /^agent-20260102-030405-[0-9a-f]{8}$/);
  assert.ok(isValidId(id));
  // Close to midnight UTC the date is the UTC one, whatever the local zone.
  assert.match(generateId(new Date(Date.UTC(2026, 11, 31, 23, 59, 59))), /^agent-20261231-235959-[0-9a-f]{8}$/);
  assert.equal(generateId(new Date(T0), () => 'deadbeef'), 'agent-20261122-120000-deadbeef');
  const many = new Set(Array.from({ length: 50 }, () => generateId(new Date(T0))));
  assert.ok(many.size > 45, 'the suffix is random');
});

test('timestamps: Z, +00:00, microseconds and offsets are instants; no zone is undefined', () => {
  assert.equal(parseTimestamp('2026-11-22T12:00:00.000Z'), T0);
  assert.equal(parseTimestamp('2026-11-22T12:00:00Z'), T0);
  assert.equal(parseTimestamp('2026-11-22T12:00:00+00:00'), T0);
  assert.equal(parseTimestamp('2026-11-22T12:00:00.123456+00:00'), T0 + 123);
  assert.equal(parseTimestamp('2026-11-22T13:00:00.5+01:00'), T0 + 500);
  assert.equal(parseTimestamp('2026-11-22T07:00:00-05:00'), T0);
  for (const bad of ['2026-11-22T12:00:00', '2026-11-22T12:00:00.123456', '2026-11-22', 'yesterday', '', 12, null, undefined]) {
    assert.equal(parseTimestamp(bad), undefined, String(bad));
  }
  assert.equal(formatTimestamp(T0 + 7), '2026-11-22T12:00:00.007Z');
});

test('update: same phase adds no history; resume_ready follows the phase; errors count; last_updated moves', () => {
  let record = newRecord({ id: 's1', agentName: 'agent' }, T0);
  assert.deepEqual([record.phase, record.resume_ready, record.history], ['initializing', false, []]);
  record = applyUpdate(record, { phase: 'investigating' }, T0 + 1000);
  assert.deepEqual(record.history, [{ from_phase: 'initializing', to_phase: 'investigating', timestamp: formatTimestamp(T0 + 1000) }]);
  assert.equal(record.resume_ready, true);
  record = applyUpdate(record, { phase: 'investigating' }, T0 + 2000);
  assert.equal(record.history.length, 1);
  assert.equal(record.last_updated, formatTimestamp(T0 + 2000));
  record = applyUpdate(record, { phase: 'executing' }, T0 + 3000);
  assert.equal(record.resume_ready, false);
  record = applyUpdate(record, { phase: 'approval' }, T0 + 4000);
  assert.equal(record.resume_ready, true);
  assert.deepEqual(record.history.map((h) => h.to_phase), ['investigating', 'executing', 'approval']);
  record = applyUpdate(record, { error: 'boom' }, T0 + 5000);
  assert.equal(record.error_count, 1);
  assert.deepEqual(record.last_error, { message: 'boom', timestamp: formatTimestamp(T0 + 5000) });
  assert.equal(record.last_updated, formatTimestamp(T0 + 5000));
  assert.equal(record.phase, 'approval');
  record = applyUpdate(record, { metadata: { a: { b: 1 } } }, T0 + 6000);
  record = applyUpdate(record, { metadata: { a: { c: 2 } } }, T0 + 7000);
  assert.deepEqual(record.metadata, { a: { b: 1, c: 2 } });
});

test('update: an invalid request (bad phase with an error) throws EINVALID and changes nothing', () => {
  const record = paused();
  const before = structuredClone(record);
  throwsCode(() => applyUpdate(record, { phase: 'bogus', error: 'boom' }, T0 + 1000), 'EINVALID');
  throwsCode(() => applyUpdate(record, { metadata: [1], error: 'boom' }, T0 + 1000), 'EINVALID');
  throwsCode(() => applyUpdate(record, { error: '' }, T0 + 1000), 'EINVALID');
  assert.deepEqual(record, before);
});

test('update: a final session is EFINAL; moving to a final phase through update is EINVALID', () => {
  const final = applyFinalize(paused(), 'failed', null, T0).record;
  throwsCode(() => applyUpdate(final, { metadata: { a: 1 } }, T0 + 1000), 'EFINAL');
  throwsCode(() => applyUpdate(final, { phase: 'planning' }, T0 + 1000), 'EFINAL');
  for (const phase of ['completed', 'failed', 'abandoned']) {
    throwsCode(() => applyUpdate(paused(), { phase }, T0 + 1000), 'EINVALID');
  }
});

test('finalize: outcome, summary, finalized_at, duration from created_at and a history entry', () => {
  const created = newRecord({ id: 's1', agentName: 'agent' }, T0);
  const record = applyUpdate(created, { phase: 'approval' }, T0 + 60_000);
  const { record: done, changed } = applyFinalize(record, 'completed', 'all good', T0 + 90_500);
  assert.equal(changed, true);
  assert.equal(done.phase, 'completed');
  assert.equal(done.outcome, 'completed');
  assert.equal(done.summary, 'all good');
  assert.equal(done.resume_ready, false);
  assert.equal(done.finalized_at, formatTimestamp(T0 + 90_500));
  assert.equal(done.last_updated, formatTimestamp(T0 + 90_500));
  assert.equal(done.duration_seconds, 90.5);
  assert.deepEqual(done.history.at(-1), { from_phase: 'approval', to_phase: 'completed', timestamp: formatTimestamp(T0 + 90_500), event: 'finalized' });
  assert.equal(done.history.length, 2);
});

test('finalize: bad outcome EINVALID; same outcome is no change; a different one is EFINAL', () => {
  const record = paused();
  for (const outcome of ['done', 'Completed', 'executing', '', undefined, null]) {
    throwsCode(() => applyFinalize(record, outcome, null, T0), 'EINVALID');
  }
  const { record: done } = applyFinalize(record, 'abandoned', null, T0 + 1000);
  const again = applyFinalize(done, 'abandoned', 'later', T0 + 5000);
  assert.equal(again.changed, false);
  assert.equal(again.record, done);
  throwsCode(() => applyFinalize(done, 'completed', null, T0 + 5000), 'EFINAL');
});

test('parseRecord: a record with no schema_version is version 0 with defaults for missing keys', () => {
  const text = JSON.stringify({
    agent_id: 'old', agent_name: 'legacy', created_at: '2026-11-22T10:00:00.123456+00:00',
    last_updated: '2026-11-22T10:05:00+00:00', phase: 'planning',
  });
  const record = parseRecord(text, 'old');
  assert.equal(record.schema_version, 0);
  assert.deepEqual(
    [record.purpose, record.metadata, record.resume_ready, record.history, record.error_count, record.last_error, record.parent_session_id],
    [null, {}, false, [], 0, null, null],
  );
  // Its next write is version 1.
  assert.equal(JSON.parse(serializeRecord(record)).schema_version, SCHEMA_VERSION);
  assert.equal(SCHEMA_VERSION, 1);
});

test('parseRecord: a newer schema_version is EVERSION; bad fields are ECORRUPT', () => {
  const good = JSON.parse(serializeRecord(newRecord({ id: 's1', agentName: 'agent' }, T0)));
  assert.equal(parseRecord(JSON.stringify(good), 's1').agent_id, 's1');
  throwsCode(() => parseRecord(JSON.stringify({ ...good, schema_version: 2 }), 's1'), 'EVERSION');
  throwsCode(() => parseRecord(JSON.stringify({ ...good, schema_version: 99 }), 's1'), 'EVERSION');
  const corrupt = [
    '{"agent_id": "s1",', '[]', 'null',
    JSON.stringify({ ...good, schema_version: 'one' }),
    JSON.stringify({ ...good, agent_id: 'other' }),
    JSON.stringify({ ...good, agent_name: 3 }),
    JSON.stringify({ ...good, created_at: '2026-11-22T12:00:00' }),
    JSON.stringify({ ...good, last_updated: 'soon' }),
    JSON.stringify({ ...good, phase: 'sleeping' }),
    JSON.stringify({ ...good, metadata: [] }),
    JSON.stringify({ ...good, resume_ready: 'yes' }),
    JSON.stringify({ ...good, history: [{ to_phase: 'nowhere' }] }),
    JSON.stringify({ ...good, error_count: -1 }),
    JSON.stringify({ ...good, last_error: 'boom' }),
    JSON.stringify({ ...good, parent_session_id: '../x' }),
    JSON.stringify({ ...good, finalized_at: '2026-11-22 12:00' }),
    JSON.stringify({ ...good, outcome: 'great' }),
  ];
  for (const text of corrupt) throwsCode(() => parseRecord(text, 's1'), 'ECORRUPT');
});

test('serializeRecord: stable key order whatever the input order, pretty, trailing newline, schema_version 1', () => {
  const record = applyFinalize(applyUpdate(newRecord({ id: 's1', agentName: 'agent', parent: 'p1' }, T0), { error: 'x' }, T0 + 1), 'completed', 's', T0 + 2).record;
  const shuffled = Object.fromEntries(Object.entries({ ...record, zeta: 1, claude: { session_id: 'c' }, alpha: 2 }).reverse());
  const text = serializeRecord({ ...shuffled, schema_version: 0 });
  assert.ok(text.endsWith('}\n'));
  assert.ok(text.includes('\n  "agent_id": "s1",\n'), 'two-space indentation');
  assert.deepEqual(Object.keys(JSON.parse(text)), [
    'schema_version', 'agent_id', 'agent_name', 'purpose', 'created_at', 'last_updated', 'phase', 'metadata',
    'resume_ready', 'history', 'error_count', 'last_error', 'parent_session_id', 'finalized_at', 'outcome',
    'summary', 'duration_seconds', 'claude', 'alpha', 'zeta',
  ]);
  assert.equal(JSON.parse(text).schema_version, 1);
  assert.equal(serializeRecord(parseRecord(text, 's1')), text, 'a round trip is byte-identical');
});

test('settings: options > environment > config file > default', () => {
  const env = { AGENT_SESSION_RESUME_WINDOW_MINUTES: '20', AGENT_SESSION_ERROR_BUDGET: '7' };
  const file = { resume_window_minutes: 10, error_budget: 5, clock_skew_seconds: 5 };
  const s = resolveSettings({ options: { resumeWindowMinutes: 45 }, env, file });
  assert.equal(s.resumeWindowMinutes, 45, 'option wins');
  assert.equal(s.errorBudget, 7, 'environment beats the file');
  assert.equal(s.clockSkewSeconds, 5, 'file beats the default');
  assert.equal(s.cleanupHours, 24, 'default');
  assert.equal(resolveSettings({ env, file }).resumeWindowMinutes, 20);
  assert.equal(resolveSettings({ file }).resumeWindowMinutes, 10);
  // An empty environment variable is unset, not zero.
  assert.equal(resolveSettings({ env: { AGENT_SESSION_RESUME_WINDOW_MINUTES: '' }, file }).resumeWindowMinutes, 10);
  assert.deepEqual(
    [resolveSettings({}).resumeWindowMinutes, resolveSettings({}).errorBudget, resolveSettings({}).clockSkewSeconds],
    [30, 3, 60],
  );
});

test('settings: a bad value is EINVALID and names where it came from', () => {
  const named = (sources, source) =>
    assert.throws(
      () => resolveSettings(sources),
      (err) => err.code === 'EINVALID' && err.message.includes(source),
    );
  named({ options: { errorBudget: 0 } }, 'errorBudget');
  named({ env: { AGENT_SESSION_ERROR_BUDGET: 'many' } }, 'AGENT_SESSION_ERROR_BUDGET');
  named({ file: { resume_window_minutes: '30' }, fileName: '/p/.claude/agent-session.json' }, '/p/.claude/agent-session.json');
  named({ file: { resume_window_minutes: -1 }, fileName: 'cfg.json' }, 'resume_window_minutes');
  named({ file: [1], fileName: 'cfg.json' }, 'cfg.json');
  // A bad file value does not matter when the environment sets the same setting.
  assert.equal(resolveSettings({ env: { AGENT_SESSION_ERROR_BUDGET: '4' }, file: { error_budget: 'x' } }).errorBudget, 4);
});
