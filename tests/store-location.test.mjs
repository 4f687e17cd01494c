// Where the store is found (SESSION_README.md, "Where sessions live"), through the built CLI.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { git } from './helpers/git.mjs';
import { fixture } from './helpers/hooks.mjs';
import { cleanEnv, DIST, runCli, runNode, tempDir } from './helpers/run.mjs';

async function createIn(cwd, env, id = 's1') {
  const result = await runCli(['create', '--agent', 'a', '--id', id, '--json'], { cwd, env: cleanEnv(env) });
  assert.equal(result.code, 0, result.stderr);
}

test('the nearest ancestor with .claude/ is the project, but ~/.claude is not a project marker', async (t) => {
  const home = tempDir(t);
  mkdirSync(path.join(home, '.claude'));
  const work = path.join(home, 'code', 'app', 'src');
  mkdirSync(work, { recursive: true });
  await createIn(work, { HOME: home });
  assert.ok(
    existsSync(path.join(work, '.claude', 'session', 's1', 'state.json')),
    'no project above: the working directory',
  );
  assert.ok(!existsSync(path.join(home, '.claude', 'session')), 'never the user settings directory');

  mkdirSync(path.join(home, 'code', 'app', '.claude'));
  const sibling = path.join(home, 'code', 'app', 'lib');
  mkdirSync(sibling);
  await createIn(sibling, { HOME: home }, 's2');
  assert.ok(
    existsSync(path.join(home, 'code', 'app', '.claude', 'session', 's2', 'state.json')),
    'the nearest ancestor with .claude/',
  );
});

test('with no .claude/ in the work tree, the git root is the project, and the search stops there', async (t) => {
  const root = tempDir(t);
  // A stray .claude/ above the repository is not the repository's project.
  mkdirSync(path.join(root, '.claude'));
  const repo = path.join(root, 'repo');
  mkdirSync(path.join(repo, '.git'), { recursive: true });
  const work = path.join(repo, 'src', 'lib');
  mkdirSync(work, { recursive: true });
  await createIn(work, { HOME: path.join(root, 'home') });
  assert.ok(existsSync(path.join(repo, '.claude', 'session', 's1', 'state.json')), 'the git work tree root');
  assert.ok(!existsSync(path.join(work, '.claude')), 'not the working directory');
  assert.ok(!existsSync(path.join(root, '.claude', 'session')), 'not the .claude/ above the repository');

  // A linked work tree or a submodule has a .git file: its root too.
  const linked = path.join(root, 'linked');
  mkdirSync(path.join(linked, 'pkg'), { recursive: true });
  writeFileSync(path.join(linked, '.git'), 'gitdir: ../repo/.git/worktrees/linked\n');
  await createIn(path.join(linked, 'pkg'), { HOME: path.join(root, 'home') }, 's2');
  assert.ok(existsSync(path.join(linked, '.claude', 'session', 's2', 'state.json')));
});

test('in the home directory itself, ~/.claude is its project', async (t) => {
  const home = tempDir(t);
  mkdirSync(path.join(home, '.claude'));
  await createIn(home, { HOME: home });
  assert.ok(existsSync(path.join(home, '.claude', 'session', 's1', 'state.json')));
});

test('--dir beats AGENT_SESSION_DIR, which beats CLAUDE_PROJECT_DIR', async (t) => {
  const root = tempDir(t);
  const env = {
    HOME: root,
    AGENT_SESSION_DIR: path.join(root, 'from-env'),
    CLAUDE_PROJECT_DIR: path.join(root, 'proj'),
  };
  const viaDir = await runCli(['create', '--agent', 'a', '--id', 'd1', '--dir', 'from-flag'], {
    cwd: root,
    env: cleanEnv(env),
  });
  assert.equal(viaDir.code, 0, viaDir.stderr);
  assert.ok(existsSync(path.join(root, 'from-flag', 'd1', 'state.json')));
  await createIn(root, env);
  assert.ok(existsSync(path.join(root, 'from-env', 's1', 'state.json')));
  mkdirSync(path.join(root, 'proj'));
  await createIn(root, { HOME: root, CLAUDE_PROJECT_DIR: path.join(root, 'proj') });
  assert.ok(existsSync(path.join(root, 'proj', '.claude', 'session', 's1', 'state.json')));
});

