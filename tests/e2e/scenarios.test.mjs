// End-to-end scenarios with the REAL Claude Code CLI (pinned in
// install-claude.mjs), driven offline by a scripted Messages API. In each test: a temp project
// where the BUILT `agent-session install` wired the built hooks, one `claude -p` run, then
// assertions on the session store (read with the built CLI), on the requests the mock received
// and on the CLI's exit code. Facts about the real CLI: NOTES.md.
//   AGENT_SESSION_DIST=.build/<you> node --test tests/e2e/scenarios.test.mjs
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, DIST, cleanEnv, runCli } from '../helpers/run.mjs';
import { ensureClaude } from './install-claude.mjs';
import { makeProject, runClaude } from './harness.mjs';
import {
  agentIdInText,
  allText,
  isSubagent,
  isTaskNotification,
  lastToolResult,
  lastUserText,
  startMockApi,
  toolResults,
  toolUseFor,
  toolUsesInHistory,
} from './mock-api.mjs';

const AGENT_TYPE = 'general-purpose';
const MAIN_FINAL = 'E2E-MAIN: all done.';
const SUB_DONE = 'E2E-SUB: the work is done.';
const CONTINUE_MARKER = 'E2E-CONTINUE';
const FOOTER_MARK = '[agent-session] Your session:';

const agentCall = (description, prompt) => ({
  name: 'Agent',
  input: { description, prompt, subagent_type: AGENT_TYPE, run_in_background: false },
});

// ---------- project, install, store ----------

const storeEnv = (project) => cleanEnv({ HOME: project.home });

/** A temp project with our hooks installed by the built CLI (asserted). */
async function installedProject(t) {
  const project = makeProject();
  t.after(() => project.cleanup());
  const installed = await runCli(['install', '--json'], { cwd: project.dir, env: storeEnv(project) });
  assert.equal(installed.code, 0, installed.stderr);
  const report = JSON.parse(installed.stdout);
  // Not a dependency of the project: the machine's own settings file, settings.local.json.
  project.settingsPath = join(project.dir, '.claude', 'settings.local.json');
  assert.equal(report.file, project.settingsPath);
  assert.equal(report.changed, true);
  // The settings run the hooks of the build under test.
  const commands = readFileSync(project.settingsPath, 'utf8');
  assert.ok(commands.includes(join(DIST, 'hooks', 'pre_delegate.js')), commands);
  assert.ok(commands.includes(join(DIST, 'hooks', 'subagent_stop.js')), commands);
  return project;
}

async function listSessions(project) {
  const r = await runCli(['list', '--json'], { cwd: project.dir, env: storeEnv(project) });
  if (noStoreYet(r.code, r.stderr)) return [];
  assert.equal(r.code, 0, r.stderr);
  const { sessions, problems } = JSON.parse(r.stdout);
  assert.deepEqual(problems, []);
  return Promise.all(sessions.map((s) => getSession(project, s.agent_id)));
}

