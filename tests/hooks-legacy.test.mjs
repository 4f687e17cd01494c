// Orchestrators call the hooks directly with the stdin format of gaia-ops v3.5.1's agent_session.py
// (no hook_event_name), with no command-line argument and outside Claude Code (no CLAUDECODE).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { project, readSession, sessionIds } from './helpers/hooks.mjs';
import { cleanEnv, cliJson, PRE_DELEGATE, runNode, SUBAGENT_STOP } from './helpers/run.mjs';

const ANSWER_KEYS = ['agent_id', 'original_context', 'reason', 'resume_metadata', 'should_resume'];

async function call(script, proj, input) {
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  const result = await runNode(script, [], {
    cwd: proj.dir,
    env: cleanEnv({ AGENT_SESSION_DIR: proj.store }),
    input: text,
  });
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

test('pre_delegate: no session yet creates one and says no_existing_session', async (t) => {
  const proj = project(t);
  const answer = await call(PRE_DELEGATE, proj, {
    agent_name: 'builder',
    task_id: 7,
    task_description: 'Build it',
    metadata: { pr: 1 },
  });
  assert.deepEqual(Object.keys(answer).sort(), ANSWER_KEYS);
  assert.deepEqual([answer.should_resume, answer.reason, answer.resume_metadata], [false, 'no_existing_session', null]);
  assert.deepEqual(sessionIds(proj.store), [answer.agent_id]);
  const record = readSession(proj.store, answer.agent_id);
  assert.deepEqual(
    [record.agent_name, record.purpose, record.metadata],
    ['builder', 'Build it', { pr: 1, task_id: '7' }],
  );
  assert.deepEqual(answer.original_context, {
    agent_name: 'builder',
    agent_id: null,
    task_id: '7',
    task_description: 'Build it',
    metadata: { pr: 1 },
  });
});

test('pre_delegate: an unknown agent_id is session_not_resumable (not_found), as agent_session.py said', async (t) => {
  const proj = project(t);
  const named = await call(PRE_DELEGATE, proj, { agent_name: 'builder', agent_id: 'my-build-1' });
  assert.deepEqual(Object.keys(named).sort(), [...ANSWER_KEYS, 'detail'].sort());
  assert.deepEqual(
    [named.should_resume, named.reason, named.agent_id, named.resume_metadata],
    [false, 'session_not_resumable', 'my-build-1', null],
  );
  assert.match(named.detail, /^not_found: /);
  assert.equal(named.original_context.agent_id, 'my-build-1');
  // The session is created under that id, so the orchestrator can finalize it later.
  assert.deepEqual(sessionIds(proj.store), ['my-build-1']);
  const done = await call(SUBAGENT_STOP, proj, { agent_id: 'my-build-1', exit_code: 0 });
  assert.equal(done.reason, 'finalized');
});

test('pre_delegate: a paused session is session_resumable with its metadata; a final one is not', async (t) => {
  const proj = project(t);
  const created = await cliJson(proj.store, ['create', '--agent', 'builder', '--metadata', '{"step":2}']);
  await cliJson(proj.store, ['update', created.agent_id, '--phase', 'approval']);
  const yes = await call(PRE_DELEGATE, proj, { agent_name: 'builder', agent_id: created.agent_id });
  assert.deepEqual(Object.keys(yes).sort(), ANSWER_KEYS);
  assert.deepEqual([yes.should_resume, yes.reason, yes.agent_id], [true, 'session_resumable', created.agent_id]);
  const record = readSession(proj.store, created.agent_id);
  assert.deepEqual(yes.resume_metadata, {
    previous_phase: 'approval',
    created_at: record.created_at,
    last_updated: record.last_updated,
    history: record.history,
    session_metadata: { step: 2 },
  });

  await cliJson(proj.store, ['finalize', created.agent_id, 'completed']);
  const no = await call(PRE_DELEGATE, proj, { agent_name: 'builder', agent_id: created.agent_id });
  assert.deepEqual(
    [no.should_resume, no.reason, no.resume_metadata.previous_phase],
    [false, 'session_not_resumable', 'completed'],
  );
  assert.match(no.detail, /^finalized: /);
});

test('pre_delegate: invalid JSON and invalid input get invalid_json and error answers', async (t) => {
  const proj = project(t);
  const bad = await call(PRE_DELEGATE, proj, '{not json');
  assert.deepEqual([bad.should_resume, bad.reason, bad.agent_id], [false, 'invalid_json', null]);
  for (const input of [
    { agent_name: 'x', agent_id: '../escape' },
    { agent_id: 'no-name' },
    { agent_name: 'x', metadata: [1] },
  ]) {
    const answer = await call(PRE_DELEGATE, proj, input);
    assert.deepEqual([answer.should_resume, answer.reason], [false, 'error'], JSON.stringify(input));
  }
  assert.deepEqual(sessionIds(proj.store), []);
});

test('subagent_stop: exit code 0 completes, anything else fails, outcome wins, repeats are idempotent', async (t) => {
  const proj = project(t);
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await cliJson(proj.store, ['create', '--agent', 'builder'])).agent_id);
  const done = await call(SUBAGENT_STOP, proj, { agent_id: ids[0], exit_code: 0, summary: 'built' });
  assert.deepEqual(done, { agent_id: ids[0], finalized: true, outcome: 'completed', reason: 'finalized' });
  assert.equal(readSession(proj.store, ids[0]).summary, 'built');
  assert.equal((await call(SUBAGENT_STOP, proj, { agent_id: ids[1], exit_code: 3 })).outcome, 'failed');
  assert.equal((await call(SUBAGENT_STOP, proj, { agent_id: ids[2], outcome: 'abandoned' })).outcome, 'abandoned');
  assert.deepEqual(
    ids.map((id) => readSession(proj.store, id).phase),
    ['completed', 'failed', 'abandoned'],
  );

  assert.equal(
    (await call(SUBAGENT_STOP, proj, { agent_id: ids[0], exit_code: 0 })).finalized,
    true,
    'same outcome again',
  );
  const clash = await call(SUBAGENT_STOP, proj, { agent_id: ids[0], exit_code: 1 });
  assert.deepEqual([clash.finalized, clash.reason, clash.outcome], [false, 'already_final', 'completed']);
  assert.equal((await call(SUBAGENT_STOP, proj, { agent_id: 'nobody', exit_code: 0 })).reason, 'not_found');
  assert.equal((await call(SUBAGENT_STOP, proj, '')).reason, 'invalid_json');
  assert.equal((await call(SUBAGENT_STOP, proj, { agent_id: ids[1] })).reason, 'error');
  assert.equal((await call(SUBAGENT_STOP, proj, { agent_id: '../x', exit_code: 0 })).reason, 'error');
});
