// delete's work guard on sessions the real hooks made: the shared project checkout is shown, never
// guarded; a worktree Claude Code made for an agent (`isolation: "worktree"`) is the session's own.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cli, tempDir } from './helpers/run.mjs';
import { git } from './helpers/git.mjs';
import { flow, life, onlySession, pre, project } from './helpers/hooks.mjs';
import { build, liveIds } from './helpers/trees.mjs';

/** A project that is a git repository with one commit. */
function gitProject(t) {
  const proj = project(t);
  git(proj.dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(proj.dir, 'a.txt'), 'one\n');
  git(proj.dir, 'add', 'a.txt');
  git(proj.dir, 'commit', '-q', '-m', 'first');
  return proj;
}

/** One foreground delegation through the built hooks, ending completed; `agentCwd` is SubagentStart's cwd. */
async function delegate(proj, { isolation, agentCwd = proj.dir, agentId = 'a1' } = {}) {
  const f = flow({ background: false, agentId });
  const input = { ...f.pre.tool_input, ...(isolation ? { isolation } : {}) };
  for (const [run, payload] of [
    [pre, { ...f.pre, cwd: proj.dir, tool_input: input }],
    [life, { ...f.start, cwd: agentCwd }],
    [life, { ...f.stop('Done.'), cwd: agentCwd }],
    [life, { ...f.post, cwd: proj.dir, tool_input: input }],
  ]) {
    const r = await run(proj, payload);
    assert.equal(r.code, 0, r.stderr);
  }
  const record = onlySession(proj.store);
  assert.equal(record.phase, 'completed');
  return record;
}

test('a completed hook-made session in a project with untracked files is deleted; the checkout is shown', async (t) => {
  const proj = gitProject(t);
  const record = await delegate(proj);
  for (const name of ['x.txt', 'y.txt', 'z.txt']) writeFileSync(path.join(proj.dir, name), 'the project\n');
  writeFileSync(path.join(proj.dir, 'a.txt'), 'one\nchanged by the person\n');

  const preview = await cli(proj.store, ['delete', record.agent_id, '--dry-run', '--json']);
  assert.deepEqual(preview.json.blocked, []);
  assert.deepEqual(preview.json.work, []);
  const deleted = await cli(proj.store, ['delete', record.agent_id]);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, /^Deleted 1 session\(s\)/);
  assert.ok(
    deleted.stdout.includes(
      `Checkout ${proj.dir} (shared, not the session's: not guarded, left as it is): ` +
        '1 changed file(s), 3 untracked file(s), 0 unpushed commit(s)',
    ),
    deleted.stdout,
  );
  assert.deepEqual(liveIds(proj.store), []);
  assert.equal(readFileSync(path.join(proj.dir, 'x.txt'), 'utf8'), 'the project\n');
});

test('a session owns the git worktree its agent ran in: its unsaved work blocks until --discard-work', async (t) => {
  const proj = gitProject(t);
  // Where and how Claude Code 2.1.330 makes an agent's worktree (tests/e2e/NOTES.md, "Worktrees").
  const worktree = path.join(proj.dir, '.claude', 'worktrees', 'agent-a1');
  git(proj.dir, 'worktree', 'add', '-q', '-b', 'worktree-agent-a1', worktree);
  const record = await delegate(proj, { isolation: 'worktree', agentCwd: worktree });
  assert.deepEqual(record.claude.worktrees, [worktree]);
  assert.equal(record.claude.isolation, 'worktree');
  const id = record.agent_id;

  const clean = await cli(proj.store, ['delete', id, '--dry-run', '--json']);
  assert.deepEqual(clean.json.blocked, []);
  writeFileSync(path.join(worktree, 'a.txt'), 'one\nthe agent\n');
  writeFileSync(path.join(worktree, 'new.txt'), 'the agent\n');

  const refused = await cli(proj.store, ['delete', id]);
  assert.equal(refused.code, 3);
  assert.ok(
    refused.stderr.includes(`unsaved work in its own work tree ${worktree}: 1 changed file(s)`),
    refused.stderr,
  );
  assert.match(refused.stderr, /see --discard-work, --preserve-work/);
  const running = await cli(proj.store, ['delete', id, '--force-running']);
  assert.equal(running.code, 3, 'the switch for running sessions does not discard work');
  assert.deepEqual(liveIds(proj.store), [id]);

  const deleted = await cli(proj.store, ['delete', id, '--discard-work', '--json']);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.deepEqual(deleted.json.work, []);
  assert.match(deleted.stderr, /was left there because of --discard-work/);
  assert.deepEqual(liveIds(proj.store), []);
  const audit = readFileSync(path.join(proj.store, 'audit.jsonl'), 'utf8').trim().split('\n').map(JSON.parse);
  assert.deepEqual(audit.find((e) => e.action === 'delete').details.discarded_work, [worktree]);
  // delete never removes a work tree: the agent's worktree, its branch and its change stay.
  assert.equal(readFileSync(path.join(worktree, 'a.txt'), 'utf8'), 'one\nthe agent\n');
  assert.ok(git(proj.dir, 'worktree', 'list', '--porcelain').includes(`worktree ${worktree}\n`));
});

