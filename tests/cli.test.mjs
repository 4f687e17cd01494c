// The built `agent-session` CLI, spawned with a temp store: every command, its --json
// document, its exit code, its one-line error on stderr, and the files on disk.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { holdLock } from './helpers/locks.mjs';
import { CLI, CLI_COMMAND, cleanEnv, cli, loadLibrary, pool, runCli, runNode, tempDir } from './helpers/run.mjs';

const MIN = 60_000;
const { Sessions } = await loadLibrary();

/** A temp root (HOME, cwd) holding the store `<root>/store`. */
function setup(t) {
  const root = tempDir(t);
  return { root, store: path.join(root, 'store') };
}

/** The run succeeded with exactly one JSON document on stdout and nothing on stderr. */
function ok(result, code = 0) {
  assert.equal(result.code, code, result.stderr);
  assert.equal(result.stderr, '');
  assert.ok(result.stdout.endsWith('}\n'), 'one JSON document ending in a newline');
  return JSON.parse(result.stdout);
}

/** The run failed with `code`: nothing on stdout, one `agent-session:` line on stderr, no stack trace. */
function failed(result, code) {
  assert.equal(result.code, code, `exit ${result.code}, expected ${code}: ${result.stderr}`);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^agent-session: [^\n]+\n$/);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
}

/**
 * Sessions written through the library with backdated clocks:
 * [{id, agent, purpose, phase, outcome, minutesAgo, parent, errors}].
 */
async function seed(store, spec, now = Date.now()) {
  for (const s of spec) {
    const at = now - (s.minutesAgo ?? 0) * MIN;
    const sessions = Sessions.open({ dir: store, cwd: path.dirname(store), env: {}, now: () => at });
    await sessions.create({ agentName: s.agent ?? 'worker', id: s.id, purpose: s.purpose, parent: s.parent ?? null });
    if (s.phase) await sessions.update(s.id, { phase: s.phase });
    for (let i = 0; i < (s.errors ?? 0); i++) await sessions.update(s.id, { error: `e${i}` });
    if (s.outcome) await sessions.finalize(s.id, s.outcome, 'done');
  }
}

const stateFile = (store, id) => path.join(store, id, 'state.json');
const readState = (store, id) => readFileSync(stateFile(store, id), 'utf8');

/** Every path under `dir` (relative), directories marked with a trailing slash. */
function tree(dir) {
  const out = [];
  const walk = (rel) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const child = path.join(rel, name);
      const isDir = lstatSync(path.join(dir, child)).isDirectory();
      out.push(isDir ? `${child}/` : child);
      if (isDir) walk(child);
    }
  };
  if (existsSync(dir)) walk('');
  return out;
}

function writeRaw(store, id, content) {
  mkdirSync(path.join(store, id), { recursive: true });
  writeFileSync(stateFile(store, id), typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
}

test('create: --json prints the new record, which is the file on disk; options fill its fields', async (t) => {
  const { store } = setup(t);
  const first = ok(await cli(store, ['create', '--agent', 'reviewer', '--json']));
  assert.match(first.agent_id, /^agent-\d{8}-\d{6}-[0-9a-f]{8}$/);
  assert.deepEqual(JSON.parse(readState(store, first.agent_id)), first);
  assert.deepEqual(
    [first.phase, first.resume_ready, first.schema_version, first.purpose, first.metadata],
    ['initializing', false, 1, null, {}],
  );

  const args = [
    'create',
    '--agent',
    'fixer',
    '--purpose',
    'Fix it',
    '--metadata',
    '{"pr":7,"tags":["a"]}',
    '--parent',
    first.agent_id,
    '--id',
    'kid-1',
    '--json',
  ];
  const kid = ok(await cli(store, args));
  assert.deepEqual(
    [kid.agent_id, kid.agent_name, kid.purpose, kid.metadata, kid.parent_session_id],
    ['kid-1', 'fixer', 'Fix it', { pr: 7, tags: ['a'] }, first.agent_id],
  );
  assert.deepEqual(JSON.parse(readState(store, 'kid-1')), kid);

  const human = await cli(store, ['create', '--agent', 'plain', '--id', 'plain-1']);
  assert.equal(human.code, 0, human.stderr);
  assert.equal(human.stdout.split('\n').length, 2, 'one sentence');
  assert.match(human.stdout, /plain-1/);
  assert.throws(() => JSON.parse(human.stdout));
});

test('create: usage and validation errors exit 2, an existing id exits 3, and nothing is written', async (t) => {
  const { store } = setup(t);
  await seed(store, [{ id: 'taken' }]);
  const before = tree(store);
  const taken = readState(store, 'taken');
  const cases = [
    [['create', '--json'], 2], // --agent missing
    [['create', '--agent', 'a', '--bogus', '--json'], 2],
    [['create', '--agent', 'a', '--metadata', '{"a":', '--json'], 2],
    [['create', '--agent', 'a', '--metadata', '[1,2]', '--json'], 2],
    [['create', '--agent', 'a', '--metadata', 'null', '--json'], 2],
    [['create', '--agent', 'a', '--id', '../escape', '--json'], 2],
    [['create', '--agent', 'a', '--id', 'x'.repeat(129), '--json'], 2],
    [['create', '--agent', 'a', '--parent', 'a/b', '--json'], 2],
    [['create', '--agent', '', '--json'], 2],
    [['create', '--agent', 'a', '--id', 'taken', '--json'], 3],
    [['create', '--agent', 'a', '--id', 'taken'], 3],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(store, args)));
  results.forEach((result, i) => failed(result, cases[i][1]));
  assert.equal(readState(store, 'taken'), taken);
  assert.deepEqual(
    tree(store).filter((p) => !p.startsWith('.')),
    before.filter((p) => !p.startsWith('.')),
  );
});

test('create: a parent that does not exist is refused (exit 2) and no session appears', async (t) => {
  const { store } = setup(t);
  failed(await cli(store, ['create', '--agent', 'a', '--id', 'orphan', '--parent', 'ghost', '--json']), 2);
  assert.ok(!existsSync(path.join(store, 'orphan')));
  assert.ok(!existsSync(path.join(store, '.index')), 'a refused create leaves no index markers');
});

