// A paused session picked up from a NEW conversation, with the REAL Claude Code CLI (pinned in
// install-claude.mjs) driven offline by a scripted Messages API: conversation 1 pauses a subagent for
// approval; conversation 2 (another `claude -p`, not --resume) is told about it by the SessionStart
// hook, and its scripted model delegates naming the session. The style of scenarios.test.mjs.
//   AGENT_SESSION_DIST=.build/<you>/dist node --test tests/e2e/resume-across.test.mjs
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, runCli } from '../helpers/run.mjs';
import { ensureClaude } from './install-claude.mjs';
import { makeProject, runClaude } from './harness.mjs';
import { allText, isSubagent, lastToolResult, lastUserText, startMockApi } from './mock-api.mjs';

const AGENT_TYPE = 'general-purpose';
const MAIN_FINAL = 'E2E-MAIN: all done.';
const SUB_DONE = 'E2E-SUB: dropped the old table.';
const WAITING = 'E2E-SUB: shall I drop the old table? It holds 3 rows.';
const HEADER = 'agent-session: paused subagent sessions of this project';
const SESSION_ID = /agent-\d{8}-\d{6}-[0-9a-f]{8}/;

const agentCall = (description, prompt) => ({
  name: 'Agent',
  input: { description, prompt, subagent_type: AGENT_TYPE, run_in_background: false },
});

const storeEnv = (project) => cleanEnv({ HOME: project.home });

async function installedProject(t) {
  const project = makeProject();
  t.after(() => project.cleanup());
  const installed = await runCli(['install', '--json'], { cwd: project.dir, env: storeEnv(project) });
  assert.equal(installed.code, 0, installed.stderr);
  const settings = JSON.parse(readFileSync(join(project.dir, '.claude', 'settings.local.json'), 'utf8'));
  assert.ok(settings.hooks.SessionStart, 'install did not register SessionStart');
  return project;
}

async function cliJson(project, args) {
  const r = await runCli([...args, '--json'], { cwd: project.dir, env: storeEnv(project) });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const sessions = async (project) => (await cliJson(project, ['list'])).sessions;
const getSession = (project, id) => cliJson(project, ['get', id]);

/** One `claude -p` run, a new conversation each time. */
async function converse(t, project, script) {
  const api = await startMockApi({ script });
  t.after(() => api.close());
  const result = await runClaude({
    projectDir: project.dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E prompt',
    timeoutMs: 90_000,
  });
  assert.deepEqual(api.scriptErrors(), [], 'mock script threw');
  assert.equal(result.code, 0, `code=${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  assert.equal(result.json?.result, MAIN_FINAL);
  return { api, result };
}

const mainRequests = (api) => api.requests.filter((r) => r.kind === 'main');
const subagentRequests = (api) => api.requests.filter((r) => r.kind === 'subagent');

/** Conversation 1: a subagent stops waiting for approval. Returns the paused session. */
async function pauseOne(t, project) {
  const call = agentCall('E2E migrate the schema', 'E2E-SUBAGENT plan the migration, ask for approval');
  const { api } = await converse(t, project, (req) => {
    if (isSubagent(req)) return { text: `${WAITING}\nsession-phase: approval` };
    return lastToolResult(req) ? { text: MAIN_FINAL } : { toolUse: call };
  });
  // Nothing was paused when conversation 1 started.
  assert.ok(!allText(mainRequests(api)[0]).includes(HEADER));
  const [paused, ...others] = await sessions(project);
  assert.deepEqual(others, []);
  assert.equal(paused.phase, 'approval');
  return getSession(project, paused.agent_id);
}

/**
 * Conversation 2: its scripted model reads the session id from what SessionStart told it and
 * delegates naming it. Returns the mock and the id the model read.
 */
async function pickUp(t, project) {
  let named = null;
  const { api } = await converse(t, project, (req) => {
    if (isSubagent(req)) return { text: SUB_DONE };
    if (lastToolResult(req)) return { text: MAIN_FINAL };
    named = allText(req).match(new RegExp(`^- (${SESSION_ID.source})`, 'm'))?.[1] ?? null;
    if (!named) throw new Error(`no paused session in the first request:\n${allText(req)}`);
    return { toolUse: agentCall('E2E migrate the schema', `E2E-AGAIN approved: go on with ${named}`) };
  });
  return { api, named };
}

before(
  async () => {
    await ensureClaude();
  },
  { timeout: 10 * 60_000 },
);

test(
  '(k) a new conversation is told about the paused session, delegates naming it, ' +
    'and the new agent resumes it with the brief',
  { timeout: 180_000 },
  async (t) => {
    const project = await installedProject(t);
    const paused = await pauseOne(t, project);
    const firstAgent = paused.claude.agent_id;

    const { api, named } = await pickUp(t, project);
    const told = allText(mainRequests(api)[0]);
    const line = told.split('\n').find((l) => l.startsWith(`- ${paused.agent_id} `));
    assert.ok(line, told);
    assert.match(line, /\(general-purpose "E2E migrate the schema"\): approval, \d+ (s|min) ago/);
    assert.ok(line.includes(`waiting for: "${WAITING.replace(/"/g, "'")}"`), line);
    assert.ok(line.endsWith(`continue it: delegate to ${AGENT_TYPE} naming ${paused.agent_id}`), line);
    assert.equal(named, paused.agent_id);

    const [secondAgent, ...more] = [...new Set(subagentRequests(api).map((r) => r.agentId))];
    assert.deepEqual(more, []);
    const briefed = lastUserText(subagentRequests(api)[0]);
    assert.ok(briefed.includes(`You are resuming session ${paused.agent_id}`), briefed);
    assert.ok(briefed.includes('Phase when it stopped: approval'), briefed);

    const all = await sessions(project);
    assert.equal(all.length, 1, 'the delegation got a session of its own');
    const s = await getSession(project, paused.agent_id);
    assert.equal(s.phase, 'completed');
    assert.equal(s.summary, SUB_DONE);
    assert.deepEqual(s.claude.agent_ids, [firstAgent, secondAgent]);
    assert.deepEqual(
      s.history.map((h) => [h.event, h.to_phase, h.claude_agent_id ?? h.decision]),
      [
        ['started', 'executing', firstAgent],
        ['stopped', 'approval', firstAgent],
        ['resume_decision', 'approval', 'brief'],
        ['resumed', 'executing', secondAgent],
        ['finalized', 'completed', undefined],
      ],
    );
    assert.equal(s.history[2].reason, 'the earlier agent belongs to another Claude Code session');
  },
);

