// A probe of the REAL Claude Code CLI (pinned in install-claude.mjs), not a test of our code: a
// throw-away logging hook and the mock API show which hook events the CLI fires and what the model
// sees. It is outside `npm test`; run it by hand after changing the pinned version, and update
// NOTES.md with what it finds: node --test tests/e2e/probe.mjs
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureClaude } from './install-claude.mjs';
import { hookGroup, makeProject, runClaude, writeLoggingHook } from './harness.mjs';
import {
  agentIdInText,
  isSubagent,
  isTaskNotification,
  lastToolResult,
  lastUserText,
  startMockApi,
  toolUseFor,
} from './mock-api.mjs';

const SUB_TEXT = 'E2E-SUB: first report.';
const SUB_TEXT_2 = 'E2E-SUB: second report.';
const MAIN_FINAL = 'E2E-MAIN: all done.';
const DENY_REASON = 'E2E-DENY: delegation blocked by hook';
const CONTINUE_MARKER = 'E2E-CONTINUE';

const agentCall = {
  name: 'Agent',
  input: {
    description: 'E2E delegated task',
    prompt: 'E2E-SUBAGENT please reply with one short sentence',
    subagent_type: 'general-purpose',
    run_in_background: false,
  },
};

const sendMessageCall = (to) => ({
  name: 'SendMessage',
  input: { to, message: `${CONTINUE_MARKER}: say it again`, summary: 'E2E continue recap' },
});

// Each test: a temp project whose hooks all log to one file, a mock API and the real CLI.
async function setup(t, { hookStdout } = {}) {
  const project = makeProject();
  t.after(() => project.cleanup());
  const log = writeLoggingHook(project.root, { stdout: hookStdout });
  project.writeSettings({
    hooks: {
      PreToolUse: [hookGroup(log.command, { matcher: 'Agent|Task|SendMessage' })],
      PostToolUse: [hookGroup(log.command, { matcher: 'Agent|Task|SendMessage' })],
      SubagentStart: [hookGroup(log.command)],
      SubagentStop: [hookGroup(log.command)],
    },
  });
  return { project, log };
}

async function run(t, project, script, extra = {}) {
  const api = await startMockApi({ script });
  t.after(() => api.close());
  const result = await runClaude({
    projectDir: project.dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E prompt',
    timeoutMs: 90_000,
    ...extra,
  });
  const detail =
    `code=${result.code} timedOut=${result.timedOut}\n` + `stderr:\n${result.stderr}\nstdout:\n${result.stdout}`;
  assert.deepEqual(api.scriptErrors(), [], 'mock script threw');
  assert.equal(result.code, 0, detail);
  return { api, result };
}

const events = (log, name, tool) =>
  log.read().filter((e) => e.hook_event_name === name && (tool === undefined || e.tool_name === tool));

const only = (list, what) => {
  assert.equal(list.length, 1, `expected exactly one ${what}, got ${JSON.stringify(list, null, 2)}`);
  return list[0];
};

// Main: Agent -> (tool_result) -> final text. Subagent: text.
function delegateOnce(req) {
  if (isSubagent(req)) return { text: SUB_TEXT };
  return lastToolResult(req) ? { text: MAIN_FINAL } : { toolUse: agentCall };
}

// Main: Agent -> SendMessage to the agent id from the tool_result -> text; then the
// continued agent (runs in background) reports back via <task-notification> -> final text.
function delegateThenContinue(req) {
  if (isSubagent(req)) return { text: lastUserText(req).includes(CONTINUE_MARKER) ? SUB_TEXT_2 : SUB_TEXT };
  if (isTaskNotification(req)) return { text: MAIN_FINAL };
  const result = lastToolResult(req);
  if (!result) return { toolUse: agentCall };
  if (toolUseFor(req, result)?.name === 'Agent') return { toolUse: sendMessageCall(agentIdInText(result.text)) };
  return { text: 'E2E-MAIN: waiting for the continued agent.' };
}

before(
  async () => {
    // Fails (does not skip) when the CLI cannot be installed.
    await ensureClaude();
  },
  { timeout: 10 * 60_000 },
);