test('a CLAUDE_PROJECT_DIR naming no directory is refused (exit 2), hooks fail open, nothing made', async (t) => {
  const root = tempDir(t);
  const missing = path.join(root, 'no-such-project');
  const env = cleanEnv({ HOME: root, CLAUDE_PROJECT_DIR: missing });
  for (const args of [['create', '--agent', 'a'], ['list'], ['update', 's1', '--phase', 'approval']]) {
    const result = await runCli(args, { cwd: root, env });
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(
      result.stderr,
      `agent-session: CLAUDE_PROJECT_DIR names no directory: ${missing} ` +
        '(Claude Code sets it to the project it runs in; unset it, or set it to the project directory)\n',
    );
  }
  const payload = fixture('pretooluse-task', { cwd: root, session_id: 'sess-1', tool_use_id: 'toolu_1' });
  for (const script of ['pre_delegate', 'subagent_stop']) {
    const hooked = await runNode(path.join(DIST, 'hooks', `${script}.js`), [], {
      cwd: root,
      env: { ...env, CLAUDECODE: '1' },
      input: JSON.stringify(script === 'pre_delegate' ? payload : fixture('sessionstart', { cwd: root })),
    });
    assert.equal(hooked.code, 0);
    assert.equal(hooked.stdout, '');
  }
  assert.ok(!existsSync(missing), 'no directory made there');
  // With --dir or AGENT_SESSION_DIR the project is not used, and not checked.
  const viaDir = await runCli(['create', '--agent', 'a', '--dir', 'store'], { cwd: root, env });
  assert.equal(viaDir.code, 0, viaDir.stderr);
});

test('read-only commands never create the store', async (t) => {
  const root = tempDir(t);
  const env = cleanEnv({ HOME: root });
  for (const args of [['list'], ['get', 'x'], ['show', 'x'], ['should-resume', 'x'], ['cleanup', '--dry-run']]) {
    const result = await runCli([...args, '--json'], { cwd: root, env });
    assert.notEqual(result.code, 2, `${args}: ${result.stderr}`);
  }
  assert.ok(!existsSync(path.join(root, '.claude')), 'a read created directories');
});