test('update: phase, metadata merge patch and errors; --json prints the new state', async (t) => {
  const { store } = setup(t);
  await seed(store, [{ id: 'u' }]);
  ok(await cli(store, ['update', 'u', '--metadata', '{"a":{"x":1,"y":2},"drop":true}', '--json']));
  const record = ok(
    await cli(store, [
      'update',
      'u',
      '--phase',
      'approval',
      '--metadata',
      '{"a":{"y":null,"z":3},"drop":null}',
      '--error',
      'flaky',
      '--json',
    ]),
  );
  assert.deepEqual(
    [record.phase, record.resume_ready, record.metadata, record.error_count, record.last_error.message],
    ['approval', true, { a: { x: 1, z: 3 } }, 1, 'flaky'],
  );
  assert.deepEqual(
    record.history.map((h) => [h.from_phase, h.to_phase]),
    [['initializing', 'approval']],
  );
  assert.deepEqual(JSON.parse(readState(store, 'u')), record);
  const same = ok(await cli(store, ['update', 'u', '--phase', 'approval', '--json']));
  assert.equal(same.history.length, 1, 'the same phase adds no history');
  const human = await cli(store, ['update', 'u', '--phase', 'executing']);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /^[^\n]*executing[^\n]*\n$/);
  // Paused again: resume ready while the error budget (3) lasts, then it says why not.
  const paused = await cli(store, ['update', 'u', '--phase', 'approval', '--error', 'second']);
  assert.equal(paused.stdout, 'Updated session u: phase approval, resume ready, 2 error(s).\n');
  const spent = await cli(store, ['update', 'u', '--error', 'third']);
  assert.equal(
    spent.stdout,
    'Updated session u: phase approval, 3 error(s); not resumable: 3 errors reach the budget of 3.\n',
  );
});

test('update: every error path has its exit code and leaves the file untouched', async (t) => {
  const { store } = setup(t);
  await seed(store, [
    { id: 'live', phase: 'planning' },
    { id: 'done', outcome: 'completed' },
  ]);
  const live = readState(store, 'live');
  const done = readState(store, 'done');
  const cases = [
    [['update', 'nobody', '--phase', 'planning', '--json'], 1],
    [['update', 'live', '--phase', 'bogus', '--error', 'half', '--json'], 2],
    [['update', 'live', '--phase', 'completed', '--json'], 2],
    [['update', 'live', '--metadata', 'not json', '--error', 'half', '--json'], 2],
    [['update', 'live', '--metadata', '"text"', '--json'], 2],
    [['update', '../live', '--phase', 'planning', '--json'], 2],
    [['update', '--phase', 'planning', '--json'], 2],
    [['update', 'live', '--phase', 'planning', '--unknown', '--json'], 2],
    [['update', 'done', '--phase', 'planning', '--json'], 3],
    [['update', 'done', '--error', 'late', '--json'], 3],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(store, args)));
  results.forEach((result, i) => failed(result, cases[i][1]));
  assert.equal(readState(store, 'live'), live);
  assert.equal(readState(store, 'done'), done);
});

test('should-resume: exit 0 with the decision when it will resume, 1 with the reason when not', async (t) => {
  const { store } = setup(t);
  await seed(store, [
    { id: 'paused', phase: 'approval', minutesAgo: 5 },
    { id: 'stale', phase: 'approval', minutesAgo: 31 },
    { id: 'busy', phase: 'executing' },
    { id: 'done', phase: 'approval', outcome: 'failed' },
    { id: 'erring', phase: 'planning', errors: 3 },
  ]);
  writeRaw(store, 'broken', '{"agent_id": "broken"');
  const ids = ['paused', 'stale', 'busy', 'done', 'erring', 'broken', 'nobody'];
  const results = await Promise.all(ids.map((id) => cli(store, ['should-resume', id, '--json'])));
  const yes = ok(results[0]);
  assert.deepEqual([yes.resume, yes.reason, yes.session.agent_id], [true, 'resumable', 'paused']);
  const reasons = ['expired', 'phase_not_resumable', 'finalized', 'too_many_errors', 'corrupt', 'not_found'];
  results.slice(1).forEach((result, i) => {
    const decision = ok(result, 1);
    assert.deepEqual([decision.resume, decision.reason], [false, reasons[i]], ids[i + 1]);
    assert.equal(typeof decision.detail, 'string');
  });
  assert.equal(JSON.parse(results[6].stdout).session, null);

  const [humanYes, humanNo, badId] = await Promise.all([
    cli(store, ['should-resume', 'paused']),
    cli(store, ['should-resume', 'busy']),
    cli(store, ['should-resume', 'a/b', '--json']),
  ]);
  assert.deepEqual([humanYes.code, humanNo.code], [0, 1]);
  assert.match(humanYes.stdout, /^[^\n]+\n$/);
  assert.match(humanNo.stdout, /phase_not_resumable/);
  failed(badId, 2);
});

test('should-resume: the resume window and error budget come from the environment', async (t) => {
  const { store } = setup(t);
  await seed(store, [
    { id: 'p', phase: 'approval', minutesAgo: 5 },
    { id: 'e', phase: 'planning', errors: 3 },
  ]);
  const [narrow, wide, budget] = await Promise.all([
    cli(store, ['should-resume', 'p', '--json'], { env: { AGENT_SESSION_RESUME_WINDOW_MINUTES: '4' } }),
    cli(store, ['should-resume', 'p', '--json'], { env: { AGENT_SESSION_RESUME_WINDOW_MINUTES: '6' } }),
    cli(store, ['should-resume', 'e', '--json'], { env: { AGENT_SESSION_ERROR_BUDGET: '4' } }),
  ]);
  assert.equal(ok(narrow, 1).reason, 'expired');
  assert.equal(ok(wide, 0).reason, 'resumable');
  assert.equal(ok(budget, 0).reason, 'resumable');
  failed(await cli(store, ['should-resume', 'p', '--json'], { env: { AGENT_SESSION_ERROR_BUDGET: 'many' } }), 2);
});