test(
  'foreground Agent delegation fires PreToolUse, SubagentStart/Stop and PostToolUse',
  { timeout: 120_000 },
  async (t) => {
    const { project, log } = await setup(t);
    const { api, result } = await run(t, project, delegateOnce);

    assert.equal(result.json?.result, MAIN_FINAL);
    const pre = only(events(log, 'PreToolUse', 'Agent'), 'PreToolUse(Agent)');
    assert.deepEqual(pre.tool_input, agentCall.input);
    const start = only(events(log, 'SubagentStart'), 'SubagentStart');
    assert.match(start.agent_id, /^a[0-9a-f]+$/);
    const stop = only(events(log, 'SubagentStop'), 'SubagentStop');
    assert.equal(stop.agent_id, start.agent_id);
    assert.equal(stop.last_assistant_message, SUB_TEXT);
    const post = only(events(log, 'PostToolUse', 'Agent'), 'PostToolUse(Agent)');
    assert.equal(post.tool_response.agentId, start.agent_id);
    assert.equal(post.tool_response.status, 'completed');
    assert.equal(post.tool_use_id, pre.tool_use_id);

    // What the model sees: the subagent's requests carry its id; the tool_result names it.
    assert.ok(api.requests.some((r) => r.kind === 'subagent' && r.agentId === start.agent_id));
    const back = api.requests
      .filter((r) => r.kind === 'main')
      .map(lastToolResult)
      .find(Boolean);
    assert.equal(agentIdInText(back.text), start.agent_id);
    assert.ok(back.text.includes(SUB_TEXT));
  },
);

test(
  'SendMessage continues the same agent: second SubagentStart/Stop with the same agent_id',
  { timeout: 120_000 },
  async (t) => {
    const { project, log } = await setup(t);
    const { result } = await run(t, project, delegateThenContinue);

    assert.equal(result.json?.result, MAIN_FINAL);
    const agentId = only(events(log, 'PostToolUse', 'Agent'), 'PostToolUse(Agent)').tool_response.agentId;
    const sent = only(events(log, 'PostToolUse', 'SendMessage'), 'PostToolUse(SendMessage)');
    assert.equal(sent.tool_input.to, agentId);
    assert.equal(sent.tool_response.success, true);
    assert.equal(sent.tool_response.resumedAgentId, agentId);

    const starts = events(log, 'SubagentStart');
    const stops = events(log, 'SubagentStop');
    assert.deepEqual(
      starts.map((e) => e.agent_id),
      [agentId, agentId],
    );
    assert.deepEqual(
      stops.map((e) => e.agent_id),
      [agentId, agentId],
    );
    assert.deepEqual(
      stops.map((e) => e.last_assistant_message),
      [SUB_TEXT, SUB_TEXT_2],
    );
  },
);

test(
  'a PreToolUse deny reaches the model as an is_error tool_result with the reason',
  { timeout: 120_000 },
  async (t) => {
    const deny = {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: DENY_REASON,
      },
    };
    const { project, log } = await setup(t, { hookStdout: JSON.stringify(deny) });
    const { api } = await run(t, project, delegateOnce);

    const denied = api.requests
      .filter((r) => r.kind === 'main')
      .map(lastToolResult)
      .find(Boolean);
    assert.equal(denied.isError, true);
    assert.equal(denied.text, `PreToolUse:Agent hook error: ${DENY_REASON}`);
    assert.equal(api.requests.filter((r) => r.kind === 'subagent').length, 0);
    assert.equal(events(log, 'SubagentStart').length, 0);
    assert.equal(events(log, 'PostToolUse', 'Agent').length, 0);
  },
);

test(
  "claude --resume <session> in a second run can SendMessage to the first run's agent",
  { timeout: 180_000 },
  async (t) => {
    const { project, log } = await setup(t);
    const first = await run(t, project, delegateOnce);
    const sessionId = first.result.json?.session_id;
    assert.ok(sessionId, 'first run printed no session_id');
    const agentId = only(events(log, 'SubagentStart'), 'SubagentStart').agent_id;

    // Second run, same HOME/TMPDIR/project: the main agent continues the old agent.
    const resumed = (req) => {
      if (isSubagent(req)) return { text: SUB_TEXT_2 };
      if (isTaskNotification(req) || lastToolResult(req)) return { text: MAIN_FINAL };
      return { toolUse: sendMessageCall(agentId) };
    };
    await run(t, project, resumed, { args: ['--resume', sessionId], prompt: 'E2E continue' });

    const sent = only(events(log, 'PostToolUse', 'SendMessage'), 'PostToolUse(SendMessage)');
    assert.equal(sent.tool_response.success, true, JSON.stringify(sent.tool_response));
    assert.equal(sent.session_id, sessionId);
    const starts = events(log, 'SubagentStart');
    assert.deepEqual(
      starts.map((e) => e.agent_id),
      [agentId, agentId],
    );
    assert.equal(events(log, 'SubagentStop').at(-1).last_assistant_message, SUB_TEXT_2);
  },
);
