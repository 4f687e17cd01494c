// `agent-session install` end to end with the REAL Claude Code CLI (pinned in install-claude.mjs),
// driven offline by a scripted Messages API: installed from a subfolder of a git project, installed as
// a dependency and committed for a clone that only runs `npm ci`, and a package removed under
// settings that still name it. Facts about the real CLI: NOTES.md.
//   AGENT_SESSION_DIST=.build/<you>/dist node --test tests/e2e/install.test.mjs
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DIST, ROOT, cleanEnv, runCli, runNode } from '../helpers/run.mjs';
import { ensureClaude } from './install-claude.mjs';
import { makeProject, runClaude } from './harness.mjs';
import { isSubagent, lastToolResult, startMockApi } from './mock-api.mjs';

const run = promisify(execFile);
const SUB_DONE = 'E2E-SUB: the work is done.';
const MAIN_FINAL = 'E2E-MAIN: all done.';
const DESCRIPTION = 'E2E delegated task';
// A hook that failed, as Claude Code's debug log reports it ("Hook PreToolUse:Agent (PreToolUse) error: ...").
const HOOK_ERROR = /\[ERROR\][^\n]*Hook \S+ \(\w+\) error/;

/** One foreground delegation: the main agent calls Agent once, the subagent answers, the main agent ends. */
const delegation = (req) => {
  if (isSubagent(req)) return { text: SUB_DONE };
  if (lastToolResult(req)) return { text: MAIN_FINAL };
  return {
    toolUse: {
      name: 'Agent',
      input: {
        description: DESCRIPTION,
        prompt: 'E2E-SUBAGENT reply',
        subagent_type: 'general-purpose',
        run_in_background: false,
      },
    },
  };
};

/** A temp project with no .claude/ yet, a git work tree, with its own HOME and TMPDIR. */
async function gitProject(t) {
  const project = makeProject();
  t.after(() => project.cleanup());
  rmSync(join(project.dir, '.claude'), { recursive: true });
  await git(project, 'init', '-q');
  return project;
}

const env = (project) => cleanEnv({ HOME: project.home });

function git(project, ...args) {
  return run('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', ...args], {
    cwd: project.dir,
    env: env(project),
  });
}

/** npm with this machine's own configuration and cache: the registry is only asked for what the cache lacks. */
function npm(cwd, ...args) {
  return run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    env: cleanEnv(),
    timeout: 120_000,
  });
}