test('get and show: the record, a readable summary with relative times, and their errors', async (t) => {
  const { store } = setup(t);
  await seed(store, [{ id: 'g', agent: 'reviewer', purpose: 'Review', phase: 'approval', minutesAgo: 12, errors: 1 }]);
  const [got, gotPlain, shown, shownJson] = await Promise.all([
    cli(store, ['get', 'g', '--json']),
    cli(store, ['get', 'g']),
    cli(store, ['show', 'g']),
    cli(store, ['show', 'g', '--json']),
  ]);
  const record = ok(got);
  assert.deepEqual(record, JSON.parse(readState(store, 'g')));
  assert.deepEqual(JSON.parse(gotPlain.stdout), record);
  assert.deepEqual(ok(shownJson), record);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^Session g\n/);
  for (const text of ['reviewer', 'Review', 'approval', 'e0', 'initializing -> approval'])
    assert.ok(shown.stdout.includes(text), text);
  assert.match(shown.stdout, /12 minutes ago/);
  assert.throws(() => JSON.parse(shown.stdout));

  const failures = await Promise.all([
    cli(store, ['get', 'nobody', '--json']),
    cli(store, ['show', 'nobody']),
    cli(store, ['get', '.hidden', '--json']),
    cli(store, ['show', '../g']),
    cli(store, ['get', '--json']),
  ]);
  [1, 1, 2, 2, 2].forEach((code, i) => failed(failures[i], code));
});

test(
  'text for people shows control characters escaped: ' + 'a record cannot break a line or drive the terminal',
  async (t) => {
    const { store } = setup(t);
    const purpose = 'first line\nsecond \u001b[31mred\u001b[0m\tend';
    await seed(store, [{ id: 'c', agent: 'agent\u001b]0;title\u0007x', purpose, phase: 'approval' }]);
    const [shown, listed, tree, json] = await Promise.all([
      cli(store, ['show', 'c']),
      cli(store, ['list']),
      cli(store, ['tree']),
      cli(store, ['show', 'c', '--json']),
    ]);
    for (const result of [shown, listed, tree]) {
      assert.equal(result.code, 0, result.stderr);
      assert.doesNotMatch(
        result.stdout,
        /[\u0000-\u0009\u000b-\u001f\u007f]/,
        'no control character but the line ends',
      );
      assert.ok(result.stdout.includes('agent\\u001b]0;title\\u0007x'), result.stdout);
    }
    assert.ok(
      shown.stdout.includes('  purpose:      first line\\nsecond \\u001b[31mred\\u001b[0m\\tend\n'),
      shown.stdout,
    );
    assert.equal(ok(json).purpose, purpose, '--json carries the exact text');
  },
);

test('list: newest first, every filter, --limit, and {sessions, problems} with --json', async (t) => {
  const { store } = setup(t);
  await seed(store, [
    { id: 'root', agent: 'lead', phase: 'executing', minutesAgo: 50 },
    { id: 'kid-a', agent: 'reviewer', parent: 'root', phase: 'approval', minutesAgo: 10 },
    { id: 'kid-b', agent: 'reviewer', parent: 'root', phase: 'approval', minutesAgo: 40 },
    { id: 'kid-c', agent: 'fixer', parent: 'root', outcome: 'completed', minutesAgo: 20 },
    { id: 'solo', agent: 'fixer', phase: 'planning', minutesAgo: 1 },
  ]);
  const runs = {
    all: ['list', '--json'],
    active: ['list', '--active-only', '--json'],
    agent: ['list', '--agent', 'reviewer', '--json'],
    phase: ['list', '--phase', 'approval', '--json'],
    parent: ['list', '--parent', 'root', '--json'],
    limit: ['list', '--limit', '2', '--json'],
    combined: ['list', '--parent', 'root', '--agent', 'reviewer', '--active-only', '--json'],
    none: ['list', '--agent', 'nobody', '--json'],
  };
  const names = Object.keys(runs);
  const results = await Promise.all(names.map((name) => cli(store, runs[name])));
  const got = Object.fromEntries(names.map((name, i) => [name, ok(results[i])]));
  const ids = (name) => got[name].sessions.map((s) => s.agent_id);
  assert.deepEqual(ids('all'), ['solo', 'kid-a', 'kid-c', 'kid-b', 'root']);
  assert.deepEqual(ids('active'), ['solo', 'kid-a']);
  assert.deepEqual(ids('agent'), ['kid-a', 'kid-b']);
  assert.deepEqual(ids('phase'), ['kid-a', 'kid-b']);
  assert.deepEqual(ids('parent'), ['kid-a', 'kid-c', 'kid-b']);
  assert.deepEqual(ids('limit'), ['solo', 'kid-a']);
  assert.deepEqual(ids('combined'), ['kid-a']);
  assert.deepEqual(got.none, { sessions: [], problems: [] });
  assert.deepEqual(Object.keys(got.all).sort(), ['problems', 'sessions']);
  const summary = got.all.sessions[1];
  assert.deepEqual(
    [summary.agent_name, summary.phase, summary.parent_session_id, summary.resume_ready],
    ['reviewer', 'approval', 'root', true],
  );

  const bad = await Promise.all([
    cli(store, ['list', '--limit', '-1', '--json']),
    cli(store, ['list', '--limit', 'ten', '--json']),
    cli(store, ['list', '--phase', 'bogus', '--json']),
    cli(store, ['list', '--parent', '../x', '--json']),
    cli(store, ['list', '--nope', '--json']),
  ]);
  for (const result of bad) failed(result, 2);
});

