// `install --statusline` with the REAL Claude Code CLI: Claude Code draws its status line only in its
// interactive screen, so it runs in a tmux session (offline, no message sent) and the test reads the
// screen until our line is there. Skipped without tmux.
//   AGENT_SESSION_DIST=.build/<you>/dist node --test tests/e2e/statusline.test.mjs
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { flow, life, pre } from '../helpers/hooks.mjs';
import { until } from '../helpers/poll.mjs';
import { cleanEnv, runCli, runNode, SUBAGENT_STOP } from '../helpers/run.mjs';
import { cliEnv, makeProject } from './harness.mjs';
import { ensureClaude } from './install-claude.mjs';

const hasTmux = spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status === 0;
const KEY = 'sk-ant-e2e-dummy-key';

test('Claude Code draws the status line install --statusline sets', { skip: !hasTmux && 'no tmux' }, async (t) => {
  const claude = await ensureClaude();
  const project = makeProject();
  const name = `agent-session-e2e-${process.pid}`;
  let pid;
  t.after(async () => {
    spawnSync('tmux', ['kill-session', '-t', name], { stdio: 'ignore' });
    // Claude Code writes into HOME (settings backups, its plugin marketplace) as it exits: wait for it.
    if (pid) await until(() => !alive(pid), 'Claude Code to exit', { timeoutMs: 15_000 }).catch(() => kill(pid));
    rmSync(project.root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  });
  writeFileSync(join(project.dir, 'package.json'), '{"name":"proj","private":true}\n');
  // A session paused in another conversation, listed by the periodic sweep: every conversation counts it.
  const proj = { dir: project.dir, store: join(project.dir, '.claude', 'session') };
  const env = { AGENT_SESSION_SWEEP_INTERVAL_MINUTES: '100000' };
  const f = flow({ session: 'conv-earlier', toolUseId: 'toolu_e2e', agentId: 'ae2e', type: 'reviewer' });
  await pre(proj, f.pre, env);
  for (const payload of [f.post, f.start, f.stop('Shall I go on?\nsession-phase: approval')])
    await life(proj, payload, env);
  const sweep = await runNode(SUBAGENT_STOP, ['--sweep'], {
    cwd: project.dir,
    env: cleanEnv({ CLAUDE_PROJECT_DIR: project.dir }),
  });
  assert.equal(sweep.code, 0, sweep.stderr);
  const installed = await runCli(['install', '--statusline'], {
    cwd: project.dir,
    env: cleanEnv({ HOME: project.home }),
  });
  assert.equal(installed.code, 0, installed.stderr);

  // No onboarding, the workspace trusted (Claude Code runs no status line command otherwise), the key accepted.
  const trusted = { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true };
  writeFileSync(
    join(project.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
      projects: { [project.dir]: trusted },
    }),
  );
  const vars = cliEnv({ apiUrl: 'http://127.0.0.1:9', home: project.home, tmp: project.tmp, env: {} });
  const envArgs = Object.entries({ ...vars, ANTHROPIC_API_KEY: KEY, TERM: 'xterm-256color' }).map(
    ([k, v]) => `${k}=${v}`,
  );
  const path = `${dirname(process.execPath)}:${vars.PATH ?? '/usr/bin:/bin'}`;
  const command = ['env', '-i', ...envArgs.filter((a) => !a.startsWith('PATH=')), `PATH=${path}`, claude];
  execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '150', '-y', '30', '-c', project.dir, ...command]);
  pid = Number(execFileSync('tmux', ['list-panes', '-t', name, '-F', '#{pane_pid}'], { encoding: 'utf8' }));
  const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-t', name], { encoding: 'utf8' });
  await until(() => screen().includes('1 paused in other conversations'), 'our status line on the screen', {
    timeoutMs: 60_000,
    intervalMs: 250,
  }).catch((err) => {
    throw new Error(`${err.message}; the screen:\n${screen()}`);
  });
});

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function kill(pid) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}
