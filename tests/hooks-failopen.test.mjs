// The hooks fail open: whatever goes wrong, exit 0 with nothing on stdout (Claude Code proceeds as if
// the hook were absent) and one line in <store>/.hooks.log. SubagentStop never blocks (exit 2).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fixture, flow, hookLog, life, onlySession, pre, project, sessionIds } from './helpers/hooks.mjs';
import { holdLock } from './helpers/locks.mjs';
import { until } from './helpers/poll.mjs';
import { DIST, tempDir } from './helpers/run.mjs';

const HOOKS = { pre, life };

function assertSilent(result, what) {
  assert.equal(result.code, 0, `${what}: exit code (stderr: ${result.stderr})`);
  assert.equal(result.stdout, '', `${what}: stdout`);
}

const BAD_INPUTS = [
  ['malformed JSON', '{"hook_event_name": "PreToolUse", '],
  ['empty stdin', ''],
  ['a JSON array', '[1, 2]'],
  ['tool_input of the wrong type', { ...fixture('pretooluse-task'), tool_input: 'Agent please' }],
  ['a numeric session_id', { ...fixture('pretooluse-task'), session_id: 42 }],
  ['a prompt of the wrong type', { ...fixture('pretooluse-task'), tool_input: { description: 'x', prompt: ['a'] } }],
  ['a hostile session_id', { ...fixture('pretooluse-task'), session_id: '../../outside' }],
  ['a hostile tool_use_id', { ...fixture('pretooluse-task'), tool_use_id: 'toolu/../../x' }],
  ['a hostile caller agent_id', { ...fixture('pretooluse-task'), agent_id: '../x', agent_type: 'general-purpose' }],
  ['a hostile agent_id on SubagentStart', { ...fixture('subagentstart'), agent_id: '../x' }],
  ['a hostile agent_id on SubagentStop', { ...fixture('subagentstop'), agent_id: '../../x' }],
  ['a last_assistant_message of the wrong type', { ...fixture('subagentstop'), last_assistant_message: 5 }],
  ['a hostile agentId on PostToolUse', { ...fixture('posttooluse-task'), tool_response: { agentId: '/etc/passwd' } }],
  ['a hook_event_name of the wrong type', { ...fixture('subagentstop'), hook_event_name: 7 }],
];

test('invalid payloads: exit 0, no output, one log line, nothing written outside the store', async (t) => {
  const cases = BAD_INPUTS.flatMap(([what, payload]) =>
    ['pre', 'life'].map((name) => ({ what, payload, name, proj: project(t) })),
  );
  // Independent projects: run a few at a time to keep the file quick.
  const results = [];
  for (let i = 0; i < cases.length; i += 4) {
    results.push(...(await Promise.all(cases.slice(i, i + 4).map((c) => HOOKS[c.name](c.proj, c.payload)))));
  }
  for (const [i, { what, payload, name, proj }] of cases.entries()) {
    const result = results[i];
    assertSilent(result, `${name} with ${what}`);
    assert.deepEqual(sessionIds(proj.store), [], `${name} with ${what}: no session`);
    // Nothing next to the store (a hostile id would have made a path outside it).
    assert.deepEqual(readdirSync(proj.dir), ['.claude'], `${name} with ${what}`);
    assert.deepEqual(
      readdirSync(path.join(proj.dir, '.claude')).filter((n) => n !== 'session'),
      [],
      `${name} with ${what}`,
    );
    // Events a hook does not handle are ignored without a log line; everything else logs EINVALID once.
    const event = typeof payload === 'string' ? undefined : payload.hook_event_name;
    const handled = typeof event !== 'string' || (name === 'pre') === (event === 'PreToolUse');
    const lines = hookLog(proj.store).split('\n').filter(Boolean);
    assert.equal(lines.length, handled ? 1 : 0, `${name} with ${what}: ${lines}`);
    if (handled)
      assert.match(lines[0], /^\S+ (pre_delegate|subagent_stop) \S+ pid=\d+ EINVALID: .+$/, `${name} with ${what}`);
  }
});

test('stdin over the 16 MiB cap is not parsed; a long prompt or last message under it is', async (t) => {
  const proj = project(t);
  const huge = JSON.stringify({
    ...fixture('pretooluse-task'),
    tool_input: { description: 'x', prompt: 'p'.repeat(16 * 1024 * 1024) },
  });
  for (const run of [pre, life]) assertSilent(await run(proj, huge), 'oversized');
  assert.deepEqual(sessionIds(proj.store), []);
  assert.equal(hookLog(proj.store).match(/over the 16777216-byte cap/g).length, 2);

  // A delegation with a 2 MiB prompt whose agent ends with a 2 MiB report: created, bound and finalized.
  const long = 'r'.repeat(2 * 1024 * 1024);
  const f = flow({ prompt: long });
  assert.equal((await pre(proj, f.pre)).code, 0);
  await life(proj, f.post);
  await life(proj, f.start);
  await life(proj, f.stop(`${long}\nAll done.`));
  const s = onlySession(proj.store);
  assert.equal(s.phase, 'completed');
  assert.ok(s.summary.startsWith('rrrr'), s.summary.slice(0, 20));
});

