// A subagent spawned with `isolation: "worktree"` by the REAL Claude Code CLI in a git project: the
// hooks record the worktree Claude Code made for it, and `delete` guards that worktree's unsaved work
// while the shared checkout only informs. Facts about the CLI: NOTES.md, "Worktrees".
//   AGENT_SESSION_DIST=.build/<you> node --test tests/e2e/worktree.test.mjs
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanEnv, runCli } from '../helpers/run.mjs';
import { git } from '../helpers/git.mjs';
import { ensureClaude } from './install-claude.mjs';
import { hookGroup, makeProject, runClaude, writeLoggingHook } from './harness.mjs';
import { allText, isSubagent, lastToolResult, startMockApi } from './mock-api.mjs';

const MADE = 'made-by-agent.txt';

before(() => ensureClaude(), { timeout: 10 * 60_000 });

/**
 * One run of Claude Code: the main agent delegates to a general-purpose agent in its own worktree,
 * whose turns `subagent(req)` scripts. Returns the record of the one session it made.
 */
async function delegateToWorktree(t, { project, env }, { description, prompt, subagent }) {
  const api = await startMockApi({
    script: (req) => {
      if (isSubagent(req)) return subagent(req);
      if (lastToolResult(req)) return { text: 'E2E-MAIN: done.' };
      const input = { description, prompt, subagent_type: 'general-purpose', run_in_background: false };
      return { toolUse: { name: 'Agent', input: { ...input, isolation: 'worktree' } } };
    },
  });
  t.after(() => api.close());
  const run = await runClaude({
    projectDir: project.dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E prompt',
    timeoutMs: 90_000,
  });
  assert.deepEqual(api.scriptErrors(), []);
  assert.equal(run.code, 0, run.stderr);
  const listed = await runCli(['list', '--json'], { cwd: project.dir, env });
  assert.equal(listed.code, 0, listed.stderr);
  const [summary] = JSON.parse(listed.stdout).sessions;
  const got = await runCli(['get', summary.agent_id, '--json'], { cwd: project.dir, env });
  return JSON.parse(got.stdout);
}

/** A git project with one commit and our hooks installed, whose Bash calls are allowed. */
async function gitProject(t) {
  const project = makeProject();
  t.after(() => project.cleanup());
  git(project.dir, 'init', '-q', '-b', 'main');
  project.writeFile('README', 'the project\n');
  git(project.dir, 'add', 'README');
  git(project.dir, 'commit', '-q', '-m', 'first');
  const env = cleanEnv({ HOME: project.home });
  const installed = await runCli(['install'], { cwd: project.dir, env });
  assert.equal(installed.code, 0, installed.stderr);
  // Bash in a fresh HOME asks for permission; a PreToolUse hook allowing it stands in for the user.
  const allow = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } };
  const allowHook = writeLoggingHook(project.root, { name: 'allow-bash', stdout: JSON.stringify(allow) });
  project.writeSettings({ hooks: { PreToolUse: [hookGroup(allowHook.command, { matcher: 'Bash' })] } });
  return { project, env };
}

test('an agent in its own worktree: the session owns it; delete refuses its work until --discard-work', async (t) => {
  const { project, env } = await gitProject(t);
  project.writeFile('untracked-by-the-person.txt', "not the session's\n");

  const record = await delegateToWorktree(
    t,
    { project, env },
    {
      description: 'Work apart',
      prompt: 'E2E-SUBAGENT write a file',
      subagent: (req) =>
        lastToolResult(req)
          ? { text: 'E2E-SUB: wrote the file.' }
          : { toolUse: { name: 'Bash', input: { command: `echo agent > ${MADE}`, description: 'write' } } },
    },
  );
  assert.equal(record.phase, 'completed');
  const agentId = record.claude.agent_id;
  const worktree = join(project.dir, '.claude', 'worktrees', `agent-${agentId}`);
  assert.deepEqual(record.claude.worktrees, [worktree]);
  assert.equal(readFileSync(join(worktree, MADE), 'utf8'), 'agent\n');

  const refused = await runCli(['delete', record.agent_id], { cwd: project.dir, env });
  assert.equal(refused.code, 3);
  assert.ok(refused.stderr.includes(`unsaved work in its own work tree ${worktree}`), refused.stderr);
  const deleted = await runCli(['delete', record.agent_id, '--discard-work'], { cwd: project.dir, env });
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.ok(deleted.stdout.includes(`Checkout ${project.dir} (shared`), deleted.stdout);
  assert.ok(existsSync(join(worktree, MADE)), 'delete leaves the worktree as it is');
});

test("an agent in its own worktree pauses itself with its prompt footer's command: the session waits", async (t) => {
  const { project, env } = await gitProject(t);

  let ran;
  const record = await delegateToWorktree(
    t,
    { project, env },
    {
      description: 'Drop the legacy table',
      prompt: 'E2E-SUBAGENT ask before dropping',
      subagent: (req) => {
        const result = lastToolResult(req);
        if (result) {
          ran = result.text;
          return { text: 'E2E-SUB: waiting for your approval to drop the table.' };
        }
        // The command the footer gives, run where the agent works: its worktree, without CLAUDE_PROJECT_DIR.
        const footer = /run `([^`]*--phase <phase>)`/.exec(allText(req));
        const command = footer ? footer[1].replace('<phase>', 'approval') : 'echo NO-FOOTER-COMMAND';
        return {
          toolUse: { name: 'Bash', input: { command: `pwd; ${command}; echo "exit $?"`, description: 'pause' } },
        };
      },
    },
  );
  assert.match(ran, /\.claude\/worktrees\/agent-/, 'the command ran in the worktree');
  assert.match(ran, /exit 0/, ran);
  assert.equal(record.phase, 'approval', 'paused, not finalized as completed');
});
