// The package as a Claude Code plugin, with the REAL Claude Code CLI (pinned in install-claude.mjs),
// offline: an unpacked package of the build under test is a directory marketplace
// (.claude-plugin/marketplace.json); `claude plugin marketplace add` and `claude plugin install`
// install it non-interactively in a fresh git project with no other agent-session install; one
// `claude -p` delegation then creates and finalizes a session, and `git status` never shows the
// store. What Claude Code writes where: NOTES.md, "Plugins".
//   AGENT_SESSION_DIST=.build/<you>/dist node --test tests/e2e/plugin.test.mjs
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST, ROOT, cleanEnv, runCli } from '../helpers/run.mjs';
import { ensureClaude } from './install-claude.mjs';
import { cliEnv, makeProject, runClaude } from './harness.mjs';
import { isSubagent, lastToolResult, startMockApi } from './mock-api.mjs';

const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const MARKETPLACE = JSON.parse(readFileSync(join(ROOT, '.claude-plugin', 'marketplace.json'), 'utf8')).name;
const PLUGIN = `${PKG.name}@${MARKETPLACE}`;
const MAIN_FINAL = 'E2E-MAIN: all done.';
const SUB_DONE = 'E2E-SUB: the work is done.';
const CALL = {
  name: 'Agent',
  input: {
    description: 'E2E plugin task',
    prompt: 'E2E-SUBAGENT reply',
    subagent_type: 'general-purpose',
    run_in_background: false,
  },
};

/**
 * What `npm pack` would ship, from the build under test: the package.json "files" entries, with
 * the build as dist/. Without `dist`, an unbuilt checkout.
 */
function unpackedPackage(root, { dist = true } = {}) {
  const dir = join(root, 'package');
  mkdirSync(dir);
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  for (const entry of PKG.files) {
    const name = entry.replace(/\/$/, '');
    if (name === 'dist') {
      if (dist) cpSync(DIST, join(dir, 'dist'), { recursive: true });
    } else cpSync(join(ROOT, name), join(dir, name), { recursive: true });
  }
  return dir;
}

/**
 * A checkout after `npm run build`: the repository's tracked files as they are now, the build under
 * test as dist/. It has package-lock.json, so Claude Code runs `npm ci` in its copy of the plugin.
 */
function checkout(root) {
  const dir = join(root, 'checkout');
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) if (existsSync(join(ROOT, file))) cpSync(join(ROOT, file), join(dir, file));
  cpSync(DIST, join(dir, 'dist'), { recursive: true });
  return dir;
}

/** A fresh git project (one commit, an empty `.claude/` that git does not see) with its own HOME. */
function gitProject(t) {
  const project = makeProject({ prefix: 'agent-session-e2e-plugin-' });
  t.after(() => project.cleanup());
  const git = (...args) =>
    execFileSync('git', args, { cwd: project.dir, encoding: 'utf8', env: cleanEnv({ HOME: project.home }) });
  git('init', '-q');
  writeFileSync(join(project.dir, 'README'), 'a project\n');
  git('add', 'README');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start');
  // -uall: every untracked file by its name, never a collapsed `?? .claude/`.
  project.status = () => git('status', '--porcelain', '--untracked-files=all');
  return project;
}