/** Runs `claude -p` in `dir` with the one-delegation script; asserts it exits 0 with the main agent's answer. */
async function delegate(t, project, dir = project.dir, args = []) {
  const api = await startMockApi({ script: delegation });
  t.after(() => api.close());
  const result = await runClaude({
    projectDir: dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E prompt',
    args,
  });
  assert.deepEqual(api.scriptErrors(), []);
  assert.equal(result.code, 0, `stderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  assert.equal(result.json?.result, MAIN_FINAL);
  return { api, result };
}

/** The sessions of the store in `dir` as the built CLI lists them, each read with `get`. */
async function sessions(project, dir = project.dir) {
  const listed = await runCli(['list', '--json'], { cwd: dir, env: env(project) });
  assert.equal(listed.code, 0, listed.stderr);
  const { sessions: found } = JSON.parse(listed.stdout);
  return Promise.all(
    found.map(async (s) => {
      const got = await runCli(['get', s.agent_id, '--json'], { cwd: dir, env: env(project) });
      assert.equal(got.code, 0, got.stderr);
      return JSON.parse(got.stdout);
    }),
  );
}

function assertOneCompleted(records) {
  assert.equal(records.length, 1, JSON.stringify(records, null, 2));
  const [s] = records;
  assert.equal(s.phase, 'completed');
  assert.equal(s.outcome, 'completed');
  assert.equal(s.purpose, DESCRIPTION);
  assert.equal(s.summary, SUB_DONE);
  assert.ok(s.finalized_at);
}

/** The package as `npm pack` makes it from the build under test: package.json, dist/, the plugin files. */
async function packTarball(dir) {
  const pkg = join(dir, 'package');
  mkdirSync(join(pkg, 'hooks'), { recursive: true });
  for (const file of ['package.json', 'SESSION_README.md', join('hooks', 'hooks.json')])
    cpSync(join(ROOT, file), join(pkg, file));
  cpSync(join(ROOT, '.claude-plugin'), join(pkg, '.claude-plugin'), { recursive: true });
  cpSync(DIST, join(pkg, 'dist'), { recursive: true });
  const { stdout } = await npm(pkg, 'pack', '--ignore-scripts', '--pack-destination', dir);
  return join(dir, stdout.trim().split('\n').at(-1));
}

before(
  async () => {
    await ensureClaude();
  },
  { timeout: 10 * 60_000 },
);

test(
  '(g) install from a subfolder of a git project writes the root settings.local.json; ' +
    'claude started at the root records and finalizes the delegation',
  { timeout: 120_000 },
  async (t) => {
    const project = await gitProject(t);
    const sub = join(project.dir, 'src', 'lib');
    mkdirSync(sub, { recursive: true });
    const planned = await runCli(['install', '--dry-run', '--json'], { cwd: sub, env: env(project) });
    assert.equal(planned.code, 0, planned.stderr);
    const report = JSON.parse(planned.stdout);
    assert.deepEqual(report.project, { dir: project.dir, reason: 'git' });
    assert.equal(report.scope, 'local');
    assert.equal(report.file, join(project.dir, '.claude', 'settings.local.json'));
    assert.deepEqual(report.warnings, []);
    assert.deepEqual(readdirSync(project.dir).sort(), ['.git', 'src']);

    const installed = await runCli(['install'], { cwd: sub, env: env(project) });
    assert.equal(installed.code, 0, installed.stderr);
    assert.match(installed.stdout, new RegExp(`^Project ${project.dir} \\(git work tree root of ${sub}\\)\\.\n`));
    assert.match(installed.stdout, new RegExp(`^Installed the agent-session hooks in ${report.file}\\.$`, 'm'));
    const hook = join(DIST, 'hooks', 'pre_delegate.js');
    const settings = JSON.parse(readFileSync(report.file, 'utf8'));
    assert.equal(settings.hooks.PreToolUse[0].hooks[0].command, `test ! -f ${hook} || node ${hook}`);
    assert.equal(readFileSync(report.file, 'utf8'), report.content);
    assert.deepEqual(readdirSync(project.dir).sort(), ['.claude', '.git', 'src']);
    assert.deepEqual(readdirSync(join(project.dir, '.claude')), ['settings.local.json']);
    assert.deepEqual(readdirSync(sub), []);

    // Now the root has .claude/: the same project, found for another reason.
    const again = await runCli(['install', '--json'], { cwd: sub, env: env(project) });
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout).project, { dir: project.dir, reason: 'claude-dir' });
    assert.equal(JSON.parse(again.stdout).changed, false);

    await delegate(t, project);
    assertOneCompleted(await sessions(project));
  },
);

test(
  '(h) a project depending on the package commits settings that a clone runs after npm ci; ' +
    '(i) after npm uninstall a delegation completes with no hook error',
  { timeout: 240_000 },
  async (t) => {
    const a = await gitProject(t);
    const tarball = await packTarball(a.root);
    writeFileSync(join(a.dir, 'package.json'), `${JSON.stringify({ name: 'e2e-project', private: true }, null, 2)}\n`);
    writeFileSync(join(a.dir, '.gitignore'), 'node_modules/\n');
    // Relative, so that the clone beside it finds the same tarball.
    await npm(a.dir, 'install', '--save-dev', join('..', tarball.slice(a.root.length + 1)));
    const bin = join(a.dir, 'node_modules', '.bin', 'agent-session');
    const installed = await runNode(bin, ['install', '--json'], { cwd: a.dir, env: env(a) });
    assert.equal(installed.code, 0, installed.stderr);
    const report = JSON.parse(installed.stdout);
    assert.equal(report.scope, 'project');
    assert.equal(report.file, join(a.dir, '.claude', 'settings.json'));
    assert.deepEqual(report.warnings, []);
    const shared = readFileSync(report.file, 'utf8');
    const file = '"$CLAUDE_PROJECT_DIR/node_modules/agent-session/dist/hooks/pre_delegate.js"';
    assert.equal(JSON.parse(shared).hooks.PreToolUse[0].hooks[0].command, `test ! -f ${file} || node ${file}`);
    await git(a, 'add', '-A');
    await git(a, 'commit', '-q', '-m', 'agent-session hooks');
    assert.equal((await git(a, 'status', '--porcelain')).stdout, '');

    await t.test('(h) a clone runs the hooks after npm ci, with no reinstall', async (t) => {
      const b = join(a.root, 'clone');
      await run('git', ['clone', '-q', a.dir, b], { env: env(a) });
      await npm(b, 'ci');
      await delegate(t, a, b);
      assertOneCompleted(await sessions(a, b));
      assert.equal(readFileSync(join(b, '.claude', 'settings.json'), 'utf8'), shared);
    });

    await t.test('(i) npm uninstall: the hooks are a quiet no-op', async (t) => {
      await npm(a.dir, 'uninstall', 'agent-session');
      assert.equal(existsSync(join(a.dir, 'node_modules', 'agent-session')), false);
      const debug = join(a.root, 'debug-uninstalled.log');
      const { result } = await delegate(t, a, a.dir, ['--debug-file', debug]);
      const log = readFileSync(debug, 'utf8');
      assert.doesNotMatch(log, HOOK_ERROR);
      assert.doesNotMatch(`${result.stdout}${result.stderr}`, /hook|Cannot find module/i);
      // The hooks did run (and found nothing to run): the log names each with its exit status.
      for (const event of ['PreToolUse:Agent', 'SubagentStart', 'SubagentStop'])
        assert.match(log, new RegExp(`Hooks: ${event}[^\\n]*node_modules/agent-session[^\\n]*finished with status 0`));
      assert.equal(existsSync(join(a.dir, '.claude', 'session')), false, 'a session was recorded');

      // The same missing file run without the guard: the error the guard avoids, in the same log.
      const missing = join(a.dir, 'node_modules', 'agent-session', 'dist', 'hooks', 'pre_delegate.js');
      const settings = JSON.parse(shared);
      settings.hooks.PreToolUse[0].hooks[0].command = `node ${missing}`;
      writeFileSync(join(a.dir, '.claude', 'settings.json'), JSON.stringify(settings));
      const unguarded = join(a.root, 'debug-unguarded.log');
      await delegate(t, a, a.dir, ['--debug-file', unguarded]);
      assert.match(readFileSync(unguarded, 'utf8'), HOOK_ERROR);
    });
  },
);
