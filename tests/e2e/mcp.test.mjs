// The MCP server with the REAL Claude Code CLI (pinned in install-claude.mjs), driven offline by a
// scripted Messages API: `agent-session install --mcp` writes the project's .mcp.json, Claude Code
// starts the server, and the scripted model lists the sessions, previews a delete, confirms it with
// the preview's token, and restores the subtree from the trash. The style of resume-across.test.mjs.
//   AGENT_SESSION_DIST=.build/<you>/dist node --test tests/e2e/mcp.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, DIST, loadLibrary, ROOT, runCli } from '../helpers/run.mjs';
import { makeProject, runClaude } from './harness.mjs';
import { isSubagent, lastToolResult, startMockApi, toolUseFor } from './mock-api.mjs';

const FINAL = 'E2E-MAIN: sessions tidied.';
const TOOL = (name) => `mcp__agent-session__${name}`;
const HOUR = 3_600_000;

/** Sessions of the conversation `conversation` (and one of another), backdated so that none counts as running. */
async function seed(store, conversation) {
  const { Sessions } = await loadLibrary();
  const at = Date.now() - 3 * HOUR;
  const sessions = Sessions.open({ dir: store, cwd: store, env: {}, now: () => at });
  const claude = (session_id, agent) => ({ session_id, agent_id: agent });
  await sessions.create({ agentName: 'planner', id: 'e2e-root', claude: claude(conversation, 'a0000000000000001') });
  await sessions.create({
    agentName: 'explorer',
    id: 'e2e-kid',
    parent: 'e2e-root',
    claude: claude(conversation, 'a0000000000000002'),
  });
  await sessions.update('e2e-kid', { phase: 'approval' });
  await sessions.create({ agentName: 'other', id: 'e2e-theirs', claude: claude(randomUUID(), 'a0000000000000003') });
}

const live = (store) => readdirSync(store).filter((n) => existsSync(join(store, n, 'state.json')));

test('the model lists its sessions, previews and confirms a delete, and restores it, through MCP', async (t) => {
  const project = makeProject();
  t.after(() => project.cleanup());
  const env = cleanEnv({ HOME: project.home });
  const installed = await runCli(['install', '--mcp', '--json'], { cwd: project.dir, env });
  assert.equal(installed.code, 0, installed.stderr);
  const store = join(project.dir, '.claude', 'session');
  const conversation = randomUUID();
  await seed(store, conversation);

  // The model's turns: each call follows the result of the one before.
  const seen = {};
  const script = (req) => {
    if (isSubagent(req)) return { text: 'unexpected subagent' };
    const result = lastToolResult(req);
    if (!result) return { toolUse: { name: TOOL('list_sessions'), input: {} } };
    const call = toolUseFor(req, result);
    assert.ok(!result.isError, `${call?.name} failed: ${result.text}`);
    const body = JSON.parse(result.text);
    switch (call?.name) {
      case TOOL('list_sessions'):
        seen.list = body;
        return { toolUse: { name: TOOL('delete_session'), input: { id: 'e2e-kid' } } };
      case TOOL('delete_session'):
        if (body.stage === 'preview') {
          seen.preview = body;
          seen.afterPreview = live(store).sort();
          const input = { id: 'e2e-kid', confirm_token: body.confirm_token };
          return { toolUse: { name: TOOL('delete_session'), input } };
        }
        seen.deleted = body;
        seen.afterDelete = live(store).sort();
        return { toolUse: { name: TOOL('restore_session'), input: { target: body.trash_entry } } };
      case TOOL('restore_session'):
        seen.restored = body;
        return { text: FINAL };
      default:
        return { text: `unexpected tool ${call?.name}` };
    }
  };
  const api = await startMockApi({ script });
  t.after(() => api.close());
  const tools = ['list_sessions', 'delete_session', 'restore_session'].map(TOOL).join(',');
  const result = await runClaude({
    projectDir: project.dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E tidy the sessions',
    args: ['--session-id', conversation, '--allowedTools', tools],
    timeoutMs: 120_000,
  });
  assert.deepEqual(api.scriptErrors(), [], 'mock script threw');
  assert.equal(result.code, 0, `stderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  assert.equal(result.json?.result, FINAL);

  // The list: this conversation's two sessions, and a count of the other one.
  assert.equal(seen.list.conversation, conversation);
  assert.deepEqual(seen.list.sessions.map((s) => s.id).sort(), ['e2e-kid', 'e2e-root']);
  assert.equal(seen.list.others, 1);
  // The preview changed nothing; the confirmed delete moved the subtree to the trash.
  assert.deepEqual(
    seen.preview.sessions.map((s) => s.id),
    ['e2e-kid'],
  );
  assert.deepEqual(seen.afterPreview, ['e2e-kid', 'e2e-root', 'e2e-theirs']);
  assert.equal(seen.deleted.stage, 'deleted');
  assert.deepEqual(seen.afterDelete, ['e2e-root', 'e2e-theirs']);
  assert.ok(seen.deleted.trash_entry);
  assert.deepEqual(
    seen.restored.restored.map((s) => s.id),
    ['e2e-kid'],
  );
  assert.deepEqual(live(store).sort(), ['e2e-kid', 'e2e-root', 'e2e-theirs']);

  // The audit trail names the MCP actor and the conversation.
  const audit = readFileSync(join(store, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.actor === 'mcp');
  assert.deepEqual(
    audit.map((e) => [e.action, e.details.conversation]),
    [
      ['delete', conversation],
      ['restore', conversation],
    ],
  );
});

test("the plugin's server (--plugin-dir): its tools are mcp__plugin_agent-session_agent-session__*", async (t) => {
  const project = makeProject();
  t.after(() => project.cleanup());
  // The plugin as the package ships it: .claude-plugin/, hooks/hooks.json and the build.
  const plugin = join(project.root, 'plugin');
  cpSync(join(ROOT, '.claude-plugin'), join(plugin, '.claude-plugin'), { recursive: true });
  cpSync(join(ROOT, 'hooks', 'hooks.json'), join(plugin, 'hooks', 'hooks.json'));
  cpSync(DIST, join(plugin, 'dist'), { recursive: true });
  const store = join(project.dir, '.claude', 'session');
  const conversation = randomUUID();
  await seed(store, conversation);
  const list = 'mcp__plugin_agent-session_agent-session__list_sessions';
  let listed;
  const api = await startMockApi({
    script: (req) => {
      const result = lastToolResult(req);
      if (!result) return { toolUse: { name: list, input: { scope: 'project' } } };
      assert.ok(!result.isError, result.text);
      listed = JSON.parse(result.text);
      return { text: FINAL };
    },
  });
  t.after(() => api.close());
  const result = await runClaude({
    projectDir: project.dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E list the sessions',
    args: ['--plugin-dir', plugin, '--session-id', conversation, '--allowedTools', list],
    timeoutMs: 120_000,
  });
  assert.deepEqual(api.scriptErrors(), [], 'mock script threw');
  assert.equal(result.code, 0, `stderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  assert.equal(result.json?.result, FINAL);
  assert.equal(listed.scope, 'project');
  assert.equal(listed.total, 3);
  assert.equal(listed.conversation, conversation);
});