test(
  '(l) an expired session is listed as expired; the delegation naming it starts a new session',
  { timeout: 180_000 },
  async (t) => {
    const project = await installedProject(t);
    const paused = await pauseOne(t, project);
    // The person comes back the next day: the record is a day older.
    const file = join(project.dir, '.claude', 'session', paused.agent_id, 'state.json');
    const record = JSON.parse(readFileSync(file, 'utf8'));
    record.last_updated = new Date(Date.parse(record.last_updated) - 86_400_000).toISOString();
    writeFileSync(file, JSON.stringify(record, null, 2));

    const { api, named } = await pickUp(t, project);
    const told = allText(mainRequests(api)[0]);
    const line = told.split('\n').find((l) => l.startsWith(`- ${paused.agent_id} `));
    assert.ok(line, told);
    assert.match(line, /: approval, 24 h ago; .*; expired \(its resume window is 30 min\), not resumed$/);
    assert.ok(!told.includes('continue it'), told);
    assert.equal(named, paused.agent_id);

    const briefed = lastUserText(subagentRequests(api)[0]);
    assert.ok(!briefed.includes('You are resuming session'), briefed);
    const all = await sessions(project);
    assert.equal(all.length, 2, 'the expired session was resumed');
    const fresh = all.find((s) => s.agent_id !== paused.agent_id);
    assert.equal(fresh.phase, 'completed');
    const old = await getSession(project, paused.agent_id);
    assert.equal(old.phase, 'approval');
    assert.deepEqual(old.claude.agent_ids, [paused.claude.agent_id]);
    // Why it was not resumed, as the CLI's resume rules say.
    const why = await runCli(['should-resume', paused.agent_id, '--json'], {
      cwd: project.dir,
      env: storeEnv(project),
    });
    assert.equal(why.code, 1, why.stderr);
    assert.deepEqual([JSON.parse(why.stdout).resume, JSON.parse(why.stdout).reason], [false, 'expired']);

    // The audit trail says why the named session was passed over, and what the delegation did instead.
    const r = await runCli(['audit', '--json'], { cwd: project.dir, env: storeEnv(project) });
    assert.equal(r.code, 0, r.stderr);
    const { entries } = JSON.parse(r.stdout);
    const passed = entries.filter((e) => e.action === 'hook.passed_over' && e.ids.includes(paused.agent_id));
    assert.equal(passed.length, 1, JSON.stringify(entries, null, 2));
    assert.deepEqual(
      passed[0].details.passed_over.map((p) => [p.candidate, p.reason]),
      [[paused.agent_id, 'expired']],
    );
    assert.equal(passed[0].details.session, fresh.agent_id);
    const decision = entries.find((e) => e.action === 'hook.resume_decision' && e.ids.includes(fresh.agent_id));
    assert.equal(decision?.details.decision, 'new_session', JSON.stringify(entries, null, 2));
  },
);