/** `claude <args>` (not -p) with the harness's offline environment; resolves {code, stdout, stderr}. */
async function claude(project, args, env = {}) {
  const bin = await ensureClaude();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: project.dir,
      env: cliEnv({ apiUrl: 'http://127.0.0.1:9', home: project.home, tmp: project.tmp, env }),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Offline: the `npm ci` Claude Code runs for a plugin with a lockfile fails at once (and the install goes on).
const OFFLINE_NPM = { npm_config_registry: 'http://127.0.0.1:9/', npm_config_fetch_retries: '0' };

async function installPlugin(project, packageDir, scope) {
  const added = await claude(project, ['plugin', 'marketplace', 'add', packageDir]);
  assert.equal(added.code, 0, added.stdout + added.stderr);
  const installed = await claude(project, ['plugin', 'install', PLUGIN, '--scope', scope], OFFLINE_NPM);
  assert.equal(installed.code, 0, installed.stdout + installed.stderr);
}

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** The plugin's hook runs the debug log records: `{event, command, status}`, in order. */
function pluginHookRuns(debug) {
  const line = new RegExp(`Hooks: (\\w+)(?::\\S+)? \\[(.*)\\] \\(plugin ${PLUGIN}\\) finished with status (\\d+)`, 'g');
  return [...debug.matchAll(line)].map((m) => ({ event: m[1], command: m[2], status: Number(m[3]) }));
}

/** One foreground delegation through `claude -p`; returns the CLI's result and the debug log's text. */
async function delegate(t, project) {
  const api = await startMockApi({
    script: (req) => {
      if (isSubagent(req)) return { text: SUB_DONE };
      return lastToolResult(req) ? { text: MAIN_FINAL } : { toolUse: CALL };
    },
  });
  t.after(() => api.close());
  const debugFile = join(project.root, 'debug.log');
  const result = await runClaude({
    projectDir: project.dir,
    home: project.home,
    tmp: project.tmp,
    apiUrl: api.url,
    prompt: 'E2E prompt',
    args: ['--debug-file', debugFile],
    timeoutMs: 90_000,
  });
  assert.deepEqual(api.scriptErrors(), [], 'mock script threw');
  assert.equal(result.code, 0, `stderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  assert.equal(result.json?.result, MAIN_FINAL);
  assert.equal(result.stderr, '');
  return { result, debug: existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : '' };
}

/** The sessions of the project's store, read with the built CLI. */
async function sessions(project) {
  const r = await runCli(['list', '--json'], { cwd: project.dir, env: cleanEnv({ HOME: project.home }) });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).sessions;
}

before(
  async () => {
    await ensureClaude();
  },
  { timeout: 10 * 60_000 },
);

/** The plugin's hooks in the order a conversation with one delegation runs them, each exiting 0. */
const EVERY_EVENT_EXIT_0 = [
  ['SessionStart', 0],
  ['PreToolUse', 0],
  ['SubagentStart', 0],
  ['SubagentStop', 0],
  ['PostToolUse', 0],
];

/** `agent-session status --json` of the build under test, run in the project with the test's HOME. */
async function statusOf(project) {
  const r = await runCli(['status', '--json'], { cwd: project.dir, env: cleanEnv({ HOME: project.home }) });
  assert.ok(r.code === 0 || r.code === 1, r.stderr);
  return { code: r.code, json: JSON.parse(r.stdout) };
}

test(
  '(j) the plugin installed from the package as a marketplace (project scope) runs the hooks; ' +
    'git status never shows the store',
  { timeout: 180_000 },
  async (t) => {
    const project = gitProject(t);
    const packageDir = unpackedPackage(project.root);
    await installPlugin(project, packageDir, 'project');

    // What Claude Code wrote, and where (NOTES.md): the only file in the project is the settings.
    assert.deepEqual(readJson(join(project.dir, '.claude', 'settings.json')), { enabledPlugins: { [PLUGIN]: true } });
    const plugins = join(project.home, '.claude', 'plugins');
    const [entry, ...more] = readJson(join(plugins, 'installed_plugins.json')).plugins[PLUGIN];
    assert.deepEqual(more, []);
    assert.equal(entry.scope, 'project');
    assert.equal(entry.projectPath, project.dir);
    assert.equal(entry.version, PKG.version);
    assert.equal(entry.installPath, join(plugins, 'cache', MARKETPLACE, PKG.name, PKG.version));
    assert.ok(existsSync(join(entry.installPath, 'dist', 'hooks', 'pre_delegate.js')), 'a copy of the package');
    assert.deepEqual(readJson(join(plugins, 'known_marketplaces.json'))[MARKETPLACE].source, {
      source: 'directory',
      path: packageDir,
    });
    assert.deepEqual(readJson(join(project.home, '.claude', 'settings.json')).extraKnownMarketplaces, {
      [MARKETPLACE]: { source: { source: 'directory', path: packageDir } },
    });
    assert.equal(project.status(), '?? .claude/settings.json\n');

    const { debug } = await delegate(t, project);
    // For a directory marketplace, ${CLAUDE_PLUGIN_ROOT} is the marketplace directory, not the copy.
    const runs = pluginHookRuns(debug);
    assert.deepEqual(
      runs.map((r) => [r.event, r.status]),
      EVERY_EVENT_EXIT_0,
    );
    const hook = join(packageDir, 'dist', 'hooks', 'pre_delegate.js');
    assert.equal(runs[1].command, `test ! -f "${hook}" || node "${hook}"`);
    const [session, ...others] = await sessions(project);
    assert.deepEqual(others, []);
    assert.equal(session.phase, 'completed');
    assert.equal(session.purpose, CALL.input.description);
    assert.ok(existsSync(join(project.dir, '.claude', 'session', session.agent_id, 'state.json')));
    assert.equal(project.status(), '?? .claude/settings.json\n', 'the store shows in git status');

    // agent-session status reads what Claude Code wrote: the plugin, its hooks where they really run, their last runs.
    const status = await statusOf(project);
    assert.equal(status.code, 0, JSON.stringify(status.json.findings));
    assert.deepEqual(
      status.json.plugins.map((p) => [p.plugin, p.scope, p.root]),
      [[PLUGIN, 'project', packageDir]],
    );
    assert.deepEqual(
      status.json.hooks.map((h) => [h.place, h.event, h.state, h.script]),
      ['PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop', 'SessionStart'].map((event) => [
        'plugin',
        event,
        'ok',
        join(packageDir, 'dist', 'hooks', event === 'PreToolUse' ? 'pre_delegate.js' : 'subagent_stop.js'),
      ]),
    );
    assert.deepEqual(status.json.last_runs.map((r) => r.event).sort(), [
      'PostToolUse',
      'PreToolUse',
      'SubagentStart',
      'SubagentStop',
    ]);
  },
);

test(
  '(j) installed for the user, the plugin leaves the project untouched: git status stays empty',
  { timeout: 180_000 },
  async (t) => {
    const project = gitProject(t);
    const packageDir = unpackedPackage(project.root);
    await installPlugin(project, packageDir, 'user');
    assert.equal(readJson(join(project.home, '.claude', 'settings.json')).enabledPlugins[PLUGIN], true);
    const [entry] = readJson(join(project.home, '.claude', 'plugins', 'installed_plugins.json')).plugins[PLUGIN];
    assert.equal(entry.scope, 'user');
    assert.equal(entry.projectPath, undefined);

    await delegate(t, project);
    const [session] = await sessions(project);
    assert.equal(session.phase, 'completed');
    assert.equal(project.status(), '');
  },
);

test(
  'a plugin installed without dist/ (an unbuilt checkout) runs nothing: the delegation goes on with no hook error',
  { timeout: 180_000 },
  async (t) => {
    const project = gitProject(t);
    await installPlugin(project, unpackedPackage(project.root, { dist: false }), 'user');
    const { debug } = await delegate(t, project);
    // No store at all: list says so (exit 1) rather than "No sessions.".
    const list = await runCli(['list'], { cwd: project.dir, env: cleanEnv({ HOME: project.home }) });
    assert.equal(list.code, 1);
    assert.match(list.stderr, /no sessions have been recorded here yet/);
    assert.equal(existsSync(join(project.dir, '.claude', 'session')), false);
    // Each hook ran, found no dist/ and exited 0 without output.
    const runs = pluginHookRuns(debug);
    assert.deepEqual(
      runs.map((r) => [r.event, r.status]),
      EVERY_EVENT_EXIT_0,
    );
    assert.doesNotMatch(debug, /Cannot find module/);
    assert.equal(project.status(), '');
    // status says why nothing happens: every plugin hook is inactive, so no hook can run (exit 1).
    const status = await statusOf(project);
    assert.deepEqual(
      status.json.hooks.map((h) => [h.place, h.state]),
      Array(EVERY_EVENT_EXIT_0.length).fill(['plugin', 'inactive']),
    );
  },
);

test(
  '(j) installed from a checkout after the build (project scope), the plugin runs the hooks of the checkout',
  { timeout: 180_000 },
  async (t) => {
    const project = gitProject(t);
    const dir = checkout(project.root);
    await installPlugin(project, dir, 'project');
    const { debug } = await delegate(t, project);
    const hook = join(dir, 'dist', 'hooks', 'pre_delegate.js');
    assert.equal(pluginHookRuns(debug)[1].command, `test ! -f "${hook}" || node "${hook}"`);
    assert.deepEqual(
      pluginHookRuns(debug).map((r) => r.status),
      [0, 0, 0, 0, 0],
    );
    const [session] = await sessions(project);
    assert.equal(session.phase, 'completed');
    assert.equal(project.status(), '?? .claude/settings.json\n');
  },
);