test('list: a table for people, with aligned columns and relative times', async (t) => {
  const { store } = setup(t);
  // An empty store (a missing one is an error: see status.test.mjs).
  mkdirSync(store);
  const empty = await cli(store, ['list']);
  assert.deepEqual([empty.code, empty.stdout.trim()], [0, 'No sessions.']);
  await seed(store, [
    { id: 'a-rather-long-session-id', agent: 'x', purpose: 'Long one', phase: 'planning', minutesAgo: 3 },
    { id: 'b', agent: 'a-long-agent-name', phase: 'approval', minutesAgo: 65 },
  ]);
  const result = await cli(store, ['list']);
  assert.equal(result.code, 0, result.stderr);
  const [header, ...rows] = result.stdout.trimEnd().split('\n');
  assert.equal(rows.length, 2);
  const columns = ['AGENT', 'PHASE', 'UPDATED'].map((name) => header.indexOf(name));
  assert.ok(columns.every((c) => c > 0));
  const cells = [
    [rows[0], ['x', 'planning', '3 minutes ago']],
    [rows[1], ['a-long-agent-name', 'approval', '1 hour ago']],
  ];
  for (const [row, values] of cells) {
    values.forEach((value, i) => assert.equal(row.indexOf(value, columns[i] - 1), columns[i], `${value} in ${row}`));
  }
  assert.ok(rows[0].startsWith('a-rather-long-session-id'));
  assert.ok(rows[0].endsWith('Long one'));
});

test(
  'list: corrupt and newer records never break the listing; ' + 'they are problems on stderr and in --json',
  async (t) => {
    const { store } = setup(t);
    await seed(store, [{ id: 'good-1', minutesAgo: 2 }, { id: 'good-2' }]);
    writeRaw(store, 'torn', '{"agent_id": "torn", "agent_na');
    writeRaw(store, 'future', { ...JSON.parse(readState(store, 'good-1')), agent_id: 'future', schema_version: 99 });
    writeRaw(store, 'wrong', {
      ...JSON.parse(readState(store, 'good-1')),
      agent_id: 'wrong',
      last_updated: '2026-01-01T00:00:00',
    });
    const [json, human] = await Promise.all([cli(store, ['list', '--json']), cli(store, ['list'])]);
    assert.equal(json.code, 0);
    const result = JSON.parse(json.stdout);
    assert.deepEqual(
      result.sessions.map((s) => s.agent_id),
      ['good-2', 'good-1'],
    );
    const problems = [...result.problems].sort((a, b) => a.id.localeCompare(b.id));
    assert.deepEqual(
      problems.map((p) => [p.id, p.code, p.path]),
      [
        ['future', 'EVERSION', stateFile(store, 'future')],
        ['torn', 'ECORRUPT', stateFile(store, 'torn')],
        ['wrong', 'ECORRUPT', stateFile(store, 'wrong')],
      ],
    );
    for (const output of [json.stderr, human.stderr]) {
      const lines = output.trimEnd().split('\n');
      assert.equal(lines.length, 3);
      for (const line of lines) assert.match(line, /^agent-session: /);
      for (const id of ['future', 'torn', 'wrong'])
        assert.ok(
          lines.some((l) => l.includes(id)),
          id,
        );
    }
    assert.equal(human.code, 0);
    assert.match(human.stdout, /good-1/);
    assert.match(human.stdout, /good-2/);
  },
);

test('finalize: the final state, idempotent for the same outcome, EFINAL for another, and its errors', async (t) => {
  const { store } = setup(t);
  await seed(store, [{ id: 'f', phase: 'approval', minutesAgo: 2 }, { id: 'h' }]);
  const done = ok(await cli(store, ['finalize', 'f', 'completed', '--summary', 'Merged', '--json']));
  assert.deepEqual(
    [done.phase, done.outcome, done.summary, done.resume_ready],
    ['completed', 'completed', 'Merged', false],
  );
  assert.ok(done.duration_seconds >= 120 && done.duration_seconds < 600, String(done.duration_seconds));
  assert.deepEqual(done.history.at(-1).to_phase, 'completed');
  const file = readState(store, 'f');
  assert.deepEqual(JSON.parse(file), done);
  const [again, other, badOutcome, noOutcome, nobody, badId, human] = await Promise.all([
    cli(store, ['finalize', 'f', 'completed', '--json']),
    cli(store, ['finalize', 'f', 'failed', '--json']),
    cli(store, ['finalize', 'h', 'done', '--json']),
    cli(store, ['finalize', 'h', '--json']),
    cli(store, ['finalize', 'nobody', 'completed', '--json']),
    cli(store, ['finalize', '..', 'completed', '--json']),
    cli(store, ['finalize', 'h', 'abandoned']),
  ]);
  assert.deepEqual(ok(again), done);
  failed(other, 3);
  failed(badOutcome, 2);
  failed(noOutcome, 2);
  failed(nobody, 1);
  failed(badId, 2);
  assert.equal(readState(store, 'f'), file);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /abandoned/);
  assert.equal(JSON.parse(readState(store, 'h')).phase, 'abandoned');
});

test(
  'cleanup: --dry-run reports and changes nothing; ' + '--hours sets the cutoff; the report is one JSON document',
  async (t) => {
    const { store } = setup(t);
    await seed(store, [
      { id: 'old-done', outcome: 'completed', minutesAgo: 48 * 60 },
      { id: 'mid-done', outcome: 'failed', minutesAgo: 10 * 60 },
      { id: 'new-done', outcome: 'completed', minutesAgo: 5 },
      { id: 'paused', phase: 'approval', minutesAgo: 2 },
    ]);
    writeRaw(store, 'torn', '{"agent_id": "torn"');
    const before = tree(store);
    const dry = ok(await cli(store, ['cleanup', '--dry-run', '--json']));
    assert.equal(dry.scanned, 5);
    assert.deepEqual(dry.removed, ['old-done']);
    assert.ok(Array.isArray(dry.skipped));
    assert.deepEqual(tree(store), before, 'a dry run changes nothing');
    const dryHours = ok(await cli(store, ['cleanup', '--dry-run', '--hours', '1', '--json']));
    assert.deepEqual([...dryHours.removed].sort(), ['mid-done', 'old-done']);
    assert.deepEqual(tree(store), before);

    const real = ok(await cli(store, ['cleanup', '--hours', '24', '--json']));
    assert.deepEqual(real.removed, ['old-done']);
    assert.ok(!existsSync(path.join(store, 'old-done')));
    for (const id of ['mid-done', 'new-done', 'paused']) assert.ok(existsSync(stateFile(store, id)), id);
    // A corrupt record is never deleted: it stays, or is kept aside with its bytes intact.
    const kept = tree(store).filter((p) => p.endsWith('state.json') && p.includes('torn'));
    assert.ok(kept.length >= 1, 'the corrupt record survives cleanup');
    assert.equal(readFileSync(path.join(store, kept[0]), 'utf8'), '{"agent_id": "torn"');

    const human = await cli(store, ['cleanup', '--hours', '0.5']);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /mid-done/);
    const bad = await Promise.all([
      cli(store, ['cleanup', '--hours', '-1', '--json']),
      cli(store, ['cleanup', '--hours', 'soon', '--json']),
      cli(store, ['cleanup', '--bogus', '--json']),
    ]);
    for (const result of bad) failed(result, 2);
  },
);

