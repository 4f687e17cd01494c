// The footer's command runs in the install the hook runs from: the exact command a real hook run
// wrote is run in a shell in the project, and must move the session to the phase it names.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { flow, hook, readSession } from './helpers/hooks.mjs';
import { bareProject, copiedDist, dependencyProject, globalBin, pathWith } from './helpers/installs.mjs';
import { cleanEnv, DIST } from './helpers/run.mjs';

/** Runs pre_delegate of `dist` in `proj` and returns the session id and the command its footer suggests. */
async function footerCommand(dist, proj, env) {
  const run = await hook(path.join(dist, 'hooks', 'pre_delegate.js'), proj, flow().pre, env);
  assert.equal(run.code, 0, run.stderr);
  const prompt = run.json?.hookSpecificOutput?.updatedInput?.prompt;
  assert.ok(prompt, `no footer in the hook's answer: ${run.stdout}`);
  const id = /Your session: (\S+)\./.exec(prompt)?.[1];
  const command = /you may instead run `([^`]+)`/.exec(prompt)?.[1];
  assert.ok(id && command, `no session or command in the footer:\n${prompt}`);
  return { id, command };
}

/** Runs the command as the subagent's shell would: in the project, with `PATH`, none of our variables. */
function runSuggested(command, proj, env) {
  const line = command.replace('<phase>', 'approval');
  const run = spawnSync('/bin/sh', ['-c', line], {
    cwd: proj.dir,
    env: cleanEnv({ HOME: proj.home, npm_config_offline: 'true', npm_config_update_notifier: 'false', ...env }),
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, `\`${line}\` exited ${run.status}: ${run.stderr}`);
  return line;
}

test('in a project that has the package as a dependency, the footer suggests npx, which works', async (t) => {
  const proj = dependencyProject(t);
  const env = { PATH: pathWith() };
  const { id, command } = await footerCommand(proj.dist, proj, env);
  assert.match(command, /^npx --no agent-session update /);
  runSuggested(command, proj, env);
  assert.equal(readSession(proj.store, id).phase, 'approval');
});

test('with agent-session on PATH linking to the running package, the footer suggests the bare name', async (t) => {
  const proj = bareProject(t);
  const env = { PATH: pathWith(globalBin(t)) };
  const { id, command } = await footerCommand(DIST, proj, env);
  assert.match(command, /^agent-session update /);
  runSuggested(command, proj, env);
  assert.equal(readSession(proj.store, id).phase, 'approval');
});

test('otherwise the footer names the CLI by its absolute path, quoted for the shell', async (t) => {
  const proj = bareProject(t);
  const dist = copiedDist(t);
  // An agent-session on PATH that is another copy of the package is not the running one.
  const env = { PATH: pathWith(globalBin(t)) };
  const { id, command } = await footerCommand(dist, proj, env);
  assert.ok(command.startsWith(`node '${dist.replace(/'/g, `'\\''`)}/bin/agent-session.js' update `), command);
  runSuggested(command, proj, { PATH: pathWith() });
  assert.equal(readSession(proj.store, id).phase, 'approval');
});
