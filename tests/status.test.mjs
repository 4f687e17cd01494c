// status: one finding per way the hooks can fail to work here (broken or inactive script, registered
// nowhere or twice, a bad config, failures in the hook log, no store yet), each with its exit code
// (0: working, 1: not) and its --json fields; and the last hook run after real hook runs.
import assert from 'node:assert/strict';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { flow, life, pre } from './helpers/hooks.mjs';
import { cleanEnv, DIST, PRE_DELEGATE, ROOT, runCli, SUBAGENT_STOP, tempDir } from './helpers/run.mjs';

const EVENTS = ['PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop', 'SessionStart'];

/** A project with `.claude/` and a HOME of its own; `run` runs the CLI in the project. */
function setup(t) {
  const base = tempDir(t, 'agent-session-status-');
  const dir = path.join(base, 'project');
  const home = path.join(base, 'home');
  mkdirSync(path.join(dir, '.claude'), { recursive: true });
  mkdirSync(home);
  const store = path.join(dir, '.claude', 'session');
  const run = async (args, env = {}) => {
    const result = await runCli(args, { cwd: dir, env: cleanEnv({ HOME: home, ...env }) });
    return { ...result, json: args.includes('--json') && result.stdout ? JSON.parse(result.stdout) : undefined };
  };
  return { dir, home, store, run, proj: { dir, store } };
}