test('demo: walks through the lifecycle in its own temporary project and exits 0', async (t) => {
  const { root } = setup(t);
  const result = await runCli(['demo'], { cwd: root, env: cleanEnv({ HOME: root }) });
  assert.equal(result.code, 0, result.stderr);
  const project = /^Project: (.+)$/m.exec(result.stdout)?.[1];
  assert.ok(project && existsSync(path.join(project, '.claude', 'session')), 'the demo names its project');
  t.after(() => rmSync(project, { recursive: true, force: true }));
  for (const step of ['create', 'update', 'should-resume', 'finalize', 'list', 'cleanup'])
    assert.ok(result.stdout.includes(step), step);
  assert.match(result.stdout, /should-resume -> true \(resumable\)/);
  assert.match(result.stdout, /-> false \(expired\)/);
  assert.match(result.stdout, /-> false \(finalized\)/);
  assert.deepEqual(readdirSync(root), [], 'nothing written in the working directory');
  // The command it suggests runs as printed (no agent-session on PATH here: the build's file).
  const suggested = /look at it with: (.+)$/m.exec(result.stdout)[1];
  assert.equal(suggested, `${CLI_COMMAND} --dir ${path.join(project, '.claude', 'session')} list`);
  const [, script, ...args] = suggested.split(' ');
  const looked = await runNode(script, args, { cwd: root, env: cleanEnv({ HOME: root }) });
  assert.equal(looked.code, 0, looked.stderr);
  assert.match(looked.stdout, /debugger +initializing/);

  // With --json, one JSON document: the project and the steps.
  const json = await runCli(['demo', '--json'], { cwd: root, env: cleanEnv({ HOME: root }) });
  assert.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout);
  t.after(() => rmSync(report.project, { recursive: true, force: true }));
  assert.ok(existsSync(path.join(report.project, '.claude', 'session')));
  // Each step an object: its number, the command it stands for, the session, what it did, its result.
  for (const [i, step] of report.steps.entries()) {
    assert.deepEqual(Object.keys(step), ['step', 'command', 'session', 'did', 'result']);
    assert.equal(step.step, i + 1);
    assert.equal(typeof step.result, 'object');
  }
  const commands = report.steps.map((s) => s.command);
  assert.deepEqual(commands, [
    'create',
    'update',
    'update',
    'should-resume',
    'should-resume',
    'update',
    'finalize',
    'should-resume',
    'create',
    'list',
    'cleanup',
  ]);
  assert.deepEqual(
    report.steps.filter((s) => s.command === 'should-resume').map((s) => s.result.reason),
    ['resumable', 'expired', 'finalized'],
  );
  // Nothing hidden: every listed session was created by a step, every recorded phase change is a step.
  const created = report.steps.filter((s) => s.command === 'create').map((s) => s.session);
  const listed = report.steps.find((s) => s.command === 'list').result.sessions.map((s) => s.id);
  assert.deepEqual([...listed].sort(), [...created].sort());
  const finalized = report.steps.find((s) => s.command === 'finalize').result;
  const changes = report.steps.filter((s) => s.command === 'update' || s.command === 'finalize');
  assert.equal(finalized.phases.length - 1, changes.length);
  assert.deepEqual(
    finalized.phases.slice(1),
    changes.map((s) => s.result.phase),
  );
  // The text prints the same steps, one numbered line each.
  assert.equal(result.stdout.match(/^ ?\d+\. /gm).length, report.steps.length);
  assert.match(result.stdout, new RegExp(`${changes.length} phase changes recorded`));
});

test(
  'store location: --dir, then AGENT_SESSION_DIR, then CLAUDE_PROJECT_DIR, ' +
    'then the nearest ancestor with .claude/, then cwd',
  async (t) => {
    const root = tempDir(t);
    const project = path.join(root, 'proj');
    const deep = path.join(project, 'src', 'lib');
    mkdirSync(path.join(project, '.claude'), { recursive: true });
    mkdirSync(deep, { recursive: true });
    const plain = path.join(root, 'plain');
    mkdirSync(plain);
    const run = (id, cwd, env, extra = []) =>
      runCli(['create', '--agent', 'a', '--id', id, ...extra], { cwd, env: cleanEnv({ HOME: root, ...env }) });
    const results = await Promise.all([
      run('by-flag', deep, { AGENT_SESSION_DIR: path.join(root, 'env-store'), CLAUDE_PROJECT_DIR: plain }, [
        '--dir',
        '../flag-store',
      ]),
      run('by-env', deep, { AGENT_SESSION_DIR: 'rel-env-store', CLAUDE_PROJECT_DIR: plain }),
      run('by-project-var', deep, { CLAUDE_PROJECT_DIR: plain }),
      run('by-ancestor', deep, {}),
      run('by-cwd', plain, {}),
    ]);
    for (const result of results) assert.equal(result.code, 0, result.stderr);
    assert.ok(existsSync(path.join(project, 'src', 'flag-store', 'by-flag', 'state.json')), '--dir, relative to cwd');
    assert.ok(
      existsSync(path.join(deep, 'rel-env-store', 'by-env', 'state.json')),
      'AGENT_SESSION_DIR, relative to cwd',
    );
    assert.ok(existsSync(path.join(plain, '.claude', 'session', 'by-project-var', 'state.json')), 'CLAUDE_PROJECT_DIR');
    assert.ok(
      existsSync(path.join(project, '.claude', 'session', 'by-ancestor', 'state.json')),
      'nearest ancestor with .claude/',
    );
    assert.ok(existsSync(path.join(plain, '.claude', 'session', 'by-cwd', 'state.json')), 'the working directory');
    // Each store holds only its own session.
    const sessionsIn = (store) => readdirSync(store).filter((n) => existsSync(path.join(store, n, 'state.json')));
    assert.deepEqual(sessionsIn(path.join(project, '.claude', 'session')), ['by-ancestor']);
    assert.deepEqual(sessionsIn(path.join(plain, '.claude', 'session')).sort(), ['by-cwd', 'by-project-var']);
  },
);

