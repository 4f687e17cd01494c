// Issue 2, section 6: every command of the built `agent-session` CLI and every error path, with a
// temporary store (--dir), checking exit codes, stdout, stderr and the files on disk.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { cleanEnv, ROOT, runCli, tempDir } from './helpers/run.mjs';

const MIN = 60_000;
const HOUR = 60 * MIN;
const iso = (ms) => new Date(ms).toISOString();
const GENERATED_ID = /^agent-(\d{8})-(\d{6})-[0-9a-f]{8}$/;

/** A temp project (no .claude/, so no config file applies) with its store at <project>/store. */
function project(t) {
  const root = tempDir(t);
  const store = path.join(root, 'store');
  const file = (id) => path.join(store, id, 'state.json');
  const run = (args, env = {}) => runCli([...args, '--dir', store], { cwd: root, env: cleanEnv(env) });
  return { root, store, file, run, read: (id) => readFileSync(file(id), 'utf8') };
}

/** A well-formed record as the store writes it, `fields` overriding. */
function record(id, fields = {}) {
  const now = Date.now();
  return {
    schema_version: 1, agent_id: id, agent_name: 'agent', purpose: null, created_at: iso(now - HOUR),
    last_updated: iso(now), phase: 'initializing', metadata: {}, resume_ready: false, history: [],
    error_count: 0, last_error: null, parent_session_id: null, ...fields,
  };
}

function put(p, rec, text = `${JSON.stringify(rec, null, 2)}\n`) {
  mkdirSync(path.join(p.store, rec.agent_id), { recursive: true });
  writeFileSync(p.file(rec.agent_id), text);
  return text;
}

/** A session paused in approval `ago` ms ago. */
function paused(id, ago = 0, fields = {}) {
  const at = iso(Date.now() - ago);
  return record(id, {
    phase: 'approval', resume_ready: true, last_updated: at,
    history: [{ from_phase: 'initializing', to_phase: 'approval', timestamp: at }], ...fields,
  });
}

function ok(r) {
  assert.equal(r.stderr, '', `stderr: ${r.stderr}`);
  assert.equal(r.code, 0, `stdout: ${r.stdout}`);
  return r;
}

/** Exactly one JSON document on stdout. */
function json(r) {
  assert.ok(r.stdout.endsWith('\n'));
  return JSON.parse(r.stdout);
}