/** A settings file registering `command(hook)` for each of our events. */
function writeSettings(file, command) {
  const entry = (hook) => [{ type: 'command', command: command(hook), timeout: 15 }];
  const hooks = {
    PreToolUse: [{ matcher: 'Agent|Task', hooks: entry('pre_delegate') }],
    PostToolUse: [{ matcher: 'Agent|Task', hooks: entry('subagent_stop') }],
    SubagentStart: [{ hooks: entry('subagent_stop') }],
    SubagentStop: [{ hooks: entry('subagent_stop') }],
    SessionStart: [{ hooks: entry('subagent_stop') }],
  };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ hooks }, null, 2)}\n`);
}

const builtHook = (hook) => `node ${path.join(DIST, 'hooks', `${hook}.js`)}`;

function findings(report, check, severity) {
  return report.findings.filter((f) => f.check === check && (severity === undefined || f.severity === severity));
}

test('all well: the hooks run, their last run per event is recorded, sessions by phase (exit 0)', async (t) => {
  const { dir, store, run, proj } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  const one = flow({ toolUseId: 'toolu_1', agentId: 'a1', description: 'Review the parser' });
  assert.equal((await pre(proj, one.pre)).code, 0);
  assert.equal((await life(proj, one.start)).code, 0);
  assert.equal((await life(proj, one.stop('Done.\nsession-phase: approval'))).code, 0);

  const { code, json } = await run(['status', '--json']);
  assert.equal(code, 0, JSON.stringify(json.findings));
  assert.equal(json.healthy, true);
  assert.deepEqual(json.project, { dir, reason: 'claude-dir' });
  assert.deepEqual(json.store, { dir: store, reason: 'project', exists: true });
  assert.deepEqual(
    json.hooks.map((h) => [h.event, h.place, h.state, h.script]),
    EVENTS.map((e) => [e, 'local', 'ok', e === 'PreToolUse' ? PRE_DELEGATE : SUBAGENT_STOP]),
  );
  const runs = Object.fromEntries(json.last_runs.map((r) => [r.event, r]));
  assert.deepEqual(Object.keys(runs).sort(), ['PreToolUse', 'SubagentStart', 'SubagentStop']);
  assert.equal(runs.PreToolUse.hook, 'pre_delegate');
  assert.equal(runs.PreToolUse.outcome, 'created');
  assert.ok(Date.now() - Date.parse(runs.SubagentStop.time) < 60_000, runs.SubagentStop.time);
  assert.equal(typeof runs.SubagentStop.duration_ms, 'number');
  assert.equal(json.hook_failures.count, 0);
  assert.equal(json.sessions.total, 1);
  assert.deepEqual(json.sessions.by_phase, { approval: 1 });
  assert.deepEqual(
    json.sessions.approval.map((s) => [s.agent, s.purpose]),
    [['general-purpose', 'Review the parser']],
  );
  assert.deepEqual(json.findings, []);

  // The records of the last runs are the store's own files: no command takes them for a session.
  const doctor = await run(['doctor', '--json']);
  assert.deepEqual([doctor.code, doctor.json.findings], [0, []]);
  assert.equal((await run(['list', '--json'])).json.sessions.length, 1);
  assert.equal((await run(['cleanup', '--dry-run', '--json'])).json.scanned, 1);

  const text = await run(['status']);
  assert.equal(text.code, 0, text.stdout);
  assert.match(text.stdout, /^Project: .* \(the nearest directory with \.claude\/\)$/m);
  assert.match(text.stdout, /Waiting for approval:\n.*\n {2}\S+ +general-purpose +Review the parser/);
  assert.match(text.stdout, /All well\.\n$/);
});

test('a missing script: broken (exit 1); behind a file test: inactive, its event unserved (exit 1)', async (t) => {
  const { dir, run } = setup(t);
  const settings = path.join(dir, '.claude', 'settings.json');
  writeSettings(settings, (hook) => `node /nonexistent/agent-session/dist/hooks/${hook}.js`);
  const broken = await run(['status', '--json']);
  assert.equal(broken.code, 1);
  assert.equal(broken.json.healthy, false);
  assert.deepEqual(new Set(broken.json.hooks.map((h) => h.state)), new Set(['broken']));
  assert.equal(findings(broken.json, 'hooks', 'error').length, EVENTS.length);
  assert.match(findings(broken.json, 'hooks')[0].message, /nonexistent.*does not exist: Claude Code reports/);

  // The form install writes for a project dependency; one hook present under node_modules, the other not.
  const file = (hook) => `"$CLAUDE_PROJECT_DIR/node_modules/agent-session/dist/hooks/${hook}.js"`;
  writeSettings(settings, (hook) => `test ! -f ${file(hook)} || node ${file(hook)}`);
  const present = path.join(dir, 'node_modules', 'agent-session', 'dist', 'hooks', 'pre_delegate.js');
  const missing = path.join(path.dirname(present), 'subagent_stop.js');
  mkdirSync(path.dirname(present), { recursive: true });
  writeFileSync(present, '');
  const inactive = await run(['status', '--json']);
  assert.equal(inactive.code, 1, JSON.stringify(inactive.json.findings));
  assert.deepEqual(
    inactive.json.hooks.map((h) => [h.event, h.state, h.script]),
    EVENTS.map((e) => [e, e === 'PreToolUse' ? 'ok' : 'inactive', e === 'PreToolUse' ? present : missing]),
  );
  assert.equal(findings(inactive.json, 'hooks', 'warning').length, EVENTS.length - 1);
  // Only inactive entries for an event: it looks installed, and no hook runs for it.
  const idle = findings(inactive.json, 'hooks', 'error');
  assert.equal(idle.length, 1);
  assert.equal(
    idle[0].message,
    'registered, but no hook can run for PostToolUse, SubagentStart, SubagentStop, SessionStart: ' +
      `${missing} is missing; ` +
      `run npm install, or reinstall (node ${path.join(DIST, 'bin', 'agent-session.js')} install)`,
  );
  const text = await run(['status']);
  assert.equal(text.code, 1);
  assert.match(text.stdout, /warn +hooks +PostToolUse in .*settings\.json names .* the hook does nothing/);
  writeFileSync(missing, '');
  assert.equal((await run(['status'])).code, 0);
});

test('an install from before SessionStart was registered: a warning, and install adds it (exit 0)', async (t) => {
  const { dir, run } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  const file = path.join(dir, '.claude', 'settings.local.json');
  const settings = JSON.parse(readFileSync(file, 'utf8'));
  delete settings.hooks.SessionStart;
  writeFileSync(file, JSON.stringify(settings));
  const old = await run(['status', '--json']);
  assert.equal(old.code, 0, JSON.stringify(old.json.findings));
  assert.deepEqual(
    findings(old.json, 'hooks').map((f) => [f.severity, f.message]),
    [
      [
        'warning',
        'no hook for SessionStart: a new conversation is not told about paused sessions; ' +
          `run node ${path.join(DIST, 'bin', 'agent-session.js')} install again (or update the plugin)`,
      ],
    ],
  );
  assert.equal((await run(['install'])).code, 0);
  assert.deepEqual(findings((await run(['status', '--json'])).json, 'hooks'), []);
});

test('hooks registered nowhere: exit 1', async (t) => {
  const { run } = setup(t);
  const { code, json } = await run(['status', '--json']);
  assert.equal(code, 1);
  assert.deepEqual(json.hooks, []);
  assert.equal(
    findings(json, 'hooks', 'error')[0].message,
    `the hooks are registered nowhere: run node ${path.join(DIST, 'bin', 'agent-session.js')} install ` +
      '(or install the plugin)',
  );
  const text = await run(['status']);
  assert.equal(text.code, 1);
  assert.match(text.stdout, /Not working: 1 error\(s\)\.\n$/);
});

test('the same command in two files runs once (exit 0); the plugin and a file: twice (exit 1)', async (t) => {
  const { dir, home, run } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  assert.equal((await run(['install', '--user'])).code, 0);
  const same = await run(['status', '--json']);
  assert.equal(same.code, 0, JSON.stringify(same.json.findings));
  assert.deepEqual(new Set(same.json.hooks.map((h) => h.place)), new Set(['local', 'user']));
  const once = findings(same.json, 'hooks', 'warning');
  assert.equal(once.length, 1);
  const events = EVENTS.join(', ');
  assert.match(
    once[0].message,
    new RegExp(`^${events} registered in 2 files with the same command .*: Claude Code runs it once$`),
  );
  assert.equal((await run(['uninstall', '--user'])).code, 0);
  assert.equal((await run(['status', '--json'])).code, 0);

  // What `claude plugin marketplace add <dir>` and `claude plugin install agent-session@<mkt> --scope user`
  // write (Claude Code 2.1.330): the plugin copied to the cache, recorded in installed_plugins.json,
  // and enabled in the user's settings.
  const installPath = path.join(home, '.claude', 'plugins', 'cache', 'mkt', 'agent-session', '0.1.0');
  mkdirSync(path.join(installPath, 'hooks'), { recursive: true });
  writeFileSync(
    path.join(installPath, 'hooks', 'hooks.json'),
    readFileSync(path.join(ROOT, 'hooks', 'hooks.json'), 'utf8'),
  );
  for (const hook of ['pre_delegate', 'subagent_stop']) {
    mkdirSync(path.join(installPath, 'dist', 'hooks'), { recursive: true });
    writeFileSync(path.join(installPath, 'dist', 'hooks', `${hook}.js`), '');
  }
  const installs = { 'agent-session@mkt': [{ scope: 'user', installPath, version: '0.1.0' }] };
  writeFileSync(
    path.join(home, '.claude', 'plugins', 'installed_plugins.json'),
    JSON.stringify({ version: 2, plugins: installs }),
  );
  writeFileSync(
    path.join(home, '.claude', 'settings.json'),
    JSON.stringify({ enabledPlugins: { 'agent-session@mkt': true } }),
  );
  const plugin = await run(['status', '--json']);
  assert.equal(plugin.code, 1);
  assert.deepEqual(plugin.json.plugins, [
    { plugin: 'agent-session@mkt', scope: 'user', install_path: installPath, root: installPath },
  ]);
  const fromPlugin = plugin.json.hooks.filter((h) => h.place === 'plugin');
  assert.deepEqual(
    fromPlugin.map((h) => [h.event, h.state, h.script]),
    EVENTS.map((e) => [
      e,
      'ok',
      path.join(installPath, 'dist', 'hooks', `${e === 'PreToolUse' ? 'pre_delegate' : 'subagent_stop'}.js`),
    ]),
  );
  const doubles = findings(plugin.json, 'hooks', 'error');
  assert.equal(doubles.length, EVENTS.length);
  assert.match(
    doubles[0].message,
    /^PreToolUse is registered 2 times with different commands \(.*settings\.local\.json, plugin agent-session@mkt\)/,
  );

  // From a directory marketplace, Claude Code runs the hooks of the source directory, not of the copy.
  const source = path.join(home, 'src', 'agent-session');
  mkdirSync(path.join(source, '.claude-plugin'), { recursive: true });
  writeFileSync(
    path.join(source, '.claude-plugin', 'marketplace.json'),
    JSON.stringify({ name: 'mkt', plugins: [{ name: 'agent-session', source: './' }] }),
  );
  mkdirSync(path.join(source, 'hooks'));
  writeFileSync(path.join(source, 'hooks', 'hooks.json'), readFileSync(path.join(ROOT, 'hooks', 'hooks.json'), 'utf8'));
  writeFileSync(
    path.join(home, '.claude', 'plugins', 'known_marketplaces.json'),
    JSON.stringify({ mkt: { source: { source: 'directory', path: source }, installLocation: source } }),
  );
  const fromSource = await run(['status', '--json']);
  assert.equal(fromSource.json.plugins[0].root, source);
  const sourceHooks = fromSource.json.hooks.filter((h) => h.place === 'plugin');
  // The guarded commands name files the source directory does not have (no dist/ built there).
  assert.deepEqual(
    sourceHooks.map((h) => [h.state, path.dirname(h.script)]),
    EVENTS.map(() => ['inactive', path.join(source, 'dist', 'hooks')]),
  );
  // Inactive in the plugin, working in the local settings: one hook runs, nothing is doubled.
  assert.equal(fromSource.code, 0, JSON.stringify(fromSource.json.findings));
  rmSync(path.join(home, '.claude', 'plugins', 'known_marketplaces.json'));

  // Disabled in the project's settings: the plugin no longer counts.
  writeFileSync(
    path.join(dir, '.claude', 'settings.json'),
    JSON.stringify({ enabledPlugins: { 'agent-session@mkt': false } }),
  );
  const disabled = await run(['status', '--json']);
  assert.equal(disabled.code, 0, JSON.stringify(disabled.json.findings));
  assert.deepEqual(disabled.json.plugins, []);
});

test('a bad config: status reports it (exit 1), the hook fails open and its failure shows', async (t) => {
  const { dir, run, proj } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  writeFileSync(path.join(dir, '.claude', 'agent-session.json'), '{"resume_window_minutes": "2h"}\n');
  const hook = await pre(proj, flow().pre);
  assert.deepEqual([hook.code, hook.stdout], [0, '']);

  const { code, json } = await run(['status', '--json']);
  assert.equal(code, 1);
  assert.equal(json.config.exists, true);
  assert.equal(json.config.from, 'project');
  assert.match(json.config.error, /resume_window_minutes/);
  assert.equal(findings(json, 'config', 'error').length, 1);
  assert.equal(json.hook_failures.count, 1);
  assert.equal(json.hook_failures.recent[0].code, 'EINVALID');
  assert.deepEqual(
    json.last_runs.map((r) => [r.event, r.outcome, r.code]),
    [['PreToolUse', 'failed', 'EINVALID']],
  );

  // AGENT_SESSION_CONFIG names the file read instead.
  const other = path.join(dir, 'other.json');
  writeFileSync(other, '{}');
  const env = await run(['status', '--json'], { AGENT_SESSION_CONFIG: other });
  assert.deepEqual(
    [env.json.config.file, env.json.config.from, env.json.config.error],
    [other, 'AGENT_SESSION_CONFIG', null],
  );
  assert.equal(env.code, 0, JSON.stringify(env.json.findings));
});

test('hook failures of the last day: a warning (exit 0); older ones are left out', async (t) => {
  const { store, run, proj } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  // A bad value in the hook's environment only: the hook fails open, status's own config is fine.
  const hook = await pre(proj, flow().pre, { AGENT_SESSION_ERROR_BUDGET: 'lots' });
  assert.deepEqual([hook.code, hook.stdout], [0, '']);
  const old = new Date(Date.now() - 2 * 24 * 3_600_000).toISOString();
  appendFileSync(path.join(store, '.hooks.log'), `${old} pre_delegate PreToolUse pid=1 EIO: an old failure\n`);

  const { code, json } = await run(['status', '--json']);
  assert.equal(code, 0, JSON.stringify(json.findings));
  assert.equal(json.hook_failures.count, 1);
  assert.match(json.hook_failures.recent[0].message, /AGENT_SESSION_ERROR_BUDGET/);
  assert.match(findings(json, 'hook-log', 'warning')[0].message, /^1 hook failure\(s\) in the last day/);
  const text = await run(['status']);
  assert.match(text.stdout, /Hook failures in the last day: 1\n/);
  assert.match(text.stdout, /PreToolUse +pre_delegate +failed \(EINVALID\)/);
});

test('no store yet: status says so (a warning), every read command reports it, cleanup is a no-op', async (t) => {
  const { store, run } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  const { code, json } = await run(['status', '--json']);
  assert.equal(code, 0, JSON.stringify(json.findings));
  assert.equal(json.store.exists, false);
  assert.match(findings(json, 'store', 'warning')[0].message, /no sessions have been recorded here yet/);

  for (const args of [
    ['list'],
    ['list', '--json'],
    ['show', 'x'],
    ['get', 'x'],
    ['children', 'x'],
    ['tree', 'x'],
    ['trash'],
    ['audit'],
    ['export', '--all'],
  ]) {
    const result = await run(args);
    assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
    assert.equal(result.stdout, '', args.join(' '));
    assert.match(
      result.stderr,
      /^agent-session: no sessions have been recorded here yet: the store .* does not exist \(the default under /,
      args.join(' '),
    );
  }
  const doctor = await run(['doctor', '--json']);
  assert.equal(doctor.code, 1);
  assert.deepEqual([doctor.json.healthy, doctor.json.store.exists], [false, false]);
  assert.equal(findings(doctor.json, 'store', 'error').length, 1);
  const repair = await run(['doctor', '--repair']);
  assert.equal(repair.code, 0);
  assert.match(repair.stdout, /No store: nothing to repair\.\n$/);
  const cleanup = await run(['cleanup']);
  assert.equal(cleanup.code, 0);
  assert.match(cleanup.stdout, /does not exist .*: nothing to clean\.\n$/);
  assert.ok(!existsSync(store), 'cleanup made the store');

  const elsewhere = await run(['list', '--dir', '/nonexistent/store']);
  assert.equal(elsewhere.code, 1);
  assert.match(elsewhere.stderr, /the store \/nonexistent\/store does not exist \(from --dir\)/);
  const status = await run(['status', '--json'], { AGENT_SESSION_DIR: '/nonexistent/store' });
  assert.deepEqual(status.json.store, { dir: '/nonexistent/store', reason: 'AGENT_SESSION_DIR', exists: false });
});

test('a link at .hooks in a cloned store: the hooks write nothing through it, doctor reports it', async (t) => {
  const { store, run, proj } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  const outside = path.join(tempDir(t), 'outside');
  mkdirSync(outside);
  mkdirSync(store);
  symlinkSync(outside, path.join(store, '.hooks'));
  assert.equal((await pre(proj, flow().pre)).code, 0);
  assert.deepEqual(readdirSync(outside), []);
  const status = await run(['status', '--json']);
  assert.deepEqual([status.code, status.json.last_runs, status.json.sessions.total], [0, [], 1]);
  const doctor = await run(['doctor', '--json']);
  assert.equal(doctor.code, 1);
  assert.deepEqual(
    doctor.json.findings.map((f) => [f.check, f.subject]),
    [['store', path.join(store, '.hooks')]],
  );
});

test('config problems as the CLI sees them: AGENT_SESSION_CONFIG naming no file, a misspelt variable', async (t) => {
  const { run } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  const { code, json } = await run(['status', '--json'], { AGENT_SESSION_CONFIG: '/nonexistent/x.json' });
  assert.equal(code, 1);
  assert.deepEqual(
    [json.config.exists, json.config.error],
    [false, 'AGENT_SESSION_CONFIG names no file: /nonexistent/x.json'],
  );
  assert.match(
    findings(json, 'config', 'error')[0].message,
    /^AGENT_SESSION_CONFIG names no file: \/nonexistent\/x\.json/,
  );

  const typo = await run(['status', '--json'], { AGENT_SESSION_ERROR_BUGDET: '3' });
  assert.equal(typo.code, 0, JSON.stringify(typo.json.findings));
  assert.deepEqual(findings(typo.json, 'config'), [
    {
      check: 'config',
      severity: 'warning',
      message: 'unknown environment variable AGENT_SESSION_ERROR_BUGDET; did you mean AGENT_SESSION_ERROR_BUDGET?',
    },
  ]);
});

test('settings whose hooks never run: disableAllHooks, a matcher that misses Agent, invalid JSON', async (t) => {
  const { dir, home, run } = setup(t);
  const local = path.join(dir, '.claude', 'settings.local.json');
  writeSettings(local, builtHook);
  assert.equal((await run(['status'])).code, 0);

  mkdirSync(path.join(home, '.claude'));
  writeFileSync(path.join(home, '.claude', 'settings.json'), '{"disableAllHooks": true}');
  const disabled = await run(['status', '--json']);
  assert.equal(disabled.code, 1);
  assert.deepEqual(findings(disabled.json, 'settings', 'error'), [
    {
      check: 'settings',
      severity: 'error',
      message: `disableAllHooks is set in ${path.join(home, '.claude', 'settings.json')}: Claude Code runs no hooks`,
    },
  ]);
  rmSync(path.join(home, '.claude', 'settings.json'));

  const settings = JSON.parse(readFileSync(local, 'utf8'));
  settings.hooks.PreToolUse[0].matcher = 'Bash';
  settings.hooks.PostToolUse[0].matcher = 'Agent(';
  writeFileSync(local, JSON.stringify(settings));
  const unmatched = await run(['status', '--json']);
  assert.equal(unmatched.code, 1);
  assert.deepEqual(
    unmatched.json.hooks.map((h) => h.state),
    ['unmatched', 'unmatched', 'ok', 'ok', 'ok'],
  );
  assert.match(
    findings(unmatched.json, 'hooks', 'error')[0].message,
    /^registered, but no hook can run for PreToolUse, PostToolUse: the matcher in .* does not match the tool Agent/,
  );
  for (const matcher of ['*', '', 'Agent', 'Task|Agent', 'A.*']) {
    settings.hooks.PreToolUse[0].matcher = matcher;
    settings.hooks.PostToolUse[0].matcher = matcher;
    writeFileSync(local, JSON.stringify(settings));
    assert.equal((await run(['status'])).code, 0, matcher);
  }

  writeFileSync(path.join(dir, '.claude', 'settings.json'), '{"hooks": ');
  const invalid = await run(['status', '--json']);
  assert.equal(invalid.code, 1);
  const [bad] = findings(invalid.json, 'settings', 'error');
  assert.match(bad.message, /settings\.json is not valid JSON: .+; Claude Code ignores it$/);
  assert.doesNotMatch(bad.message, /refusing/);
});

test('the project: started elsewhere, Claude Code reads other settings; a CLAUDE_PROJECT_DIR not there', async (t) => {
  const { dir, home } = setup(t);
  const sub = path.join(dir, 'src', 'lib');
  mkdirSync(sub, { recursive: true });
  writeSettings(path.join(dir, '.claude', 'settings.local.json'), builtHook);
  const below = await runCli(['status', '--json'], { cwd: sub, env: cleanEnv({ HOME: home }) });
  const json = JSON.parse(below.stdout);
  assert.equal(below.code, 0, below.stdout);
  assert.deepEqual(findings(json, 'project'), [
    {
      check: 'project',
      severity: 'warning',
      message:
        `Claude Code reads the settings of the directory it is started in: start claude in ${dir} ` +
        `(not ${sub}) for these hooks to run`,
    },
  ]);
  // Claude Code sets CLAUDE_PROJECT_DIR for what it runs: then the directory is its choice.
  const named = await runCli(['status', '--json'], {
    cwd: sub,
    env: cleanEnv({ HOME: home, CLAUDE_PROJECT_DIR: dir }),
  });
  assert.deepEqual(findings(JSON.parse(named.stdout), 'project'), []);

  const nope = await runCli(['status', '--json'], {
    cwd: dir,
    env: cleanEnv({ HOME: home, CLAUDE_PROJECT_DIR: '/nope' }),
  });
  assert.equal(nope.code, 1);
  assert.deepEqual(findings(JSON.parse(nope.stdout), 'project', 'error'), [
    {
      check: 'project',
      severity: 'error',
      message: 'the project directory /nope (CLAUDE_PROJECT_DIR) does not exist: no hook runs there',
    },
  ]);
});

test('doctor names the config file once', async (t) => {
  const { dir, run } = setup(t);
  const file = path.join(dir, '.claude', 'agent-session.json');
  writeFileSync(file, '{"resume_window_minutes": "2h"}\n');
  const { code, json } = await run(['doctor', '--json']);
  assert.equal(code, 1);
  const [config] = findings(json, 'config');
  assert.equal(config.subject, file);
  assert.ok(!config.message.includes(file), config.message);
  assert.match(config.message, /^resume_window_minutes must be /);
  const text = await run(['doctor']);
  const line = text.stdout.split('\n').find((l) => /config/.test(l));
  assert.equal(line.split(file).length, 2, line);
});

test('the env of the settings files, as the hooks get it: a bad value or AGENT_SESSION_DISABLE=1 there', async (t) => {
  const { dir, home, run } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  const file = path.join(dir, '.claude', 'settings.local.json');
  const withEnv = (env) => {
    const settings = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...settings, env }, null, 2));
  };
  const fine = await run(['status', '--json']);
  assert.equal(fine.code, 0, JSON.stringify(fine.json.findings));

  // The user's settings set a bad value; the local file's env wins over it with a good one.
  mkdirSync(path.join(home, '.claude'));
  writeFileSync(path.join(home, '.claude', 'settings.json'), '{"env": {"AGENT_SESSION_ERROR_BUDGET": "zero"}}\n');
  const bad = await run(['status', '--json']);
  assert.equal(bad.code, 1);
  assert.equal(
    findings(bad.json, 'config', 'error')[0].message,
    'environment variable AGENT_SESSION_ERROR_BUDGET must be a whole number >= 1, got "zero" ' +
      `(every hook fails open on it; set in the env of ${path.join(home, '.claude', 'settings.json')})`,
  );
  withEnv({ AGENT_SESSION_ERROR_BUDGET: '4', OTHER: 'x' });
  assert.equal((await run(['status', '--json'])).code, 0);

  withEnv({ AGENT_SESSION_DISABLE: '1' });
  const off = await run(['status']);
  assert.equal(off.code, 1);
  assert.match(
    off.stdout,
    new RegExp(`AGENT_SESSION_DISABLE=1 in the env of ${file}: every hook returns at once and no session is recorded`),
  );
  withEnv({ AGENT_SESSION_ERROR_BUDGET: '4' });
  const shell = await run(['status', '--json'], { AGENT_SESSION_DISABLE: '1' });
  assert.equal(shell.code, 1);
  assert.match(findings(shell.json, 'config', 'error')[0].message, /^AGENT_SESSION_DISABLE=1 in this environment:/);
  // A number is its text, as in the hooks' environment.
  withEnv({ AGENT_SESSION_ERROR_BUDGET: '4', AGENT_SESSION_DISABLE: 1 });
  assert.equal((await run(['status', '--json'])).code, 1);

  // The store and config the hooks use: relative paths from the project, where the hooks run.
  mkdirSync(path.join(dir, 'sub'));
  writeFileSync(path.join(dir, 'cfg.json'), '{"error_budget": 5}');
  withEnv({ AGENT_SESSION_ERROR_BUDGET: '4', AGENT_SESSION_DIR: 'elsewhere/store', AGENT_SESSION_CONFIG: 'cfg.json' });
  const moved = await runCli(['status', '--json'], { cwd: path.join(dir, 'sub'), env: cleanEnv({ HOME: home }) });
  const report = JSON.parse(moved.stdout);
  assert.deepEqual(report.store, {
    dir: path.join(dir, 'elsewhere', 'store'),
    reason: 'AGENT_SESSION_DIR',
    exists: false,
  });
  assert.deepEqual([report.config.file, report.config.error], [path.join(dir, 'cfg.json'), null]);
});

test('a store path that names a file is an error finding, not a crash; --json still prints the report', async (t) => {
  const { dir, run } = setup(t);
  assert.equal((await run(['install'])).code, 0);
  const file = path.join(dir, 'not-a-store');
  writeFileSync(file, 'x\n');
  const { code, json, stderr } = await run(['status', '--json'], { AGENT_SESSION_DIR: file });
  assert.equal(code, 1, stderr);
  assert.match(findings(json, 'store', 'error')[0].message, /^the store .*not-a-store cannot be read \(.*ENOTDIR/);
});
