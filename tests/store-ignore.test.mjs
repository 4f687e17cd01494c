// The store keeps itself out of git (SESSION_README.md, "Where sessions live"): whatever makes the
// store (the CLI, the hooks, a hook failing) writes `<store>/.gitignore`, so `git status` never shows
// session records, and no other command minds the file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { flow, hookLog, life, onlySession, pre, sessionIds } from './helpers/hooks.mjs';
import { cleanEnv, cli, cliJson, loadLibrary, runCli, tempDir } from './helpers/run.mjs';

const IGNORE = "# agent-session's session store: git ignores all of it\n*\n";

/** A fresh git repository with one commit and no `.claude/`: the project the hooks and the CLI find. */
function gitProject(t) {
  const dir = tempDir(t, 'agent-session-git-');
  const git = (...args) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: cleanEnv({ HOME: dir }) });
  git('init', '-q');
  writeFileSync(path.join(dir, 'README'), 'a project\n');
  git('add', 'README');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start');
  // -uall: every untracked file by name, not a collapsed `?? .claude/`.
  const status = () => git('status', '--porcelain', '--untracked-files=all');
  return { dir, store: path.join(dir, '.claude', 'session'), status };
}

async function createIn(cwd, id, env = {}) {
  const result = await runCli(['create', '--agent', 'a', '--id', id, '--json'], {
    cwd,
    env: cleanEnv({ HOME: cwd, ...env }),
  });
  assert.equal(result.code, 0, result.stderr);
}

test('a store the CLI makes in a git project ignores itself: git status shows nothing', async (t) => {
  const p = gitProject(t);
  await createIn(path.join(p.dir), 's1');
  assert.ok(existsSync(path.join(p.store, 's1', 'state.json')));
  assert.equal(readFileSync(path.join(p.store, '.gitignore'), 'utf8'), IGNORE);
  assert.equal(p.status(), '');
  // Also the later areas: the trash, the audit trail's rotations.
  assert.equal((await cli(p.store, ['finalize', 's1', 'completed'])).code, 0);
  assert.equal((await cli(p.store, ['delete', 's1'])).code, 0);
  assert.equal(p.status(), '');
});

test('a store the library makes ignores itself', async (t) => {
  const p = gitProject(t);
  const { Sessions } = await loadLibrary();
  const sessions = Sessions.open({ cwd: p.dir, env: { HOME: p.dir } });
  assert.equal(sessions.store.dir, p.store);
  await sessions.create({ agentName: 'a', purpose: 'p' });
  assert.equal(readFileSync(path.join(p.store, '.gitignore'), 'utf8'), IGNORE);
  assert.equal(p.status(), '');
});

test('a store the hooks make ignores itself, also when only the hook log makes it', async (t) => {
  const p = gitProject(t);
  const proj = { dir: p.dir, store: p.store };
  const f = flow({ background: false });
  for (const [run, payload] of [
    [pre, f.pre],
    [life, f.start],
    [life, f.stop('Done.')],
    [life, f.post],
  ]) {
    const r = await run(proj, payload);
    assert.equal(r.code, 0, r.stderr);
  }
  assert.equal(onlySession(p.store).phase, 'completed');
  assert.equal(readFileSync(path.join(p.store, '.gitignore'), 'utf8'), IGNORE);
  assert.equal(p.status(), '');

  // A hook that fails before it opens the store (a config it refuses) still writes its log there.
  const failing = gitProject(t);
  writeFileSync(path.join(failing.dir, 'bad.json'), '{"resume_window_minutes": "2h"}\n');
  const bad = await pre({ dir: failing.dir, store: failing.store }, f.pre, {
    AGENT_SESSION_CONFIG: path.join(failing.dir, 'bad.json'),
  });
  assert.deepEqual([bad.code, bad.stdout], [0, '']);
  assert.match(hookLog(failing.store), /resume_window_minutes/);
  assert.equal(readFileSync(path.join(failing.store, '.gitignore'), 'utf8'), IGNORE);
  assert.doesNotMatch(failing.status(), /\.claude/);
});

test('an existing store without the file gets it from its next write; one that is there is left alone', async (t) => {
  const p = gitProject(t);
  await createIn(p.dir, 's1');
  // A store made by an older version: no .gitignore, git sees the records.
  rmSync(path.join(p.store, '.gitignore'));
  assert.match(p.status(), /\?\? \.claude\/session\/s1\/state\.json/);
  // Reading writes nothing.
  assert.equal((await cli(p.store, ['list'])).code, 0);
  assert.equal(existsSync(path.join(p.store, '.gitignore')), false);
  assert.equal((await cli(p.store, ['update', 's1', '--phase', 'executing'])).code, 0);
  assert.equal(readFileSync(path.join(p.store, '.gitignore'), 'utf8'), IGNORE);
  assert.equal(p.status(), '');

  // An empty file is a write cut short: written again.
  writeFileSync(path.join(p.store, '.gitignore'), '');
  assert.equal((await cli(p.store, ['update', 's1', '--metadata', '{"n":1}'])).code, 0);
  assert.equal(readFileSync(path.join(p.store, '.gitignore'), 'utf8'), IGNORE);

  // The user's own content (here: commit the store after all) is never overwritten.
  writeFileSync(path.join(p.store, '.gitignore'), '# committed on purpose\n');
  assert.equal((await cli(p.store, ['update', 's1', '--metadata', '{"n":2}'])).code, 0);
  assert.equal(readFileSync(path.join(p.store, '.gitignore'), 'utf8'), '# committed on purpose\n');
  assert.match(p.status(), /\?\? \.claude\/session\/s1\/state\.json/);
});

test('list, doctor, cleanup and export do not mind the file', async (t) => {
  const p = gitProject(t);
  await createIn(p.dir, 's1');
  await createIn(p.dir, 's2');
  assert.ok(existsSync(path.join(p.store, '.gitignore')));
  assert.deepEqual((await cliJson(p.store, ['list'])).sessions.map((s) => s.agent_id).sort(), ['s1', 's2']);
  const doctor = await cliJson(p.store, ['doctor']);
  assert.deepEqual([doctor.healthy, doctor.findings], [true, []]);
  const cleanup = await cli(p.store, ['cleanup', '--json']);
  assert.equal(cleanup.code, 0, cleanup.stderr);
  assert.deepEqual(sessionIds(p.store), ['s1', 's2'], 'fresh sessions stay');
  const bundle = path.join(p.dir, 'out.json');
  assert.equal((await cli(p.store, ['export', '--all', '-o', bundle])).code, 0);
  const other = path.join(tempDir(t), 'store');
  const imported = await cli(other, ['import', bundle, '--json']);
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(sessionIds(other), ['s1', 's2']);
  assert.equal(readFileSync(path.join(other, '.gitignore'), 'utf8'), IGNORE, 'an import makes a store too');
  assert.ok(existsSync(path.join(p.store, '.gitignore')));
});

test('a link at the name is never written through, and doctor reports it', async (t) => {
  const p = gitProject(t);
  mkdirSync(p.store, { recursive: true });
  const outside = path.join(tempDir(t), 'victim');
  symlinkSync(outside, path.join(p.store, '.gitignore'));
  await createIn(p.dir, 's1');
  assert.equal(existsSync(outside), false);
  assert.ok(lstatSync(path.join(p.store, '.gitignore')).isSymbolicLink());
  assert.equal(readlinkSync(path.join(p.store, '.gitignore')), outside);
  const doctor = await cli(p.store, ['doctor', '--json']);
  assert.deepEqual(
    doctor.json.findings.map((f) => [f.check, f.subject]),
    [['store', path.join(p.store, '.gitignore')]],
  );
});