async function getSession(project, id) {
  const r = await runCli(['get', id, '--json'], { cwd: project.dir, env: storeEnv(project) });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * The store as the built CLI sees it at this instant, for use INSIDE a mock script (scripts are
 * synchronous; the CLI waits for the mock's answer meanwhile, so every hook of the previous step
 * has finished).
 */
function snapshot(project) {
  const r = spawnSync(process.execPath, [CLI, 'list', '--json'], {
    cwd: project.dir,
    env: storeEnv(project),
    encoding: 'utf8',
  });
  if (noStoreYet(r.status, r.stderr)) return [];
  if (r.status !== 0) throw new Error(`snapshot: list exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout).sessions;
}

/** `list` on a store no hook has created yet: no sessions (exit 1, saying so). */
function noStoreYet(code, stderr) {
  return code === 1 && /no sessions have been recorded here yet/.test(stderr);
}

// ---------- running the real CLI ----------

async function runScenario(t, project, script, env = {}) {
  const api = await startMockApi({ script });
  t.after(() => api.close());
  const result = await runClaude({
    projectDir: project.dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E prompt',
    env,
    timeoutMs: 90_000,
  });
  const detail =
    `code=${result.code} timedOut=${result.timedOut}\n` + `stderr:\n${result.stderr}\nstdout:\n${result.stdout}`;
  assert.deepEqual(api.scriptErrors(), [], 'mock script threw');
  assert.equal(result.code, 0, detail);
  return { api, result };
}

const subagentRequests = (api) => api.requests.filter((r) => r.kind === 'subagent');
const mainRequests = (api) => api.requests.filter((r) => r.kind === 'main');
/** Distinct subagent ids, in the order of their first request. */
const subagentIds = (api) => [...new Set(subagentRequests(api).map((r) => r.agentId))];
const firstRequestOf = (api, agentId) => subagentRequests(api).find((r) => r.agentId === agentId);
const agentCallsSoFar = (req) => toolUsesInHistory(req).filter((u) => u.name === 'Agent').length;
const events = (record, name) => record.history.filter((h) => h.event === name);

/** The agent id in the text of the Agent tool_result the main agent got (the first one with one). */
function agentIdSeenByMain(api) {
  const texts = mainRequests(api)
    .map(lastToolResult)
    .filter(Boolean)
    .map((r) => r.text);
  return texts.map(agentIdInText).find(Boolean) ?? null;
}

function assertCompleted(record) {
  assert.equal(record.phase, 'completed', JSON.stringify(record, null, 2));
  assert.equal(record.outcome, 'completed');
  assert.equal(record.resume_ready, false);
  assert.ok(record.finalized_at);
}

before(
  async () => {
    // Fails (does not skip) when the CLI cannot be installed.
    await ensureClaude();
  },
  { timeout: 10 * 60_000 },
);

test(
  '(a) a delegation creates a session bound to the real agent id, ' +
    'finalized as completed; install twice changes nothing',
  { timeout: 120_000 },
  async (t) => {
    const project = await installedProject(t);
    const settingsBefore = readFileSync(project.settingsPath);
    const again = await runCli(['install', '--json'], { cwd: project.dir, env: storeEnv(project) });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).changed, false);
    assert.deepEqual(readFileSync(project.settingsPath), settingsBefore, 'a second install rewrote the settings');
    assert.deepEqual(
      readdirSync(join(project.dir, '.claude')).filter((f) => f.includes('backups')),
      [],
      'a second install made a backup',
    );

    const call = agentCall('E2E delegated task', 'E2E-SUBAGENT reply with one short sentence');
    const { api, result } = await runScenario(t, project, (req) => {
      if (isSubagent(req)) return { text: SUB_DONE };
      return lastToolResult(req) ? { text: MAIN_FINAL } : { toolUse: call };
    });
    assert.equal(result.json?.result, MAIN_FINAL);

    const [agentId, ...others] = subagentIds(api);
    assert.deepEqual(others, []);
    assert.match(agentId, /^a[0-9a-f]+$/);
    assert.equal(agentIdSeenByMain(api), agentId, 'the tool_result names another agent');

    const sessions = await listSessions(project);
    assert.equal(sessions.length, 1);
    const [s] = sessions;
    assert.equal(s.agent_name, AGENT_TYPE);
    assert.equal(s.purpose, call.input.description);
    assert.equal(s.parent_session_id, null);
    assertCompleted(s);
    assert.equal(s.summary, SUB_DONE);
    assert.equal(s.claude.agent_id, agentId);
    assert.deepEqual(s.claude.agent_ids, [agentId]);
    assert.equal(s.claude.session_id, result.json.session_id);
    assert.equal(s.claude.tool_use_id, toolUsesInHistory(mainRequests(api).at(-1)).find((u) => u.name === 'Agent').id);
    assert.equal(s.claude.cwd, project.dir);
    assert.ok(existsSync(s.claude.agent_transcript_path), 'the agent transcript path does not exist');
    assert.deepEqual(
      events(s, 'started').map((h) => h.claude_agent_id),
      [agentId],
    );
    // The footer reached the subagent with its session id.
    const prompt = lastUserText(firstRequestOf(api, agentId));
    assert.ok(prompt.includes(`${FOOTER_MARK} ${s.agent_id}.`), prompt);
    assert.ok(prompt.includes(call.input.prompt));
  },
);

test(
  '(a) a background delegation (the default) is bound to its agent id and finalized as completed',
  { timeout: 120_000 },
  async (t) => {
    const project = await installedProject(t);
    const call = {
      name: 'Agent',
      input: {
        description: 'E2E background task',
        prompt: 'E2E-SUBAGENT work in the background',
        subagent_type: AGENT_TYPE,
      },
    };
    const seen = {};
    const { api, result } = await runScenario(t, project, (req) => {
      if (isSubagent(req)) return { text: SUB_DONE };
      const res = lastToolResult(req);
      if (res) seen.launched ??= res;
      // The one agent's notification: a turn of its own, or (a race under load) already in the
      // conversation when the launch result is sent.
      if (isTaskNotification(req) || (res && allText(req).includes('<task-notification>'))) return { text: MAIN_FINAL };
      if (!res) return { toolUse: call };
      return { text: 'E2E-MAIN: waiting for the background agent.' };
    });
    assert.equal(result.json?.result, MAIN_FINAL);

    const [agentId, ...others] = subagentIds(api);
    assert.deepEqual(others, []);
    assert.match(seen.launched.text, /Async agent launched/);
    assert.equal(agentIdInText(seen.launched.text), agentId);

    const sessions = await listSessions(project);
    assert.equal(sessions.length, 1);
    const [s] = sessions;
    assertCompleted(s);
    assert.equal(s.summary, SUB_DONE);
    assert.equal(s.purpose, call.input.description);
    assert.equal(s.claude.agent_id, agentId);
    assert.deepEqual(s.claude.agent_ids, [agentId]);
  },
);

test(
  '(b) approval pauses the session; the next delegation is denied with the ' +
    'SendMessage instruction; SendMessage resumes and finalizes the same session',
  { timeout: 120_000 },
  async (t) => {
    const project = await installedProject(t);
    const first = agentCall('E2E review the plan', 'E2E-SUBAGENT review the plan, ask for approval');
    const second = agentCall('E2E review the plan again', 'E2E-SUBAGENT review the plan once more');
    const seen = {};

    const { api, result } = await runScenario(t, project, (req) => {
      if (isSubagent(req)) {
        if (lastUserText(req).includes(CONTINUE_MARKER)) return { text: SUB_DONE };
        return { text: 'E2E-SUB: the plan needs your approval before I change anything.\nsession-phase: approval' };
      }
      if (isTaskNotification(req)) return { text: MAIN_FINAL };
      const res = lastToolResult(req);
      if (!res) return { toolUse: first };
      const use = toolUseFor(req, res);
      if (use?.name === 'Agent' && !res.isError) {
        seen.agentId = agentIdInText(res.text);
        seen.afterFirst = snapshot(project);
        return { toolUse: second };
      }
      if (use?.name === 'Agent') {
        seen.deny = res;
        seen.afterDeny = snapshot(project);
        // Follow the instruction: the agent id is taken from the denial's text.
        const to = /to: "([\w-]+)"/.exec(res.text)?.[1] ?? 'no-agent-id-in-denial';
        return {
          toolUse: {
            name: 'SendMessage',
            input: { to, message: `${CONTINUE_MARKER}: approved, go ahead`, summary: 'E2E approval granted' },
          },
        };
      }
      seen.sendResult = res;
      return { text: 'E2E-MAIN: waiting for the continued agent.' };
    });
    assert.equal(result.json?.result, MAIN_FINAL);

    // Only one agent ever ran: the second spawn was denied, the first agent was continued.
    const { agentId } = seen;
    assert.deepEqual(subagentIds(api), [agentId]);
    const subTurns = subagentRequests(api);
    assert.equal(subTurns.length, 2);
    assert.ok(lastUserText(subTurns[1]).includes(CONTINUE_MARKER));

    // After the first stop: paused for approval.
    assert.equal(seen.afterFirst.length, 1);
    const sessionId = seen.afterFirst[0].agent_id;
    assert.equal(seen.afterFirst[0].phase, 'approval');
    assert.equal(seen.afterFirst[0].resume_ready, true);

    // The denial tells the model to continue that agent with SendMessage, naming agent and session.
    assert.ok(seen.deny, 'the second delegation was not denied');
    assert.equal(seen.deny.isError, true);
    assert.ok(seen.deny.text.startsWith('PreToolUse:Agent hook error: '), seen.deny.text);
    assert.ok(seen.deny.text.includes('SendMessage'), seen.deny.text);
    assert.ok(seen.deny.text.includes(`to: "${agentId}"`), seen.deny.text);
    assert.ok(seen.deny.text.includes(sessionId), seen.deny.text);
    assert.deepEqual(
      seen.afterDeny.map((s) => [s.agent_id, s.phase]),
      [[sessionId, 'approval']],
    );
    assert.ok(JSON.parse(seen.sendResult.text).success, seen.sendResult.text);

    // The same session went back to executing and was finalized when the continued turn ended.
    const sessions = await listSessions(project);
    assert.deepEqual(
      sessions.map((s) => s.agent_id),
      [sessionId],
      'more than one session',
    );
    const [s] = sessions;
    assertCompleted(s);
    assert.equal(s.summary, SUB_DONE);
    assert.equal(s.claude.agent_id, agentId);
    assert.deepEqual(s.claude.agent_ids, [agentId]);
    const phases = s.history.map((h) => `${h.from_phase}->${h.to_phase}`);
    assert.deepEqual(
      phases.filter((p) => p.endsWith('->executing')),
      ['initializing->executing', 'approval->executing'],
      phases.join(', '),
    );
    assert.deepEqual(
      events(s, 'resumed').map((h) => [h.from_phase, h.to_phase, h.claude_agent_id]),
      [['approval', 'executing', agentId]],
    );
    const decisions = events(s, 'resume_decision');
    assert.deepEqual(
      decisions.map((h) => h.decision),
      ['deny'],
    );
    assert.equal(decisions[0].claude_session_id, result.json.session_id);
    assert.equal(s.history.at(-1).to_phase, 'completed');
  },
);

test(
  '(b) a model that delegates again instead of using SendMessage is not denied twice: ' +
    'the spawn goes through with the brief',
  { timeout: 120_000 },
  async (t) => {
    const project = await installedProject(t);
    const first = agentCall('E2E migrate the schema', 'E2E-SUBAGENT plan the migration, ask for approval');
    const again = agentCall('E2E migrate the schema', 'E2E-AGAIN apply the approved migration');

    const { api, result } = await runScenario(t, project, (req) => {
      if (isSubagent(req)) {
        if (lastUserText(req).includes('E2E-AGAIN')) return { text: SUB_DONE };
        return { text: 'E2E-SUB: migration planned, waiting for approval.\nsession-phase: approval' };
      }
      const res = lastToolResult(req);
      if (!res) return { toolUse: first };
      // Whatever the answer (a report, then a denial), the model just delegates again, twice. A real
      // model takes over a second to answer a denial; one answering at once would look like a
      // delegation made in parallel with the denied one (SESSION_README, "Resume policies").
      return agentCallsSoFar(req) < 3 ? { toolUse: again, delayMs: res.isError ? 1500 : 0 } : { text: MAIN_FINAL };
    });
    assert.equal(result.json?.result, MAIN_FINAL);

    const results = mainRequests(api).map(lastToolResult).filter(Boolean);
    assert.deepEqual(
      results.map((r) => r.isError),
      [false, true, false],
      results.map((r) => r.text).join('\n---\n'),
    );
    const [firstAgent, secondAgent, ...others] = subagentIds(api);
    assert.ok(secondAgent, 'the third spawn did not run');
    assert.deepEqual(others, []);

    const sessions = await listSessions(project);
    assert.equal(sessions.length, 1, 'a spawn got its own session');
    const [s] = sessions;
    assert.ok(results[1].text.includes(`to: "${firstAgent}"`), results[1].text);
    const briefed = lastUserText(firstRequestOf(api, secondAgent));
    assert.ok(briefed.includes(`You are resuming session ${s.agent_id}`), briefed);
    assert.ok(briefed.includes('Phase when it stopped: approval'), briefed);
    assert.deepEqual(
      events(s, 'resume_decision').map((h) => [h.policy, h.decision]),
      [
        ['auto', 'deny'],
        ['auto', 'brief'],
      ],
    );
    assertCompleted(s);
    assert.deepEqual(s.claude.agent_ids, [firstAgent, secondAgent]);
  },
);

for (const streamGapMs of [0, 2500])
  test(
    '(b) two delegations in one message with a paused session, ' +
      `the second streamed ${streamGapMs} ms after the first: ` +
      'one is denied, the other runs in a session of its own',
    { timeout: 120_000 },
    async (t) => {
      const project = await installedProject(t);
      const first = agentCall('E2E review the plan', 'E2E-SUBAGENT review the plan, ask for approval');
      const pair = [
        agentCall('E2E review billing', 'E2E-PAIR review billing'),
        agentCall('E2E review search', 'E2E-PAIR review search'),
      ];
      const seen = {};

      const { api, result } = await runScenario(t, project, (req) => {
        if (isSubagent(req)) {
          if (lastUserText(req).includes('E2E-PAIR')) return { text: SUB_DONE };
          return { text: 'E2E-SUB: the plan needs your approval.\nsession-phase: approval' };
        }
        if (!lastToolResult(req)) return { toolUse: first };
        // One assistant message with two Agent calls. Claude Code runs a call's hook as soon as the call
        // is streamed: the hooks run together, or (a long first prompt) seconds apart.
        if (agentCallsSoFar(req) === 1) return { content: pair.map((c) => ({ type: 'tool_use', ...c })), streamGapMs };
        seen.pairResults ??= toolResults(req);
        return { text: MAIN_FINAL };
      });
      assert.equal(result.json?.result, MAIN_FINAL);

      const results = seen.pairResults;
      assert.equal(results.length, 2, JSON.stringify(results));
      const denied = results.filter((r) => r.isError);
      assert.equal(denied.length, 1, results.map((r) => r.text).join('\n---\n'));
      assert.ok(denied[0].text.includes('SendMessage'), denied[0].text);

      const [firstAgent, pairAgent, ...others] = subagentIds(api);
      assert.ok(pairAgent, 'the allowed delegation did not run');
      assert.deepEqual(others, []);
      const sessions = await listSessions(project);
      assert.equal(sessions.length, 2, JSON.stringify(sessions, null, 2));
      const paused = sessions.find((s) => s.claude.agent_id === firstAgent);
      const own = sessions.find((s) => s.claude.agent_id === pairAgent);
      assert.ok(paused && own, JSON.stringify(sessions, null, 2));
      // The paused session was denied once and handed to nobody; the other agent got a fresh session.
      assert.deepEqual([paused.phase, paused.claude.agent_ids], ['approval', [firstAgent]]);
      assert.deepEqual(
        events(paused, 'resume_decision').map((h) => h.decision),
        ['deny'],
      );
      assert.ok(denied[0].text.includes(paused.agent_id), denied[0].text);
      assertCompleted(own);
      assert.deepEqual(own.claude.agent_ids, [pairAgent]);
      const prompt = lastUserText(firstRequestOf(api, pairAgent));
      assert.ok(!prompt.includes('You are resuming session'), prompt);
      assert.ok(prompt.includes(`${FOOTER_MARK} ${own.agent_id}.`), prompt);
    },
  );

test(
  '(c) policy brief: the new subagent gets the resume brief and joins the same session',
  { timeout: 120_000 },
  async (t) => {
    const project = await installedProject(t);
    project.writeFile('.claude/agent-session.json', JSON.stringify({ resume_policy: 'brief' }));
    const first = agentCall('E2E investigate the flaky test', 'E2E-SUBAGENT investigate, stop halfway');
    const second = agentCall('E2E finish the investigation', 'E2E-SECOND-PROMPT finish the investigation');

    const { api, result } = await runScenario(t, project, (req) => {
      if (isSubagent(req)) {
        if (lastUserText(req).includes('E2E-SECOND-PROMPT')) return { text: SUB_DONE };
        return { text: 'E2E-SUB: found two suspects, more digging needed.\nsession-phase: investigating' };
      }
      const res = lastToolResult(req);
      if (!res) return { toolUse: first };
      return agentCallsSoFar(req) === 1 ? { toolUse: second } : { text: MAIN_FINAL };
    });
    assert.equal(result.json?.result, MAIN_FINAL);

    // Both spawns ran (none was denied), as two Claude Code agents.
    const ids = subagentIds(api);
    assert.equal(ids.length, 2, JSON.stringify(ids));
    const [firstAgent, secondAgent] = ids;
    assert.ok(
      mainRequests(api)
        .map(lastToolResult)
        .filter(Boolean)
        .every((r) => !r.isError),
    );

    const sessions = await listSessions(project);
    assert.equal(sessions.length, 1, 'the second spawn got its own session');
    const [s] = sessions;

    // The second agent's request, as received, carries the brief of the paused session.
    const briefed = lastUserText(firstRequestOf(api, secondAgent));
    assert.ok(briefed.includes(`You are resuming session ${s.agent_id}`), briefed);
    assert.ok(briefed.includes(`Purpose: ${first.input.description}`), briefed);
    assert.ok(briefed.includes('Phase when it stopped: investigating'), briefed);
    assert.ok(briefed.includes('found two suspects'), briefed);
    assert.ok(briefed.includes(second.input.prompt), briefed);
    assert.ok(briefed.includes(`${FOOTER_MARK} ${s.agent_id}.`), briefed);
    assert.ok(!allText(firstRequestOf(api, firstAgent)).includes('You are resuming session'));

    assertCompleted(s);
    assert.equal(s.purpose, first.input.description);
    assert.equal(s.claude.agent_id, secondAgent);
    assert.deepEqual(s.claude.agent_ids, [firstAgent, secondAgent]);
    assert.equal(s.claude.tool_use_ids.length, 2);
    assert.deepEqual(
      events(s, 'resume_decision').map((h) => [h.policy, h.decision]),
      [['brief', 'brief']],
    );
    assert.deepEqual(
      events(s, 'resumed').map((h) => [h.from_phase, h.claude_agent_id]),
      [['investigating', secondAgent]],
    );
  },
);

test('(d) a delegation made inside a subagent creates a child session', { timeout: 120_000 }, async (t) => {
  const project = await installedProject(t);
  const outer = agentCall('E2E outer task', 'E2E-OUTER split the work');
  const inner = agentCall('E2E inner task', 'E2E-INNER do one part');
  let outerAgent = null;

  const { api, result } = await runScenario(t, project, (req) => {
    if (isSubagent(req)) {
      outerAgent ??= req.agentId;
      if (req.agentId !== outerAgent) return { text: 'E2E-INNER: part done.' };
      return lastToolResult(req) ? { text: 'E2E-OUTER: all parts done.' } : { toolUse: inner };
    }
    return lastToolResult(req) ? { text: MAIN_FINAL } : { toolUse: outer };
  });
  assert.equal(result.json?.result, MAIN_FINAL);

  const ids = subagentIds(api);
  assert.equal(ids.length, 2, JSON.stringify(ids));
  const innerAgent = ids[1];
  assert.equal(ids[0], outerAgent);
  // The outer subagent got the inner one's result.
  const innerResult = subagentRequests(api)
    .filter((r) => r.agentId === outerAgent)
    .map(lastToolResult)
    .find(Boolean);
  assert.equal(agentIdInText(innerResult?.text), innerAgent);

  const sessions = await listSessions(project);
  assert.equal(sessions.length, 2);
  const parent = sessions.find((s) => s.parent_session_id === null);
  const child = sessions.find((s) => s.parent_session_id !== null);
  assert.ok(parent && child, JSON.stringify(sessions, null, 2));
  assert.equal(child.parent_session_id, parent.agent_id);
  assert.equal(parent.purpose, outer.input.description);
  assert.equal(child.purpose, inner.input.description);
  assert.equal(parent.claude.agent_id, outerAgent);
  assert.equal(child.claude.agent_id, innerAgent);
  assert.equal(child.claude.caller_agent_id, outerAgent);
  assertCompleted(parent);
  assertCompleted(child);

  const children = await runCli(['children', parent.agent_id, '--json'], { cwd: project.dir, env: storeEnv(project) });
  assert.equal(children.code, 0, children.stderr);
  assert.ok(children.stdout.includes(child.agent_id), children.stdout);
});

// A broken store: the hooks can do nothing (useful), yet Claude Code must not notice.
const storeDir = (project) => join(project.dir, '.claude', 'session');
const hookLog = (project) => readFileSync(join(storeDir(project), '.hooks.log'), 'utf8');

const BROKEN_STORES = [
  {
    name: 'the store path is a regular file',
    before: (project) => project.writeFile('.claude/session', 'not a store\n'),
    after: (project) => assert.equal(readFileSync(storeDir(project), 'utf8'), 'not a store\n'),
    footer: false,
  },
  {
    name: "the store's Claude Code index area is a regular file",
    before: (project) => {
      mkdirSync(storeDir(project), { recursive: true });
      project.writeFile('.claude/session/.claude-code', 'not a directory\n');
    },
    // pre_delegate really ran and failed (subagent_stop then knows no delegation: nothing to log).
    after: (project) =>
      assert.match(
        hookLog(project),
        new RegExp(
          '^\\S+ pre_delegate PreToolUse pid=\\d+ ECORRUPT: ' +
            '\\S+\\/\\.claude-code is a regular file, not a directory the store made',
          'm',
        ),
      ),
    footer: false,
  },
  {
    name: "the session's state.json is corrupted while its agent runs",
    // Called from the mock when the subagent's first request arrives (after SubagentStart).
    whileRunning: (project) => {
      const states = readdirSync(storeDir(project))
        .map((n) => join(storeDir(project), n, 'state.json'))
        .filter(existsSync);
      if (states.length !== 1) throw new Error(`expected one session, found ${states.length}`);
      writeFileSync(states[0], '{"agent_id": broken');
    },
    after: (project) => assert.match(hookLog(project), /^\S+ subagent_stop SubagentStop pid=\d+ ECORRUPT: /m),
    footer: true,
  },
];

for (const broken of BROKEN_STORES) {
  test(`(e) fail open: ${broken.name}, the delegation still completes`, { timeout: 120_000 }, async (t) => {
    const project = await installedProject(t);
    broken.before?.(project);
    const call = agentCall('E2E delegated task', 'E2E-SUBAGENT reply with one short sentence');
    const { api, result } = await runScenario(t, project, (req) => {
      if (isSubagent(req)) {
        broken.whileRunning?.(project);
        return { text: SUB_DONE };
      }
      return lastToolResult(req) ? { text: MAIN_FINAL } : { toolUse: call };
    });
    assert.equal(result.json?.result, MAIN_FINAL);
    assert.equal(result.json?.is_error, false);

    // The subagent ran, with its prompt intact (no footer when no session could be created).
    const [agentId, ...others] = subagentIds(api);
    assert.ok(agentId, 'no subagent request');
    assert.deepEqual(others, []);
    const prompt = lastUserText(firstRequestOf(api, agentId));
    assert.ok(prompt.includes(call.input.prompt), prompt);
    assert.equal(prompt.includes(FOOTER_MARK), broken.footer, prompt);
    // The main agent got the subagent's result.
    const back = mainRequests(api).map(lastToolResult).find(Boolean);
    assert.equal(back.isError, false, back.text);
    assert.ok(back.text.includes(SUB_DONE), back.text);
    assert.equal(agentIdInText(back.text), agentId);
    broken.after(project);
  });
}