test('a store that is a file, a broken config file, a corrupt index or record: fail open', async (t) => {
  const proj = project(t);
  const file = path.join(proj.dir, 'not-a-dir');
  writeFileSync(file, 'x');
  for (const run of [pre, life])
    assertSilent(await run(proj, flow().pre, { AGENT_SESSION_DIR: file }), 'store is a file');
  for (const run of [pre, life])
    assertSilent(await run(proj, flow().start, { AGENT_SESSION_DIR: file }), 'store is a file');
  assert.equal(readFileSync(file, 'utf8'), 'x');

  writeFileSync(path.join(proj.dir, '.claude', 'agent-session.json'), '{ not json');
  assertSilent(await pre(proj, flow().pre), 'broken config');
  assert.match(hookLog(proj.store), /pre_delegate PreToolUse pid=\d+ EINVALID: config file/);
  writeFileSync(path.join(proj.dir, '.claude', 'agent-session.json'), '{"resume_policy": "sometimes"}');
  assertSilent(await pre(proj, flow().pre), 'invalid setting');

  writeFileSync(path.join(proj.dir, '.claude', 'agent-session.json'), '{}');
  const f = flow();
  assert.equal((await pre(proj, f.pre)).json.hookSpecificOutput.permissionDecision, undefined);
  const id = onlySession(proj.store).agent_id;
  writeFileSync(path.join(proj.store, id, 'state.json'), '{"half": ');
  assertSilent(await life(proj, f.start), 'corrupt record');
  assert.match(hookLog(proj.store), new RegExp(`subagent_stop SubagentStart pid=\\d+ ECORRUPT: session ${id}`));
  // A corrupt candidate is skipped: the next delegation of that type still gets a new session.
  const next = await pre(proj, flow({ toolUseId: 'toolu_2' }).pre);
  assert.equal(next.json.hookSpecificOutput.permissionDecision, undefined);
  assert.equal(sessionIds(proj.store).length, 2);

  writeFileSync(path.join(proj.store, '.claude-code', 'sess-1.json'), 'garbage');
  assertSilent(await pre(proj, flow({ toolUseId: 'toolu_3' }).pre), 'corrupt index');
  assertSilent(await life(proj, f.stop('done')), 'corrupt index');
  assert.match(hookLog(proj.store), /ECORRUPT: .*sess-1\.json is not valid JSON/);
});

/** Holds the lock of a Claude Code session's index from another process. */
function holdIndexLock(t, store, claudeSession) {
  return holdLock(t, path.join(store, '.claude-code', '.locks', `${claudeSession}.lock`));
}

test('lock contention: a hook that cannot get the lock in time fails open with ELOCKED', async (t) => {
  const proj = project(t);
  const f = flow();
  await pre(proj, f.pre);
  const { release } = await holdIndexLock(t, proj.store, 'sess-1');
  try {
    const env = { AGENT_SESSION_LOCK_TIMEOUT_MS: '200' };
    assertSilent(await pre(proj, flow({ toolUseId: 'toolu_2' }).pre, env), 'locked pre_delegate');
    assertSilent(await life(proj, f.start, env), 'locked subagent_stop');
  } finally {
    await release();
  }
  assert.equal(hookLog(proj.store).match(/ELOCKED/g).length, 2);
  assert.equal(sessionIds(proj.store).length, 1);
  assert.equal(onlySession(proj.store).phase, 'initializing');
});

test(
  'a hook waiting for a session lock keeps the conversation ' + 'lock it holds fresh (no refresh timers in the hooks)',
  async (t) => {
    const proj = project(t);
    const f = flow();
    await pre(proj, f.pre);
    const id = onlySession(proj.store).agent_id;
    const { release } = await holdLock(t, path.join(proj.store, '.locks', `${id}.lock`));
    let released = false;
    try {
      // SubagentStart takes the conversation's lock, then waits for the session's.
      const started = life(proj, f.start);
      const conversationLock = path.join(proj.store, '.claude-code', '.locks', 'sess-1.lock');
      const takenAt = await until(
        () => existsSync(conversationLock) && statSync(conversationLock).mtimeMs,
        'the hook holds the conversation lock',
      );
      // Past the 2 s after which an untouched lock is anybody's, it must have been touched.
      await until(() => Date.now() - takenAt > 2500, '2.5 s of waiting');
      const age = Date.now() - statSync(conversationLock).mtimeMs;
      assert.ok(age < 2000, `the conversation lock was last touched ${age} ms ago`);
      await release();
      released = true;
      assertSilent(await started, 'subagent_stop after waiting');
    } finally {
      if (!released) await release();
    }
    assert.equal(hookLog(proj.store), '');
    assert.equal(onlySession(proj.store).phase, 'executing');
  },
);

