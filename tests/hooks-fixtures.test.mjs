// Every copied Claude Code payload (tests/fixtures/claude/) through the built hooks, in the order the
// real CLI sent them, with assertions on stdout, the exit code and the store.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { CLAUDE_FIXTURES, fixture, life, onlySession, pre, project, sessionIds } from './helpers/hooks.mjs';

const PAYLOADS = readdirSync(CLAUDE_FIXTURES).filter((f) => f.endsWith('.json') && f !== 'index.json');
const covered = new Set();
const use = (name) => (covered.add(`${name}.json`), fixture(name));

function assertAllowWithFooter(result, payload) {
  assert.equal(result.code, 0);
  const out = result.json.hookSpecificOutput;
  assert.equal(out.hookEventName, 'PreToolUse');
  // No permission decision: the rewrite alone is applied, and the user's permission rules still hold.
  assert.equal(out.permissionDecision, undefined);
  assert.ok(out.updatedInput);
  const { prompt, ...rest } = out.updatedInput;
  const { prompt: original, ...originalRest } = payload.tool_input;
  // Every other input field unchanged, none added (the tool refuses unknown keys).
  assert.deepEqual(rest, originalRest);
  assert.ok(prompt.startsWith(original), prompt);
  return prompt;
}

test('foreground run: PreToolUse, SubagentStart, the subagent tool calls, SubagentStop, PostToolUse', async (t) => {
  const proj = project(t);
  const preTask = use('pretooluse-task');
  const first = await pre(proj, preTask);
  const prompt = assertAllowWithFooter(first, preTask);
  let session = onlySession(proj.store);
  assert.match(prompt, new RegExp(`${session.agent_id}[\\s\\S]*session-phase: <phase>`));
  assert.equal(session.phase, 'initializing');
  assert.equal(session.agent_name, 'general-purpose');
  assert.equal(session.purpose, 'E2E delegated task');
  assert.equal(session.claude.session_id, preTask.session_id);
  assert.equal(session.claude.tool_use_id, preTask.tool_use_id);
  assert.equal(session.claude.cwd, '/home/dev/project');
  assert.equal(session.claude.transcript_path, preTask.transcript_path);

  const start = await life(proj, use('subagentstart'));
  assert.deepEqual([start.code, start.stdout], [0, '']);
  session = onlySession(proj.store);
  assert.equal(session.phase, 'executing');
  assert.equal(session.claude.agent_id, 'aee3f22647281eb0a');

  // The subagent's own tool calls carry its agent_id: neither hook acts on them.
  for (const [run, name] of [
    [pre, 'pretooluse-in-subagent'],
    [life, 'posttooluse-in-subagent'],
  ]) {
    const r = await run(proj, use(name));
    assert.deepEqual([r.code, r.stdout], [0, ''], name);
  }
  assert.deepEqual(sessionIds(proj.store), [session.agent_id]);

  const stop = await life(proj, use('subagentstop'));
  assert.deepEqual([stop.code, stop.stdout], [0, '']);
  const post = await life(proj, use('posttooluse-task'));
  assert.deepEqual([post.code, post.stdout], [0, '']);
  session = onlySession(proj.store);
  assert.equal(session.phase, 'completed');
  assert.equal(session.summary, 'E2E-FINAL-SUB: subagent did the task.');
  assert.deepEqual(session.claude.agent_ids, ['aee3f22647281eb0a']);
  assert.match(session.claude.agent_transcript_path, /subagents\/agent-aee3f22647281eb0a\.jsonl$/);
  assert.deepEqual(
    session.history.map((h) => h.event),
    ['started', 'finalized'],
  );
});

test('background run: PostToolUse (async_launched) joins before SubagentStop', async (t) => {
  const proj = project(t);
  const preTask = use('pretooluse-task-background');
  assertAllowWithFooter(await pre(proj, preTask), preTask);
  const post = await life(proj, use('posttooluse-task-background'));
  assert.deepEqual([post.code, post.stdout], [0, '']);
  assert.equal(onlySession(proj.store).claude.agent_id, 'a164ceb37ef770c29');
  const stop = await life(proj, use('subagentstop-background'));
  assert.deepEqual([stop.code, stop.stdout], [0, '']);
  const session = onlySession(proj.store);
  assert.equal(session.phase, 'completed');
  assert.equal(session.summary, 'E2E-FINAL-SUB: subagent did the task.');
});