/** A failure: the exit code, nothing on stdout, one `agent-session:` line on stderr, no stack trace. */
function fails(r, code) {
  assert.equal(r.code, code, `stderr: ${r.stderr} stdout: ${r.stdout}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^agent-session: [^\n]+\n$/);
  assert.ok(!r.stderr.includes('    at '), r.stderr);
  return r;
}

/** Session directories in the store (dot-directories are the store's own). */
function sessionDirs(p) {
  if (!existsSync(p.store)) return [];
  return readdirSync(p.store, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
}

describe('agent-session CLI, issue 2 commands', { concurrency: 3 }, () => {
  test('create: a generated id agent-YYYYMMDD-HHMMSS-<8 hex> in UTC; the state on stdout is the file', async (t) => {
    const p = project(t);
    const before = iso(Date.now() - 1000);
    const r = ok(await p.run(['create', '--agent', 'reviewer', '--json']));
    const after = iso(Date.now() + 1000);
    const state = json(r);
    const match = GENERATED_ID.exec(state.agent_id);
    assert.ok(match, state.agent_id);
    const stamp = `${match[1]}${match[2]}`;
    const compact = (s) => s.replace(/[-:T]/g, '').slice(0, 14);
    assert.ok(stamp >= compact(before) && stamp <= compact(after), `${stamp} is the UTC time of creation`);
    assert.deepEqual(JSON.parse(p.read(state.agent_id)), state);
    assert.equal(state.schema_version, 1);
    assert.equal(state.phase, 'initializing');
    assert.equal(state.resume_ready, false);
    assert.equal(state.agent_name, 'reviewer');
    assert.deepEqual([state.purpose, state.metadata, state.history, state.error_count, state.last_error, state.parent_session_id], [null, {}, [], 0, null, null]);
    // Without --json: one plain sentence naming the id.
    const plain = ok(await p.run(['create', '--agent', 'reviewer']));
    assert.equal(plain.stdout.trim().split('\n').length, 1);
    const id = sessionDirs(p).find((d) => d !== state.agent_id);
    assert.match(id, GENERATED_ID);
    assert.ok(plain.stdout.includes(id));
  });

  test('create: --id, --purpose, --metadata and an existing --parent are stored', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'lead', '--id', 'parent-1']));
    const r = ok(await p.run(['create', '--agent', 'worker', '--id', 'child.1', '--purpose', 'Fix the build', '--metadata', '{"ticket":"ABC-1","n":{"x":1}}', '--parent', 'parent-1', '--json']));
    const state = json(r);
    assert.deepEqual(
      [state.agent_id, state.agent_name, state.purpose, state.metadata, state.parent_session_id],
      ['child.1', 'worker', 'Fix the build', { ticket: 'ABC-1', n: { x: 1 } }, 'parent-1'],
    );
    assert.deepEqual(JSON.parse(p.read('child.1')), state);
  });

  test('create: bad --metadata, a missing --parent, an invalid --id or no --agent exit 2 and create nothing', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'a', '--id', 'keep']));
    const bad = [['--metadata', '{not json'], ['--metadata', '[1,2]'], ['--parent', 'no-such-parent'], ['--id', '../x'], ['--id', 'x'.repeat(129)]];
    const runs = bad.map((args) => p.run(['create', '--agent', 'a', '--id', 'new-one', ...args]));
    for (const r of await Promise.all([...runs, p.run(['create', '--id', 'new-one'])])) fails(r, 2);
    assert.deepEqual(sessionDirs(p), ['keep']);
    assert.deepEqual(readdirSync(p.root), ['store']);
    ok(await p.run(['create', '--agent', 'a', '--id', 'x'.repeat(128)]));
  });

  test('create: an id that exists exits 3 and leaves the existing file byte-identical', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'first', '--id', 'dup', '--metadata', '{"a":1}']));
    const before = p.read('dup');
    fails(await p.run(['create', '--agent', 'second', '--id', 'dup', '--purpose', 'overwrite?', '--json']), 3);
    assert.equal(p.read('dup'), before);
  });

  test('update: phase, metadata merge patch (null deletes), error; history and last_updated', async (t) => {
    const p = project(t);
    const created = json(ok(await p.run(['create', '--agent', 'a', '--id', 's', '--metadata', '{"keep":1,"drop":2,"nested":{"a":1}}', '--json'])));
    const r = json(ok(await p.run(['update', 's', '--phase', 'investigating', '--metadata', '{"drop":null,"nested":{"b":2},"list":[1]}', '--json'])));
    assert.equal(r.phase, 'investigating');
    assert.equal(r.resume_ready, true);
    assert.deepEqual(r.metadata, { keep: 1, nested: { a: 1, b: 2 }, list: [1] });
    assert.deepEqual(r.history.map((h) => [h.from_phase, h.to_phase, h.timestamp]), [['initializing', 'investigating', r.last_updated]]);
    assert.ok(Date.parse(r.last_updated) >= Date.parse(created.last_updated));
    assert.deepEqual(JSON.parse(p.read('s')), r);
    const same = json(ok(await p.run(['update', 's', '--phase', 'investigating', '--error', 'tool failed', '--json'])));
    assert.equal(same.history.length, 1, 'the same phase adds no history entry');
    assert.equal(same.error_count, 1);
    assert.deepEqual(same.last_error, { message: 'tool failed', timestamp: same.last_updated });
    const exec = json(ok(await p.run(['update', 's', '--phase', 'executing', '--json'])));
    assert.equal(exec.resume_ready, false);
    assert.equal(exec.history.length, 2);
    const plain = ok(await p.run(['update', 's', '--metadata', '{"list":[2,3]}']));
    assert.equal(plain.stdout.trim().split('\n').length, 1);
    assert.deepEqual(JSON.parse(p.read('s')).metadata.list, [2, 3]);
  });

  test('update: unknown id exits 1; invalid id exits 2 and writes nothing anywhere', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'a', '--id', 's']));
    const storeBefore = readdirSync(p.store).sort();
    fails(await p.run(['update', 'nobody', '--phase', 'planning']), 1);
    assert.ok(!existsSync(path.join(p.store, 'nobody')));
    for (const id of ['../x', '.locks', '../store/s']) {
      fails(await p.run(['update', id, '--phase', 'planning', '--metadata', '{"a":1}']), 2);
    }
    assert.deepEqual(readdirSync(p.root), ['store']);
    assert.deepEqual(readdirSync(p.store).sort(), storeBefore);
    assert.equal(JSON.parse(p.read('s')).phase, 'initializing');
  });

  test('update: bad phase (even with an error), bad metadata or a final phase exit 2 and change nothing', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'a', '--id', 's']));
    const before = p.read('s');
    for (const args of [
      ['--phase', 'bogus', '--error', 'boom'],
      ['--phase', 'completed', '--error', 'boom'],
      ['--metadata', '[1]', '--error', 'boom'],
    ]) {
      fails(await p.run(['update', 's', ...args]), 2);
      assert.equal(p.read('s'), before, args.join(' '));
    }
  });

  test('update: a final session exits 3 and stays byte-identical', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'a', '--id', 's']));
    ok(await p.run(['finalize', 's', 'failed']));
    const before = p.read('s');
    fails(await p.run(['update', 's', '--phase', 'planning']), 3);
    fails(await p.run(['update', 's', '--error', 'again', '--json']), 3);
    assert.equal(p.read('s'), before);
  });

  test('should-resume: exit 0 when it resumes, 1 when not, with the reason in --json', async (t) => {
    const p = project(t);
    put(p, paused('fresh', 29 * MIN));
    put(p, paused('old', 31 * MIN));
    put(p, paused('errors', 0, { error_count: 3, last_error: { message: 'x', timestamp: iso(Date.now()) } }));
    put(p, paused('two-errors', 0, { error_count: 2 }));
    put(p, paused('not-ready', 0, { resume_ready: false }));
    put(p, paused('future', -10 * MIN));
    put(p, record('busy', { phase: 'executing' }));
    put(p, paused('done', 0, { phase: 'completed', resume_ready: false, finalized_at: iso(Date.now()), outcome: 'completed' }));
    const expect = {
      fresh: [0, true, 'resumable'], 'two-errors': [0, true, 'resumable'], old: [1, false, 'expired'],
      errors: [1, false, 'too_many_errors'], 'not-ready': [1, false, 'not_resume_ready'], future: [1, false, 'expired'],
      busy: [1, false, 'phase_not_resumable'], done: [1, false, 'finalized'], nobody: [1, false, 'not_found'],
    };
    await Promise.all(Object.entries(expect).map(async ([id, [code, resume, reason]]) => {
      const r = await p.run(['should-resume', id, '--json']);
      assert.equal(r.code, code, id);
      assert.equal(r.stderr, '');
      const d = json(r);
      assert.deepEqual([d.resume, d.reason], [resume, reason], id);
      assert.equal(d.session?.agent_id ?? null, id === 'nobody' ? null : id);
    }));
    const yes = ok(await p.run(['should-resume', 'fresh']));
    assert.equal(yes.stdout.trim().split('\n').length, 1);
    const no = await p.run(['should-resume', 'old']);
    assert.equal(no.code, 1);
    assert.match(no.stdout, /expired/);
    fails(await p.run(['should-resume', '../x']), 2);
  });

  test('should-resume: the window and the budget come from the environment or the project config file', async (t) => {
    const p = project(t);
    put(p, paused('s', 45 * MIN, { error_count: 3 }));
    const decide = async (env) => json(await p.run(['should-resume', 's', '--json'], env)).reason;
    assert.equal(await decide({}), 'expired');
    assert.equal(await decide({ AGENT_SESSION_RESUME_WINDOW_MINUTES: '60' }), 'too_many_errors');
    const both = { AGENT_SESSION_RESUME_WINDOW_MINUTES: '60', AGENT_SESSION_ERROR_BUDGET: '4' };
    assert.equal((await p.run(['should-resume', 's'], both)).code, 0);
    mkdirSync(path.join(p.root, '.claude'));
    writeFileSync(path.join(p.root, '.claude', 'agent-session.json'), JSON.stringify({ resume_window_minutes: 50, error_budget: 5 }));
    assert.equal(await decide({}), 'resumable');
    // The environment wins over the file.
    assert.equal(await decide({ AGENT_SESSION_RESUME_WINDOW_MINUTES: '40' }), 'expired');
    fails(await p.run(['should-resume', 's'], { AGENT_SESSION_ERROR_BUDGET: 'lots' }), 2);
  });

  test('get: one JSON document equal to the file; unknown exits 1, invalid 2', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'a', '--id', 's', '--metadata', '{"k":"v"}']));
    const state = json(ok(await p.run(['get', 's', '--json'])));
    assert.deepEqual(state, JSON.parse(p.read('s')));
    assert.deepEqual(json(ok(await p.run(['get', 's']))), state);
    fails(await p.run(['get', 'nobody', '--json']), 1);
    fails(await p.run(['get', '.hidden']), 2);
    assert.ok(!existsSync(path.join(p.store, 'nobody')));
  });

  test('show: a readable summary with history and relative times; unknown exits 1', async (t) => {
    const p = project(t);
    const now = Date.now();
    put(p, record('s', {
      agent_name: 'reviewer', purpose: 'Review PR 42', created_at: iso(now - 2 * HOUR - MIN), last_updated: iso(now - 12 * MIN - 5000),
      phase: 'approval', resume_ready: true, error_count: 1, last_error: { message: 'lint failed', timestamp: iso(now - 30 * MIN) },
      history: [
        { from_phase: 'initializing', to_phase: 'investigating', timestamp: iso(now - 2 * HOUR) },
        { from_phase: 'investigating', to_phase: 'approval', timestamp: iso(now - 12 * MIN - 5000) },
      ],
    }));
    const out = ok(await p.run(['show', 's'])).stdout;
    assert.ok(!out.trimStart().startsWith('{'), 'not JSON');
    for (const text of ['Session s', 'reviewer', 'Review PR 42', 'approval', 'lint failed', '2 hours ago']) {
      assert.ok(out.includes(text), `${text} in:\n${out}`);
    }
    // A slow machine may tick one minute on between writing the record and showing it.
    assert.match(out, /lint failed \((30|31) minutes ago\)/);
    assert.match(out, /initializing -> investigating\s+2 hours ago/);
    assert.match(out, /investigating -> approval\s+1[23] minutes ago/);
    assert.deepEqual(json(ok(await p.run(['show', 's', '--json']))).history.length, 2);
    fails(await p.run(['show', 'nobody']), 1);
    fails(await p.run(['show', 'a/b']), 2);
  });

  test('list: newest first by instant even when offsets make string order differ', async (t) => {
    const p = project(t);
    // String order (newest first) would be a, b, c; the instants are c (11:30Z), b (11:00Z), a (10:30Z).
    put(p, record('a', { last_updated: '2026-11-22T12:30:00.000+02:00', created_at: '2026-11-22T08:00:00.000Z' }));
    put(p, record('b', { last_updated: '2026-11-22T11:00:00.000Z', created_at: '2026-11-22T08:00:00.000Z' }));
    put(p, record('c', { last_updated: '2026-11-22T06:30:00.000-05:00', created_at: '2026-11-22T08:00:00.000Z' }));
    const listed = json(ok(await p.run(['list', '--json'])));
    assert.deepEqual(Object.keys(listed).sort(), ['problems', 'sessions']);
    assert.deepEqual(listed.sessions.map((s) => s.agent_id), ['c', 'b', 'a']);
    assert.deepEqual(listed.problems, []);
    assert.deepEqual(json(ok(await p.run(['list', '--json', '--limit', '2']))).sessions.map((s) => s.agent_id), ['c', 'b']);
    const table = ok(await p.run(['list'])).stdout.trimEnd().split('\n');
    assert.deepEqual(table.slice(1).map((line) => line.split(/\s+/)[0]), ['c', 'b', 'a']);
  });

  test('list: filters --active-only, --agent, --phase, --parent, --limit; an aligned table', async (t) => {
    const p = project(t);
    const now = Date.now();
    put(p, record('root', { agent_name: 'lead', last_updated: iso(now - 5 * MIN), purpose: 'The whole job' }));
    put(p, paused('kid-paused', 2 * MIN, { agent_name: 'worker-with-long-name', parent_session_id: 'root' }));
    put(p, paused('kid-expired', 40 * MIN, { agent_name: 'worker', parent_session_id: 'root' }));
    put(p, record('kid-exec', { agent_name: 'worker', phase: 'executing', parent_session_id: 'root', last_updated: iso(now - MIN) }));
    put(p, paused('other', 3 * MIN, { agent_name: 'solo' }));
    const ids = async (...args) => json(ok(await p.run(['list', '--json', ...args]))).sessions.map((s) => s.agent_id);
    assert.deepEqual(await ids(), ['kid-exec', 'kid-paused', 'other', 'root', 'kid-expired']);
    assert.deepEqual(await ids('--active-only'), ['kid-paused', 'other']);
    assert.deepEqual(await ids('--agent', 'worker'), ['kid-exec', 'kid-expired']);
    assert.deepEqual(await ids('--phase', 'approval'), ['kid-paused', 'other', 'kid-expired']);
    assert.deepEqual(await ids('--parent', 'root'), ['kid-exec', 'kid-paused', 'kid-expired']);
    assert.deepEqual(await ids('--parent', 'root', '--phase', 'approval', '--limit', '1'), ['kid-paused']);
    const summary = json(ok(await p.run(['list', '--json', '--agent', 'lead']))).sessions[0];
    assert.deepEqual([summary.agent_name, summary.purpose, summary.phase], ['lead', 'The whole job', 'initializing']);

    const lines = ok(await p.run(['list'])).stdout.trimEnd().split('\n');
    assert.equal(lines.length, 6);
    const header = lines[0];
    const starts = ['AGENT', 'PHASE', 'UPDATED'].map((h) => header.indexOf(h));
    assert.ok(starts.every((s, i) => s > 0 && (i === 0 || s > starts[i - 1])), header);
    for (const line of lines.slice(1)) {
      for (const start of starts) assert.match(line.slice(start - 2, start + 1), /^ {2}\S$/, `column at ${start} in "${line}"`);
    }
    assert.ok(lines.some((line) => line.includes('minutes ago')));
    assert.equal(ok(await p.run(['list', '--agent', 'nobody'])).stdout.trim().split('\n').length, 1);
    assert.deepEqual(json(ok(await p.run(['list', '--json', '--agent', 'nobody']))), { sessions: [], problems: [] });
  });

  test('list: a corrupt record is reported on stderr and in problems; the others are listed', async (t) => {
    const p = project(t);
    put(p, record('good-1'));
    put(p, record('good-2', { last_updated: iso(Date.now() - MIN) }));
    put(p, record('broken'), '{"agent_id": "broken", "agent_na');
    put(p, record('zoneless', { last_updated: '2026-11-22T10:00:00' }));
    const r = await p.run(['list', '--json']);
    assert.equal(r.code, 0);
    const listed = json(r);
    assert.deepEqual(listed.sessions.map((s) => s.agent_id), ['good-1', 'good-2']);
    assert.deepEqual(listed.problems.map((x) => [x.id, x.code, x.path]).sort(), [
      ['broken', 'ECORRUPT', p.file('broken')],
      ['zoneless', 'ECORRUPT', p.file('zoneless')],
    ]);
    const warnings = r.stderr.trimEnd().split('\n');
    assert.equal(warnings.length, 2);
    for (const line of warnings) assert.match(line, /^agent-session: skipped (broken|zoneless)\b/);
    const human = await p.run(['list']);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /good-1/);
    assert.match(human.stderr, /^agent-session: skipped /);
  });

  test('list: --limit 0, --phase bogus, a bad --parent or an unknown flag exit 2', async (t) => {
    const p = project(t);
    put(p, record('s'));
    const bad = [['list', '--limit', '0'], ['list', '--limit', '-1', '--json'], ['list', '--phase', 'bogus'], ['list', '--parent', '../x'], ['list', '--bogus-flag'], ['no-such-command']];
    for (const r of await Promise.all(bad.map((args) => p.run(args)))) fails(r, 2);
  });

  test('finalize: sets the outcome; same outcome twice is a no-op (0); a different one exits 3; a bad one 2', async (t) => {
    const p = project(t);
    put(p, paused('s', 0, { created_at: iso(Date.now() - 90_000) }));
    const before = p.read('s');
    fails(await p.run(['finalize', 's', 'done']), 2);
    fails(await p.run(['finalize', 's', 'executing', '--json']), 2);
    assert.equal(p.read('s'), before);
    const state = json(ok(await p.run(['finalize', 's', 'completed', '--summary', 'Merged', '--json'])));
    assert.deepEqual([state.phase, state.outcome, state.summary, state.resume_ready], ['completed', 'completed', 'Merged', false]);
    assert.equal(state.finalized_at, state.last_updated);
    assert.ok(state.duration_seconds >= 90 && state.duration_seconds < 150, `${state.duration_seconds}`);
    assert.deepEqual(state.history.at(-1), { from_phase: 'approval', to_phase: 'completed', timestamp: state.finalized_at, event: 'finalized' });
    assert.deepEqual(JSON.parse(p.read('s')), state);
    const after = p.read('s');
    const again = json(ok(await p.run(['finalize', 's', 'completed', '--json'])));
    assert.deepEqual(again, state);
    ok(await p.run(['finalize', 's', 'completed']));
    assert.equal(p.read('s'), after, 'a repeated finalize changes nothing');
    fails(await p.run(['finalize', 's', 'failed']), 3);
    assert.equal(p.read('s'), after);
    fails(await p.run(['finalize', 'nobody', 'failed']), 1);
    fails(await p.run(['finalize', '../x', 'failed']), 2);
  });

  test('cleanup: --dry-run changes nothing; then sessions older than --hours go, recent ones stay', async (t) => {
    const p = project(t);
    const now = Date.now();
    put(p, record('old-done', { phase: 'completed', outcome: 'completed', finalized_at: iso(now - 48 * HOUR), last_updated: iso(now - 48 * HOUR), created_at: iso(now - 49 * HOUR) }));
    put(p, paused('old-paused', 30 * HOUR, { created_at: iso(now - 31 * HOUR) }));
    put(p, record('recent', { last_updated: iso(now - 2 * MIN) }));
    put(p, paused('recent-paused', 5 * MIN));
    const snapshot = () => Object.fromEntries(sessionDirs(p).map((id) => [id, p.read(id)]));
    const before = snapshot();
    const dry = json(ok(await p.run(['cleanup', '--dry-run', '--json', '--hours', '24'])));
    assert.equal(dry.dry_run, true);
    assert.equal(dry.scanned, 4);
    assert.deepEqual([...dry.removed].sort(), ['old-done', 'old-paused']);
    assert.deepEqual(snapshot(), before);
    const report = json(ok(await p.run(['cleanup', '--json', '--hours', '24'])));
    assert.equal(report.dry_run, false);
    assert.deepEqual([...report.removed].sort(), ['old-done', 'old-paused']);
    assert.ok(Array.isArray(report.skipped));
    assert.deepEqual(sessionDirs(p), ['recent', 'recent-paused']);
    assert.equal(p.read('recent'), before.recent);
    // A smaller cutoff reaches the paused session once its resume window has passed too.
    put(p, paused('hour-old', 2 * HOUR));
    const plain = ok(await p.run(['cleanup', '--hours', '1']));
    assert.ok(!plain.stdout.trimStart().startsWith('{'));
    assert.deepEqual(sessionDirs(p), ['recent', 'recent-paused']);
    fails(await p.run(['cleanup', '--hours', '-1']), 2);
  });

  test('demo: exit 0 and the numbered steps', async (t) => {
    const r = ok(await runCli(['demo'], { cwd: tempDir(t), env: cleanEnv() }));
    const made = /^Project: (.+)$/m.exec(r.stdout)?.[1];
    if (made && path.resolve(made).startsWith(path.resolve(tmpdir()))) t.after(() => rmSync(made, { recursive: true, force: true }));
    const steps = r.stdout.split('\n').map((line) => /^(\d+)\. /.exec(line)?.[1]).filter(Boolean).map(Number);
    assert.deepEqual(steps, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.match(r.stdout, /should-resume-> true \(resumable\)/);
    assert.match(r.stdout, /-> false \(expired\)/);
    assert.match(r.stdout, /should-resume-> false \(finalized\)/);
  });

  test('errors: one stderr line without a stack trace; AGENT_SESSION_DEBUG=1 adds the stack', async (t) => {
    const p = project(t);
    fails(await p.run(['get', 'nobody']), 1);
    const debug = await p.run(['get', 'nobody'], { AGENT_SESSION_DEBUG: '1' });
    assert.equal(debug.code, 1);
    assert.match(debug.stderr, /^agent-session: /);
    assert.ok(debug.stderr.includes('\n    at '), debug.stderr);
  });

  test('exit 4: a corrupt state.json on get; should-resume answers corrupt', async (t) => {
    const p = project(t);
    const text = put(p, record('s'), '{"agent_id": "s", ');
    fails(await p.run(['get', 's', '--json']), 4);
    fails(await p.run(['show', 's']), 4);
    fails(await p.run(['update', 's', '--phase', 'planning']), 4);
    const r = await p.run(['should-resume', 's', '--json']);
    assert.equal(r.code, 1);
    assert.deepEqual([json(r).resume, json(r).reason], [false, 'corrupt']);
    assert.equal(p.read('s'), text, 'a corrupt record is never rewritten');
  });

  test('exit 4: a record with a newer schema_version is refused, never rewritten', async (t) => {
    const p = project(t);
    const text = put(p, paused('future-version', 0, { schema_version: 99, new_field: { x: 1 } }));
    fails(await p.run(['get', 'future-version']), 4);
    fails(await p.run(['update', 'future-version', '--phase', 'planning', '--json']), 4);
    fails(await p.run(['finalize', 'future-version', 'completed']), 4);
    assert.equal(p.read('future-version'), text);
  });

  test('exit 4: a lock held by another process times out (ELOCKED), never hangs, and the file is unchanged', async (t) => {
    const p = project(t);
    ok(await p.run(['create', '--agent', 'a', '--id', 's']));
    const before = p.read('s');
    const lockPath = path.join(p.store, '.locks', 's.lock');
    const holder = holdLock(t, lockPath);
    await holder.locked;
    const r = await p.run(['update', 's', '--phase', 'planning'], { AGENT_SESSION_LOCK_TIMEOUT_MS: '300' });
    fails(r, 4);
    assert.equal(p.read('s'), before);
    holder.kill();
  });
});

/** A child process holding proper-lockfile's lock on `lockPath` until killed; `locked` resolves once it holds it. */
function holdLock(t, lockPath) {
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))});
    const lockfile = require('proper-lockfile');
    const p = ${JSON.stringify(lockPath)};
    await lockfile.lock(p, { realpath: false, lockfilePath: p, stale: 60000 });
    process.stdout.write('locked\\n');
    setInterval(() => {}, 1 << 30);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const kill = () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL');
  t.after(kill);
  const locked = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      if (out.includes('locked\n')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
  });
  return { locked, kill };
}