test('AGENT_SESSION_DISABLE=1 exits at once; AGENT_SESSION_DEBUG=1 explains on stderr only', async (t) => {
  const proj = project(t);
  for (const run of [pre, life]) assertSilent(await run(proj, flow().pre, { AGENT_SESSION_DISABLE: '1' }), 'disabled');
  assert.equal(existsSync(proj.store), false);

  const debug = await pre(proj, flow().pre, { AGENT_SESSION_DEBUG: '1' });
  assert.equal(debug.json.hookSpecificOutput.permissionDecision, undefined);
  assert.match(debug.stderr, /^agent-session pre_delegate: toolu_1 \(general-purpose\): created session agent-/);
  const failing = await life(proj, '{oops', { AGENT_SESSION_DEBUG: '1' });
  assertSilent(failing, 'debug failure');
  assert.match(failing.stderr, /agent-session subagent_stop: failing open: EINVALID: stdin is not valid JSON/);
});

test('the hook log is bounded: past 256 KiB it moves to .hooks.log.1', async (t) => {
  const proj = project(t);
  mkdirSync(proj.store, { recursive: true });
  writeFileSync(path.join(proj.store, '.hooks.log'), 'old line\n'.repeat(30_000));
  assertSilent(await life(proj, '{oops'), 'bad payload');
  assert.ok(statSync(path.join(proj.store, '.hooks.log.1')).size > 256 * 1024);
  assert.equal(hookLog(proj.store).split('\n').filter(Boolean).length, 1);
});

test('the sweep marks long-silent hook sessions abandoned and runs detached at most once per interval', async (t) => {
  const proj = project(t);
  const { Sessions } = await import(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href);
  const past = Date.now() - 10 * 3_600_000;
  const old = Sessions.open({ dir: proj.store, now: () => past });
  const stale = await old.create({ agentName: 'general-purpose', claude: { session_id: 'old', agent_id: 'a0' } });
  await old.update(stale.agent_id, { phase: 'executing' });
  const plain = await old.create({ agentName: 'script' });
  await old.update(plain.agent_id, { phase: 'executing' });

  // A stamp one interval old: the next stop that touches the store claims the sweep and starts it detached.
  const f = flow();
  await pre(proj, f.pre);
  await life(proj, f.post);
  const stamp = path.join(proj.store, '.claude-code', 'last-sweep');
  writeFileSync(stamp, 'x');
  const hourAgo = (Date.now() - 3_600_000 - 1000) / 1000;
  const { utimesSync } = await import('node:fs');
  utimesSync(stamp, hourAgo, hourAgo);
  const env = { AGENT_SESSION_SWEEP_INTERVAL_MINUTES: '60' };
  assertSilent(await life(proj, f.start, env), 'start');
  assert.ok(Date.now() - statSync(stamp).mtimeMs < 60_000, 'the stamp was renewed');
  // The detached sweep writes its report when it is done; wait for that (bounded) before looking.
  const report = path.join(proj.store, '.claude-code', 'last-sweep.json');
  await until(() => existsSync(report), "the sweep's report", { timeoutMs: 20_000, intervalMs: 100 });
  assert.deepEqual(JSON.parse(readFileSync(report, 'utf8')).abandoned, [stale.agent_id]);
  const phaseOf = (id) => JSON.parse(readFileSync(path.join(proj.store, id, 'state.json'), 'utf8')).phase;
  assert.equal(phaseOf(stale.agent_id), 'abandoned');
  assert.equal(phaseOf(plain.agent_id), 'executing', 'only sessions the hooks created are judged by the hook sweep');
  // Within the interval, a stop does not claim it again.
  const mtime = statSync(stamp).mtimeMs;
  assertSilent(await life(proj, f.stop('done'), env), 'stop');
  assert.equal(statSync(stamp).mtimeMs, mtime);
  assert.equal(onlySessionOf(proj, 'general-purpose', stale.agent_id).phase, 'completed');
});

function onlySessionOf(proj, agentName, except) {
  const ids = sessionIds(proj.store).filter((id) => id !== except);
  const records = ids
    .map((id) => JSON.parse(readFileSync(path.join(proj.store, id, 'state.json'), 'utf8')))
    .filter((r) => r.agent_name === agentName);
  assert.equal(records.length, 1);
  return records[0];
}

test('the sweep can be run by hand: --sweep prints its report', async (t) => {
  const dir = tempDir(t);
  const store = path.join(dir, 'store');
  const { Sessions } = await import(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href);
  const old = Sessions.open({ dir: store, now: () => Date.now() - 5 * 3_600_000 });
  const s = await old.create({ agentName: 'general-purpose', claude: { session_id: 'old' } });
  const { runNode, cleanEnv, SUBAGENT_STOP } = await import('./helpers/run.mjs');
  const result = await runNode(SUBAGENT_STOP, ['--sweep'], { cwd: dir, env: cleanEnv({ AGENT_SESSION_DIR: store }) });
  assert.equal(result.code, 0, result.stderr);
  const report = JSON.parse(result.stdout);
  assert.deepEqual(report.abandoned, [s.agent_id]);
  const withLongerLimit = await runNode(SUBAGENT_STOP, ['--sweep'], {
    cwd: dir,
    env: cleanEnv({ AGENT_SESSION_DIR: store, AGENT_SESSION_ABANDON_AFTER_HOURS: '6' }),
  });
  assert.deepEqual(JSON.parse(withLongerLimit.stdout).abandoned, []);
});