test('read-only commands never create directories, wherever the store would be', async (t) => {
  const root = tempDir(t);
  const project = path.join(root, 'proj');
  mkdirSync(path.join(project, '.claude', 'x'), { recursive: true });
  const before = tree(root);
  const readOnly = [
    ['list'],
    ['list', '--active-only'],
    ['get', 'x'],
    ['show', 'x'],
    ['should-resume', 'x'],
    ['cleanup', '--dry-run'],
  ];
  const locations = [
    { cwd: root, env: { AGENT_SESSION_DIR: path.join(root, 'env', 'store') }, extra: [] },
    { cwd: root, env: { CLAUDE_PROJECT_DIR: path.join(root, 'other') }, extra: [] },
    { cwd: path.join(project, '.claude', 'x'), env: {}, extra: [] },
    { cwd: root, env: {}, extra: [] },
  ];
  const runs = [
    ...readOnly.map((args) => [args, { cwd: root, env: {}, extra: ['--dir', path.join(root, 'nowhere', 'store')] }]),
    ...locations.flatMap((where) => [
      [['list'], where],
      [['should-resume', 'x'], where],
    ]),
  ];
  const results = await pool(
    runs.map(
      ([args, { cwd, env, extra }]) =>
        () =>
          runCli([...args, ...extra, '--json'], { cwd, env: cleanEnv({ HOME: root, ...env }) }),
    ),
  );
  results.forEach((result, i) => {
    // No store anywhere here: the read commands say so (1), should-resume says no (1), a dry run has nothing to do.
    // A CLAUDE_PROJECT_DIR naming no directory is refused first (2).
    const badProject = runs[i][1].env.CLAUDE_PROJECT_DIR !== undefined;
    const expected = badProject ? 2 : runs[i][0][0] === 'cleanup' ? 0 : 1;
    assert.equal(result.code, expected, `${runs[i][0]}: ${result.stderr}`);
    if (badProject) assert.match(result.stderr, /CLAUDE_PROJECT_DIR names no directory/);
    else if (['should-resume', 'cleanup'].includes(runs[i][0][0])) JSON.parse(result.stdout);
  });
  assert.deepEqual(tree(root), before);
});

test('errors: one line on stderr without a stack trace, unless AGENT_SESSION_DEBUG=1', async (t) => {
  const { store } = setup(t);
  const [plain, debug, internal] = await Promise.all([
    cli(store, ['get', '../x', '--json']),
    cli(store, ['get', '../x', '--json'], { env: { AGENT_SESSION_DEBUG: '1' } }),
    cli(store, ['frobnicate', '--json']),
  ]);
  failed(plain, 2);
  failed(internal, 2);
  assert.equal(debug.code, 2);
  assert.equal(debug.stdout, '');
  const lines = debug.stderr.trimEnd().split('\n');
  assert.equal(lines[0], plain.stderr.trimEnd());
  assert.ok(lines.length > 2 && lines.slice(1).some((l) => /^\s+at /.test(l)), 'a stack trace in debug mode');
});

test('a corrupt record and a newer schema_version are store problems (exit 4), never rewritten', async (t) => {
  const { store } = setup(t);
  await seed(store, [{ id: 'ok' }]);
  const good = JSON.parse(readState(store, 'ok'));
  writeRaw(store, 'torn', '{"agent_id": "torn", "pha');
  writeRaw(store, 'notobj', '[1, 2]');
  writeRaw(store, 'badphase', { ...good, agent_id: 'badphase', phase: 'sleeping' });
  writeRaw(store, 'moved', good); // agent_id does not match its directory
  writeRaw(store, 'newer', { ...good, agent_id: 'newer', schema_version: 99 });
  const ids = ['torn', 'notobj', 'badphase', 'moved', 'newer'];
  const before = Object.fromEntries(ids.map((id) => [id, readState(store, id)]));
  const writes = (id) => [
    ['show', id],
    ['update', id, '--phase', 'planning', '--json'],
    ['finalize', id, 'completed', '--json'],
  ];
  const runs = [...ids.map((id) => ['get', id, '--json']), ...writes('torn'), ...writes('newer')];
  const results = await pool(runs.map((args) => () => cli(store, args)));
  for (const result of results) failed(result, 4);
  for (const id of ids) assert.equal(readState(store, id), before[id], `${id} was rewritten`);
  // Creating over a corrupt record is refused too, as the store problem it is, and keeps the file.
  failed(await cli(store, ['create', '--agent', 'a', '--id', 'torn', '--json']), 4);
  assert.equal(readState(store, 'torn'), before.torn);
});