test('a session without isolation records no worktree, whatever its agent cwd', async (t) => {
  const proj = gitProject(t);
  const elsewhere = path.join(proj.dir, 'sub');
  mkdirSync(elsewhere);
  const record = await delegate(proj, { agentCwd: elsewhere });
  assert.equal(record.claude.worktrees, undefined);
  assert.equal(record.claude.isolation, undefined);
});

test('--force-running and --discard-work are separate switches; --force is both', async (t) => {
  const root = tempDir(t);
  const repo = path.join(root, 'own');
  mkdirSync(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(repo, 'a.txt'), 'one\n');
  git(repo, 'add', 'a.txt');
  git(repo, 'commit', '-q', '-m', 'first');
  writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
  const dir = path.join(root, 'store');
  await build(dir, [
    { id: 'r', phase: 'executing', metadata: { worktree: repo } },
    { id: 'f', phase: 'executing', metadata: { worktree: repo } },
  ]);

  const onlyWork = await cli(dir, ['delete', 'r', '--discard-work']);
  assert.equal(onlyWork.code, 3);
  assert.match(onlyWork.stderr, /running \(phase executing\)/);
  assert.match(onlyWork.stderr, /\(see --force-running\)/);
  const onlyRunning = await cli(dir, ['delete', 'r', '--force-running']);
  assert.equal(onlyRunning.code, 3);
  assert.match(onlyRunning.stderr, /unsaved work in its own work tree/);
  const both = await cli(dir, ['delete', 'r', '--force-running', '--discard-work']);
  assert.equal(both.code, 0, both.stderr);
  const forced = await cli(dir, ['delete', 'f', '--force']);
  assert.equal(forced.code, 0, forced.stderr);
  assert.deepEqual(liveIds(dir), []);
  assert.ok(existsSync(path.join(repo, 'a.txt')));
});

test('a worktree that is gone, or only a plain folder inside the checkout now, guards nothing', async (t) => {
  const proj = gitProject(t);
  const worktree = path.join(proj.dir, '.claude', 'worktrees', 'agent-a1');
  git(proj.dir, 'worktree', 'add', '-q', '-b', 'worktree-agent-a1', worktree);
  const record = await delegate(proj, { isolation: 'worktree', agentCwd: worktree });
  writeFileSync(path.join(worktree, 'new.txt'), 'the agent\n');
  assert.equal((await cli(proj.store, ['delete', record.agent_id, '--dry-run', '--json'])).json.blocked.length, 1);
  git(proj.dir, 'worktree', 'remove', '--force', worktree);
  writeFileSync(path.join(proj.dir, 'a.txt'), 'one\nchanged by the person\n');
  assert.deepEqual((await cli(proj.store, ['delete', record.agent_id, '--dry-run', '--json'])).json.blocked, []);
  mkdirSync(path.join(worktree, 'left'), { recursive: true });
  writeFileSync(path.join(worktree, 'left', 'over.txt'), 'a leftover\n');
  const deleted = await cli(proj.store, ['delete', record.agent_id]);
  assert.equal(deleted.code, 0, deleted.stderr);
});