test('a delegation whose resume key Claude Code stripped is a plain new delegation', async (t) => {
  const proj = project(t);
  const payload = use('pretooluse-task-resume-stripped');
  assertAllowWithFooter(await pre(proj, payload), payload);
  assert.equal(onlySession(proj.store).claude.tool_use_id, 'toolu_e2emwrwfbbg5f21fd076');
});

test('SendMessage payloads and continuations of agents we never saw change nothing', async (t) => {
  const proj = project(t);
  for (const [run, name] of [
    [pre, 'pretooluse-sendmessage'],
    [life, 'posttooluse-sendmessage'],
    [life, 'posttooluse-sendmessage-resumed-session'],
    [life, 'posttooluse-sendmessage-unknown-agent'],
    [life, 'subagentstart-continued'],
    [life, 'subagentstart-resumed-session'],
    [life, 'subagentstop-continued'],
    [life, 'posttooluse-task-after-updatedinput'],
  ]) {
    const r = await run(proj, use(name));
    assert.deepEqual([r.code, r.stdout], [0, ''], name);
  }
  assert.equal(existsSync(proj.store), false, 'nothing was written');
});

test('a PostToolUse after our own updatedInput joins the rewritten spawn', async (t) => {
  const proj = project(t);
  const post = use('posttooluse-task-after-updatedinput');
  const payload = fixture('pretooluse-task', {
    session_id: post.session_id,
    tool_use_id: post.tool_use_id,
    tool_input: { ...post.tool_input, prompt: 'E2E-SUBAGENT-MARKER' },
  });
  assertAllowWithFooter(await pre(proj, payload), payload);
  await life(proj, post);
  assert.equal(onlySession(proj.store).claude.agent_id, 'ae400c43bbcfe6e3a');
});

test(
  'our PreToolUse output uses the keys Claude Code honoured, ' + 'and a deny matches the tool error it sends',
  async (t) => {
    const honoured = use('pretooluse-updatedinput-hook-output').hookSpecificOutput;
    const proj = project(t);
    const out = (await pre(proj, fixture('pretooluse-task'))).json.hookSpecificOutput;
    assert.deepEqual(Object.keys(out).sort(), ['hookEventName', 'updatedInput']);
    assert.ok(Object.keys(out).every((key) => key in honoured));
    assert.deepEqual(
      Object.keys(out.updatedInput)
        .filter((k) => k !== 'resume')
        .sort(),
      Object.keys(honoured.updatedInput)
        .filter((k) => k !== 'resume')
        .sort(),
    );
    // What the model receives after a deny: "PreToolUse:Agent hook error: <our reason>".
    assert.match(use('tool-result-after-pretooluse-deny').content, /^PreToolUse:Agent hook error: /);
  },
);

test('SessionStart (startup, resume): nothing when nothing is paused, else the paused sessions', async (t) => {
  const proj = project(t);
  for (const name of ['sessionstart', 'sessionstart-resume']) {
    const r = await life(proj, use(name));
    assert.deepEqual([r.code, r.stdout], [0, ''], name);
  }
  const preTask = use('pretooluse-task');
  await pre(proj, preTask);
  await life(proj, use('subagentstart'));
  await life(proj, fixture('subagentstop', { last_assistant_message: 'Which schema?\nsession-phase: approval' }));
  const id = onlySession(proj.store).agent_id;
  for (const name of ['sessionstart', 'sessionstart-resume']) {
    const out = (await life(proj, fixture(name))).json.hookSpecificOutput;
    assert.equal(out.hookEventName, 'SessionStart');
    assert.match(out.additionalContext, new RegExp(`${id} \\(general-purpose "E2E delegated task"\\): approval`));
  }
});

test('every copied fixture is used by a test above', () => {
  assert.deepEqual(
    PAYLOADS.filter((f) => !covered.has(f)),
    [],
  );
});