test('a worktree Claude Code made for a subagent (.claude/worktrees/<name>) belongs to its project', async (t) => {
  const project = tempDir(t);
  git(project, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(project, 'README'), 'the project\n');
  // The committed settings: the worktree's checkout has a .claude/ of its own.
  mkdirSync(path.join(project, '.claude'));
  writeFileSync(path.join(project, '.claude', 'settings.json'), '{}\n');
  git(project, 'add', '-A');
  git(project, 'commit', '-q', '-m', 'first');
  await createIn(project, {}, 'paused1');
  const worktree = path.join(project, '.claude', 'worktrees', 'agent-a1b2c3');
  git(project, 'worktree', 'add', '-q', worktree);
  assert.ok(existsSync(path.join(worktree, '.claude', 'settings.json')));
  const sub = path.join(worktree, 'src');
  mkdirSync(sub);
  for (const cwd of [worktree, sub]) {
    const updated = await runCli(['update', 'paused1', '--phase', 'approval'], { cwd, env: cleanEnv() });
    assert.equal(updated.code, 0, updated.stderr);
  }
  const got = await runCli(['get', 'paused1', '--json'], { cwd: project, env: cleanEnv() });
  assert.equal(JSON.parse(got.stdout).phase, 'approval');
  assert.ok(!existsSync(path.join(worktree, '.claude', 'session')), 'no store inside the worktree');
  const status = await runCli(['status', '--json'], { cwd: worktree, env: cleanEnv() });
  assert.deepEqual(JSON.parse(status.stdout).project, { dir: project, reason: 'claude-worktree' });
  assert.deepEqual(
    JSON.parse(status.stdout).findings.filter((f) => f.check === 'project'),
    [],
    'no advice to start claude elsewhere',
  );
  // install there changes the project's settings, and says so.
  const install = await runCli(['install', '--dry-run', '--json'], { cwd: worktree, env: cleanEnv() });
  assert.equal(install.code, 0, install.stderr);
  assert.ok(
    JSON.parse(install.stdout).warnings.includes(
      `run inside a worktree Claude Code made: this install is of the project ${project}, ` +
        'for every conversation and teammate using it',
    ),
    install.stdout,
  );
  const listed = await runCli(['list', '--json'], { cwd: sub, env: cleanEnv() });
  assert.deepEqual(
    JSON.parse(listed.stdout).sessions.map((s) => s.agent_id),
    ['paused1'],
  );

  // Reached through a link to the project, the same worktree (git records real paths).
  const link = path.join(tempDir(t), 'link');
  symlinkSync(project, link);
  const linked = path.join(link, '.claude', 'worktrees', 'agent-a1b2c3');
  const viaLink = await runCli(['update', 'paused1', '--phase', 'approval'], { cwd: linked, env: cleanEnv() });
  assert.equal(viaLink.code, 0, viaLink.stderr);
  // A worktree made inside that worktree (claude -w, then a subagent's own) is the project's too.
  const nested = path.join(worktree, '.claude', 'worktrees', 'agent-d4e5');
  git(project, 'worktree', 'add', '-q', nested);
  const deep = await runCli(['update', 'paused1', '--phase', 'planning'], { cwd: nested, env: cleanEnv() });
  assert.equal(deep.code, 0, deep.stderr);
  // A store inside a worktree (a committed one checks out in every worktree) is not the project's.
  const started = path.join(project, '.claude', 'worktrees', 'started-here');
  git(project, 'worktree', 'add', '-q', started);
  await createIn(started, { CLAUDE_PROJECT_DIR: started }, 'own1');
  const own = await runCli(['list', '--json'], { cwd: started, env: cleanEnv() });
  assert.deepEqual(
    JSON.parse(own.stdout).sessions.map((s) => s.agent_id),
    ['paused1'],
  );
  // A project that is itself a linked work tree of another checkout: its agents' worktrees are its own.
  const linkedProject = path.join(tempDir(t), 'linked');
  git(project, 'worktree', 'add', '-q', linkedProject);
  await createIn(linkedProject, {}, 'lp1');
  const agentOfLinked = path.join(linkedProject, '.claude', 'worktrees', 'agent-f6');
  git(linkedProject, 'worktree', 'add', '-q', agentOfLinked);
  const fromLinked = await runCli(['update', 'lp1', '--phase', 'approval'], { cwd: agentOfLinked, env: cleanEnv() });
  assert.equal(fromLinked.code, 0, fromLinked.stderr);

  // Not a worktree of this project: a clone (its .git a directory), a worktree of another repository,
  // a .git file naming no work tree. Each is a project of its own.
  const other = tempDir(t);
  git(other, 'init', '-q', '-b', 'main');
  git(other, 'commit', '-q', '--allow-empty', '-m', 'first');
  const foreign = path.join(project, '.claude', 'worktrees', 'foreign');
  git(other, 'worktree', 'add', '-q', foreign);
  const clone = path.join(project, '.claude', 'worktrees', 'a-clone');
  git(project, 'clone', '-q', project, clone);
  const junk = path.join(project, '.claude', 'worktrees', 'junk');
  mkdirSync(junk);
  writeFileSync(path.join(junk, '.git'), 'not a gitdir line\n');
  for (const dir of [clone, foreign, junk]) {
    const list = await runCli(['list'], { cwd: dir, env: cleanEnv() });
    assert.equal(list.code, 1, `${dir}: ${list.stderr}`);
    assert.match(list.stderr, new RegExp(`the store ${dir}/\\.claude/session does not exist`));
  }
});