test(
  'a lock held by another process: writers give up with exit 4 (ELOCKED), readers still work',
  { timeout: 30_000 },
  async (t) => {
    const { store } = setup(t);
    await seed(store, [{ id: 'held', phase: 'approval' }]);
    const before = readState(store, 'held');
    const holder = await holdLock(t, path.join(store, '.locks', 'held.lock'), { by: 'proper-lockfile' });
    const env = { AGENT_SESSION_LOCK_TIMEOUT_MS: '300' };
    const [update, finalize, get, resume] = await Promise.all([
      cli(store, ['update', 'held', '--error', 'x', '--json'], { env }),
      cli(store, ['finalize', 'held', 'completed', '--json'], { env }),
      cli(store, ['get', 'held', '--json'], { env }),
      cli(store, ['should-resume', 'held', '--json'], { env }),
    ]);
    failed(update, 4);
    failed(finalize, 4);
    assert.equal(ok(get).agent_id, 'held');
    assert.equal(ok(resume).reason, 'resumable');
    assert.equal(readState(store, 'held'), before);
    await holder.kill();
    // The holder is gone: its lock goes stale and the next writer takes it over (default timeout).
    const after = ok(await cli(store, ['update', 'held', '--error', 'x', '--json']));
    assert.equal(after.error_count, 1);
  },
);

test('hostile ids never touch anything outside the store (nor inside it)', async (t) => {
  const { root, store } = setup(t);
  await seed(store, [{ id: 'legit' }]);
  mkdirSync(path.join(root, 'outside'));
  writeFileSync(path.join(root, 'outside', 'state.json'), 'precious');
  const before = tree(root);
  // Every id form is checked against every entry point in rules.test.mjs; here the CLI's paths to them.
  const hostile = [
    '../outside',
    '..',
    '.locks',
    'a/b',
    `${root}/outside`,
    'x'.repeat(129),
    'legit/../../outside',
    'ok\nline',
  ];
  const writes = (id) => [
    ['create', '--agent', 'a', '--id', id, '--json'],
    ['update', id, '--phase', 'planning', '--metadata', '{"a":1}', '--error', 'e', '--json'],
  ];
  const others = (id) => [
    ['finalize', id, 'completed', '--json'],
    ['get', id, '--json'],
    ['should-resume', id, '--json'],
    ['create', '--agent', 'a', '--parent', id, '--id', 'child', '--json'],
    ['list', '--parent', id, '--json'],
  ];
  const runs = [...hostile.flatMap(writes), ...others('../outside'), ...others(`${root}/outside`)];
  const results = await pool(runs.map((args) => () => cli(store, args)));
  results.forEach((result) => failed(result, 2));
  assert.deepEqual(tree(root), before, 'the filesystem around and inside the store is unchanged');
  assert.equal(readFileSync(path.join(root, 'outside', 'state.json'), 'utf8'), 'precious');
});

test('a symlinked session directory or state.json never leads a write outside the store', async (t) => {
  const { root, store } = setup(t);
  await seed(store, [{ id: 'linked' }]);
  const outside = path.join(root, 'outside');
  mkdirSync(outside);
  // A session directory that is a symlink to a directory outside: create refuses to write through it.
  symlinkSync(outside, path.join(store, 'evil'));
  const created = await cli(store, ['create', '--agent', 'a', '--id', 'evil', '--json']);
  assert.notEqual(created.code, 0);
  assert.deepEqual(readdirSync(outside), []);
  // A state.json that is a symlink to a file outside: never read through, never written (ECORRUPT, exit 4).
  writeFileSync(path.join(outside, 'target.json'), readState(store, 'linked'));
  rmSync(stateFile(store, 'linked'));
  symlinkSync(path.join(outside, 'target.json'), stateFile(store, 'linked'));
  const original = readFileSync(path.join(outside, 'target.json'), 'utf8');
  const updated = await cli(store, ['update', 'linked', '--phase', 'planning', '--json']);
  assert.equal(updated.code, 4, updated.stderr);
  assert.ok(lstatSync(stateFile(store, 'linked')).isSymbolicLink());
  assert.equal(readFileSync(path.join(outside, 'target.json'), 'utf8'), original);
  assert.deepEqual(readdirSync(outside).sort(), ['target.json']);
});

test(
  'crash-left temp files (in .tmp/, or next to state.json from ' +
    'earlier versions) are ignored by every reader and writer',
  async (t) => {
    const { store } = setup(t);
    await seed(store, [{ id: 'tmp', phase: 'approval' }]);
    writeFileSync(path.join(store, '.tmp', 'tmp.state.json.4242.1.abcdef.tmp'), '{"agent_id": "tmp", "phase": "exec');
    writeFileSync(path.join(store, 'tmp', 'state.json.4243.7.000000.tmp'), '');
    const [get, list, resume] = await Promise.all([
      cli(store, ['get', 'tmp', '--json']),
      cli(store, ['list', '--json']),
      cli(store, ['should-resume', 'tmp', '--json']),
    ]);
    assert.equal(ok(get).phase, 'approval');
    assert.deepEqual(ok(list), { sessions: [ok(list).sessions[0]], problems: [] });
    assert.equal(ok(list).sessions[0].agent_id, 'tmp');
    assert.equal(ok(resume).reason, 'resumable');
    const updated = ok(await cli(store, ['update', 'tmp', '--phase', 'planning', '--json']));
    assert.equal(updated.phase, 'planning');
    assert.equal(JSON.parse(readState(store, 'tmp')).phase, 'planning');
  },
);

test('a reader that closes stdout early (| head) gets no stack trace, and the command still completes', async (t) => {
  const { store } = setup(t);
  await seed(store, [{ id: 'p1' }, { id: 'p2' }]);
  const runs = [
    ['list', '--json'],
    ['update', 'p1', '--phase', 'planning', '--json'],
  ];
  for (const args of runs) {
    const child = spawn(process.execPath, [CLI, ...args, '--dir', store], {
      cwd: path.dirname(store),
      env: cleanEnv({ HOME: path.dirname(store) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy(); // the reader is gone before the first write: EPIPE
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(stderr, '', `${args[0]}: ${stderr}`);
    assert.equal(code, 0, args[0]);
  }
  assert.equal(JSON.parse(readState(store, 'p1')).phase, 'planning');
});

test('an option given twice takes its last value, for --dir as for any other', async (t) => {
  const { root, store } = setup(t);
  const other = path.join(root, 'other-store');
  const created = await runCli(
    ['create', '--agent', 'first', '--agent', 'second', '--id', 'twice', '--dir', other, '--dir', store, '--json'],
    { cwd: root, env: cleanEnv({ HOME: root }) },
  );
  assert.equal(ok(created).agent_name, 'second');
  assert.ok(existsSync(stateFile(store, 'twice')));
  assert.ok(!existsSync(other));
  const [updated, listed] = await Promise.all([
    cli(store, ['update', 'twice', '--phase', 'planning', '--phase', 'approval', '--json']),
    cli(store, ['list', '--agent', 'nobody', '--agent', 'second', '--json']),
  ]);
  assert.equal(ok(updated).phase, 'approval');
  assert.deepEqual(
    ok(listed).sessions.map((s) => s.agent_id),
    ['twice'],
  );
});

test('an option that needs a value and has none is a usage error, never its default', async (t) => {
  const { root, store } = setup(t);
  await seed(store, [{ id: 'old', outcome: 'completed', minutesAgo: 48 * 60 }]);
  const before = tree(root);
  const results = await Promise.all([
    cli(store, ['cleanup', '--json', '--hours']), // not the default 24 h
    cli(store, ['list', '--json', '--limit']),
    // not the default store
    runCli(['create', '--agent', 'a', '--json', '--dir'], { cwd: root, env: cleanEnv({ HOME: root }) }),
  ]);
  for (const result of results) failed(result, 2);
  assert.deepEqual(tree(root), before);
});

test(
  'a yes/no option given a value other than true or false is a usage error: ' + '--dry-run=yes never writes',
  async (t) => {
    const { root, store } = setup(t);
    await seed(store, [{ id: 'old', outcome: 'completed', minutesAgo: 48 * 60 }]);
    const before = tree(root);
    const results = await Promise.all([
      cli(store, ['cleanup', '--dry-run=yes']), // yargs alone reads this as false: a real cleanup
      cli(store, ['cleanup', '--dry-run=1', '--json']),
      cli(store, ['list', '--json=no']),
      runCli(['install', '--dry-run=y'], { cwd: root, env: cleanEnv({ HOME: root }) }),
    ]);
    for (const result of results) failed(result, 2);
    assert.match(results[0].stderr, /--dry-run takes no value \(or true\/false\), not "yes"/);
    assert.deepEqual(tree(root), before);
    // true and false still work, and a string option's value may look like anything.
    assert.equal(ok(await cli(store, ['cleanup', '--dry-run=true', '--json'])).dry_run, true);
    assert.deepEqual(tree(root), before);
    assert.equal(ok(await cli(store, ['create', '--agent=x', '--purpose=--json=yes', '--json'])).purpose, '--json=yes');
  },
);
test(
  'an error about input holding line breaks is still one line on stderr; ' + 'table cells cannot break the table',
  async (t) => {
    const { store } = setup(t);
    const results = await Promise.all([
      cli(store, ['create', '--agent', 'a', '--metadata', 'x\ny', '--json']), // V8 quotes the bad JSON in its message
      cli(store, ['create', '--agent', 'a', '--json', 'extra\nword']),
    ]);
    for (const result of results) failed(result, 2);
    await seed(store, [{ id: 'nl', agent: 'multi\nline', purpose: 'two\nlines\rand\ttab' }]);
    const listed = await cli(store, ['list']);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, listed.stdout);
    assert.ok(!/[\r\t]/.test(listed.stdout));
    assert.equal(lines[1].indexOf('initializing'), lines[0].indexOf('PHASE'));
  },
);

test('a mistyped command is reported as an unknown command, with the suggestion', async (t) => {
  const { store } = setup(t);
  const result = await cli(store, ['shw', 'x', '--json']);
  failed(result, 2);
  assert.match(result.stderr, /unknown command/i);
  assert.ok(result.stderr.includes('show'), result.stderr);
});

test('update, finalize and delete of a session in a project with no store say so and create nothing', async (t) => {
  const root = tempDir(t);
  const env = cleanEnv({ HOME: root });
  for (const args of [
    ['update', 'agent-x', '--phase', 'approval'],
    ['finalize', 'agent-x', 'completed'],
    ['delete', 'agent-x'],
  ]) {
    const r = await runCli(args, { cwd: root, env });
    assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /no sessions have been recorded here yet: the store \S+ does not exist/);
  }
  // No store, and no .claude/ that would change which project later commands (install too) resolve here.
  assert.deepEqual(readdirSync(root), []);
});

// build-cli.ts skips yargs's help cache through yargs's internals (the usage instance): if they change,
// the CLI still works, only slower. This fails then, so that whoever updates yargs knows.
test("yargs still has the help cache that the CLI skips (build-cli.ts's skipHelpCache)", async () => {
  const { default: yargs } = await import('yargs');
  const usage = yargs([]).getInternalMethods().getUsageInstance();
  assert.equal(typeof usage.cacheHelpMessage, 'function');
  assert.equal(typeof usage.hasCachedHelpMessage, 'function');
});

test('without process.getBuiltinModule (a Node before 20.16), export and a list with HOME unset work', async (t) => {
  const base = tempDir(t);
  const store = path.join(base, 'store');
  const preload = path.join(base, 'old-node.cjs');
  writeFileSync(preload, 'delete process.getBuiltinModule;\n');
  const env = { NODE_OPTIONS: `--require=${preload}` };
  assert.equal((await cli(store, ['create', '--agent', 'a', '--id', 'old-node'])).code, 0);
  const exported = await cli(store, ['export', '--all', '--output', path.join(base, 'e.jsonl')], { env });
  assert.equal(exported.code, 0, exported.stderr);
  assert.match(readFileSync(path.join(base, 'e.jsonl'), 'utf8'), /"checksum":"sha256:[0-9a-f]{64}"/);
  const listed = await runCli(['--dir', store, 'list'], { cwd: base, env: { ...cleanEnv(env), HOME: '' } });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /old-node/);
});
