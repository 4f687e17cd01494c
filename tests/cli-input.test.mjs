// Strict input: the CLI's help, version and usage errors, the config file's unknown keys and a config
// path naming no file (an error for the CLI and the library, a hook-log line for the hooks), and the
// filters and values every command takes, checked instead of matching nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { flow, hookLog, pre, project, sessionIds } from './helpers/hooks.mjs';
import { cleanEnv, cli, literally, loadLibrary, pool, ROOT, runCli, tempDir } from './helpers/run.mjs';

const lib = await loadLibrary();
const VERSION = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
const COMMANDS = [
  'create',
  'update',
  'should-resume',
  'get',
  'show',
  'list',
  'finalize',
  'children',
  'tree',
  'delete',
  'restore',
  'trash',
  'cleanup',
  'audit',
  'stats',
  'watch',
  'export',
  'import',
  'doctor',
  'install',
  'uninstall',
  'dashboard',
  'demo',
];

/** A temp root (HOME, cwd) holding the store `<root>/store`. */
function setup(t) {
  const root = tempDir(t);
  return { root, store: path.join(root, 'store') };
}

/** The CLI run from `root` (also HOME) with no --dir: the project is `root`. */
const bare = (root, args, env = {}) => runCli(args, { cwd: root, env: cleanEnv({ HOME: root, ...env }) });

/** Failed with `code`, nothing on stdout, one `agent-session:` line on stderr that matches `pattern`. */
function refused(result, code, pattern) {
  assert.equal(result.code, code, `exit ${result.code}, expected ${code}: ${result.stderr}`);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^agent-session: [^\n]+\n$/);
  if (pattern) assert.match(result.stderr, pattern);
}

test('--version, -V and -v print the package version and exit 0, also after a command', async (t) => {
  const { root } = setup(t);
  const results = await Promise.all(
    [['--version'], ['-V'], ['-v'], ['list', '--version'], ['--version', '--json']].map((args) => bare(root, args)),
  );
  for (const result of results) {
    assert.deepEqual([result.code, result.stdout, result.stderr], [0, `${VERSION}\n`, '']);
  }
  assert.deepEqual(readdirSync(root), [], 'nothing written');
});

test('a bare agent-session prints the usage on stdout and exits 0, as --help and -h do', async (t) => {
  const { root } = setup(t);
  const [none, long, short] = await Promise.all([bare(root, []), bare(root, ['--help']), bare(root, ['-h'])]);
  for (const result of [none, long, short]) {
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /^agent-session <command> \[options\]/);
    for (const name of COMMANDS) assert.match(result.stdout, new RegExp(`agent-session ${name}\\b`), name);
  }
  assert.equal(none.stdout, long.stdout);
  assert.equal(short.stdout, long.stdout);
  // `help` and `help <command>`, as git and npm take them: the same text as --help.
  const [help, helpList, listHelp] = await Promise.all([
    bare(root, ['help']),
    bare(root, ['help', 'list']),
    bare(root, ['list', '--help']),
  ]);
  assert.equal(help.code, 0, help.stderr);
  assert.equal(help.stdout, long.stdout);
  assert.equal(helpList.code, 0, helpList.stderr);
  assert.ok(helpList.stdout.startsWith('agent-session list'), helpList.stdout.slice(0, 80));
  assert.equal(helpList.stdout, listHelp.stdout);
  // Options without a command are still a usage error, with a sentence saying what to do.
  refused(await bare(root, ['--json']), 2, /name a command \(agent-session --help lists them\)/);
});

test('-h and --help work on every command: its usage on stdout, exit 0, nothing run', async (t) => {
  const { root } = setup(t);
  const runs = COMMANDS.flatMap((name) => [
    () => bare(root, [name, '-h']),
    () => bare(root, [name, '--help', '--json']),
  ]);
  const results = await pool(runs);
  results.forEach((result, i) => {
    const name = COMMANDS[Math.floor(i / 2)];
    assert.equal(result.code, 0, `${name}: ${result.stderr}`);
    assert.equal(result.stderr, '', name);
    assert.ok(result.stdout.startsWith(`agent-session ${name}`), `${name}: ${result.stdout.slice(0, 80)}`);
    assert.match(result.stdout, /-h, --help/, name);
  });
  assert.deepEqual(readdirSync(root), [], 'no command ran (demo, install would have written)');
});

test('a misspelt option gets the closest option; a misspelt command the closest command', async (t) => {
  const { store } = setup(t);
  const cases = [
    [['list', '--jsno'], /^agent-session: unknown option --jsno; did you mean --json\?\n$/],
    [['cleanup', '--dryrun'], /unknown option --dryrun; did you mean --dry-run\?/],
    [['list', '--limt', '3'], /unknown option --limt; did you mean --limit\?/],
    [['delete', 'x', '--forse'], /unknown option --forse; did you mean --force\?/],
    // Nothing close: the command's help is named instead.
    [['list', '--zebra'], /unknown option --zebra \(agent-session list --help lists them\)/],
    [['list', '--jsno', '-x'], /unknown options --jsno \(did you mean --json\?\), -x; agent-session list --help/],
    // A long option cut short is named as typed, with the one option it begins.
    [['list', '--j'], /^agent-session: unknown option --j; did you mean --json\?\n$/],
    [['list', '-j'], /^agent-session: unknown option -j \(agent-session list --help lists them\)\n$/],
    [['lsit'], /unknown command "lsit"; did you mean list\?/],
    [['frobnicate'], /unknown command "frobnicate" \(agent-session --help lists them\)/],
    // Help on no command is not the general help with exit 0.
    [['help', 'lsit'], /^agent-session: unknown command "lsit"; did you mean list\?\n$/],
    [['frobnicate', '--help'], /^agent-session: unknown command "frobnicate" \(agent-session --help lists them\)\n$/],
    [['show', 'a', 'b'], /unexpected argument "b": agent-session show <id>/],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(store, args)));
  results.forEach((result, i) => refused(result, 2, cases[i][1]));
  assert.ok(!existsSync(store));
});

test('a missing argument gets a sentence naming it, not the parser wording', async (t) => {
  const { store } = setup(t);
  const cases = [
    [['show'], /^agent-session: show needs a session id: agent-session show <id>\n$/],
    [['get'], /get needs a session id: agent-session get <id>/],
    [
      ['finalize', 'x'],
      /finalize needs an outcome \(completed, failed, abandoned\): agent-session finalize <id> <outcome>/,
    ],
    [['import'], /import needs a bundle file: agent-session import <file>/],
    [['restore'], /restore needs a session id or a trash entry/],
    [['create'], /create needs --agent \(agent-session create --help\)/],
    [['list', '--limit'], /--limit needs a value/],
    [['export', 'x', '-o'], /-o needs a value/],
    // Every option taking text needs its value: an empty purpose was recorded without a word.
    [['create', '--agent', 'a', '--purpose'], /--purpose needs a value/],
    [['audit', '--session'], /--session needs a value/],
    // A value that starts with a dash is the option's value, not more options.
    [['audit', '--since', '-5m'], /invalid duration "-5m"/],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(store, args)));
  results.forEach((result, i) => {
    refused(result, 2, cases[i][1]);
    assert.doesNotMatch(result.stderr, /non-option|Not enough|Missing required|Unknown argument/);
  });
  assert.ok(!existsSync(store), 'nothing created');
});

test('an unknown config key is a usage error naming it and the closest key; nothing is written', async (t) => {
  const { root } = setup(t);
  mkdirSync(path.join(root, '.claude'));
  const config = path.join(root, '.claude', 'agent-session.json');
  writeFileSync(config, JSON.stringify({ resume_window_minutes: 5, error_budgit: 3 }));
  const [created, listed] = await Promise.all([bare(root, ['create', '--agent', 'a', '--json']), bare(root, ['list'])]);
  for (const result of [created, listed]) {
    refused(result, 2);
    assert.ok(
      result.stderr.includes(`unknown key "error_budgit" in ${config}; did you mean "error_budget"?`),
      result.stderr,
    );
  }
  assert.deepEqual(readdirSync(path.join(root, '.claude')), ['agent-session.json'], 'no store created');
  // A key close to none is named with the list of keys.
  writeFileSync(config, JSON.stringify({ colour: 'blue' }));
  refused(
    await bare(root, ['list']),
    2,
    /unknown key "colour" in .*; the keys are resume_window_minutes, error_budget/,
  );
});

test('counts are whole numbers, and a number too large for JSON is named as Infinity, not null', async (t) => {
  const { root } = setup(t);
  mkdirSync(path.join(root, '.claude'));
  const config = path.join(root, '.claude', 'agent-session.json');
  writeFileSync(config, '{"error_budget": 2.5}');
  refused(await bare(root, ['list']), 2, /error_budget in .* must be a whole number >= 1, got 2\.5\n$/);
  writeFileSync(config, '{"audit_keep": 1.5}');
  refused(await bare(root, ['list']), 2, /audit_keep in .* must be a whole number >= 1, got 1\.5\n$/);
  refused(
    await bare(root, ['list'], { AGENT_SESSION_ERROR_BUDGET: '2.5' }),
    2,
    /must be a whole number >= 1, got 2\.5\n$/,
  );
  writeFileSync(config, '{"resume_window_minutes": 1e400}');
  refused(await bare(root, ['list']), 2, /resume_window_minutes in .* must be a number >= 0, got Infinity\n$/);
  writeFileSync(config, '{"error_budget": 4}');
  assert.equal((await bare(root, ['list'])).code, 1, 'a whole number is fine (no store yet: exit 1)');
});

test('library: unknown keys and settings are EINVALID with details; configProblems lists them, never throws', (t) => {
  const { root } = setup(t);
  mkdirSync(path.join(root, '.claude'));
  const config = path.join(root, '.claude', 'agent-session.json');
  writeFileSync(config, JSON.stringify({ error_budgit: 3, resume_window_minutes: -1 }));
  const open =
    (env = {}, settings) =>
    () =>
      lib.Sessions.open({ cwd: root, env: { HOME: root, ...env }, settings });
  assert.throws(open(), (err) => {
    assert.equal(err.code, 'EINVALID');
    assert.deepEqual(err.details, { file: config, key: 'error_budgit', suggestion: 'error_budget' });
    return true;
  });
  assert.deepEqual(
    lib.configProblems({ cwd: root, env: { HOME: root } }).map((p) => [p.severity, p.key, p.suggestion, p.file]),
    [
      ['error', 'error_budgit', 'error_budget', config],
      ['error', 'resume_window_minutes', undefined, config],
    ],
  );
  writeFileSync(config, '{}');
  assert.throws(open({}, { errorBudgit: 2 }), (err) => {
    assert.equal(err.code, 'EINVALID');
    assert.match(err.message, /unknown key "errorBudgit" among the settings options; did you mean "errorBudget"\?/);
    return true;
  });
  assert.deepEqual(lib.configProblems({ cwd: root, env: { HOME: root } }), []);
  const missing = path.join(root, 'nowhere', 'x.json');
  assert.throws(open({ AGENT_SESSION_CONFIG: missing }), (err) => {
    assert.equal(err.code, 'EINVALID');
    assert.deepEqual(err.details, { file: missing, env: 'AGENT_SESSION_CONFIG' });
    return true;
  });
  const env = { HOME: root, AGENT_SESSION_CONFIG: missing, AGENT_SESSION_ERROR_BUGDET: '2' };
  assert.deepEqual(
    lib.configProblems({ cwd: root, env }).map((p) => [p.severity, p.env, p.suggestion]),
    [
      ['error', 'AGENT_SESSION_CONFIG', undefined],
      ['warning', 'AGENT_SESSION_ERROR_BUGDET', 'AGENT_SESSION_ERROR_BUDGET'],
    ],
  );
});

test('library: a misspelt option of a public function is EINVALID naming the closest; nothing runs', async (t) => {
  const { root } = setup(t);
  const store = path.join(root, 'store');
  const refuses = async (call, message, suggestion) => {
    await assert.rejects(
      async () => call(),
      (err) => {
        assert.equal(err.code, 'EINVALID');
        assert.equal(err.message, message);
        assert.equal(err.details.suggestion, suggestion);
        return true;
      },
    );
  };
  await refuses(
    () => lib.Sessions.open({ dri: store, cwd: root }),
    'unknown option "dri" of Sessions.open; did you mean "dir"?',
    'dir',
  );
  assert.ok(!existsSync(path.join(root, '.claude')), 'no store opened elsewhere');
  const sessions = lib.Sessions.open({ dir: store, cwd: root, env: { HOME: root } });
  await refuses(
    () => sessions.create({ agentName: 'a', purpse: 'p' }),
    'unknown option "purpse" of create; did you mean "purpose"?',
    'purpose',
  );
  assert.ok(!existsSync(store), 'nothing created');
  const s = await sessions.create({ agentName: 'a', id: 'old1' });
  const before = readFileSync(path.join(store, 'old1', 'state.json'), 'utf8');
  await refuses(
    () => sessions.update('old1', { phse: 'approval' }),
    'unknown option "phse" of update; did you mean "phase"?',
    'phase',
  );
  assert.equal(readFileSync(path.join(store, 'old1', 'state.json'), 'utf8'), before, 'last_updated not moved');
  await refuses(
    () => sessions.list({ activeonly: true }),
    'unknown option "activeonly" of list; did you mean "activeOnly"?',
    'activeOnly',
  );
  // A misspelt dryRun must not clean or delete for real.
  await refuses(
    () => lib.cleanup(sessions, { dryrun: true }),
    'unknown option "dryrun" of cleanup; did you mean "dryRun"?',
    'dryRun',
  );
  await refuses(
    () => lib.deleteSession(sessions, s.agent_id, { dryrun: true }),
    'unknown option "dryrun" of deleteSession; did you mean "dryRun"?',
    'dryRun',
  );
  await refuses(
    () => lib.doctor(sessions, { repare: true }),
    'unknown option "repare" of doctor; did you mean "repair"?',
    'repair',
  );
  await refuses(
    () => lib.importSessions(sessions, { file: 'x' }, { overwirte: true }),
    'unknown option "overwirte" of importSessions; did you mean "overwrite"?',
    'overwrite',
  );
  await refuses(
    () => lib.exportSessions(sessions, { all: true, fiel: 'x' }),
    'unknown option "fiel" of exportSessions; did you mean "file"?',
    'file',
  );
  await refuses(
    () => lib.restoreSession(sessions, 'old1', { sigal: undefined }),
    'unknown option "sigal" of restoreSession; did you mean "signal"?',
    'signal',
  );
  await refuses(
    () => sessions.list({ zzz: 1 }),
    'unknown option "zzz" of list; it takes activeOnly, paused, agentName, phase, parent, limit',
    undefined,
  );
  assert.deepEqual(
    (await sessions.list()).sessions.map((r) => r.agent_id),
    ['old1'],
  );
  // Inherited keys count; only plain objects are options; the other public functions check theirs too.
  await refuses(
    () => lib.cleanup(sessions, Object.create({ dryrun: true })),
    'unknown option "dryrun" of cleanup; did you mean "dryRun"?',
    'dryRun',
  );
  for (const [value, what] of [
    [new Map(), 'a Map'],
    [() => {}, 'a function'],
    [null, 'null'],
    [['x'], 'an array'],
  ]) {
    await assert.rejects(
      async () => lib.cleanup(sessions, value),
      (err) => err.code === 'EINVALID' && err.message === `the options of cleanup must be a plain object, not ${what}`,
    );
  }
  await refuses(
    () => lib.listOrphans(sessions, { agentname: 'a' }),
    'unknown option "agentname" of listOrphans; did you mean "agentName"?',
    'agentName',
  );
  await refuses(
    () => lib.readAudit(sessions, { sesion: 'old1' }),
    'unknown option "sesion" of readAudit; did you mean "session"?',
    'session',
  );
  await refuses(
    () => lib.computeStats(sessions, { buy: 'day' }),
    'unknown option "buy" of computeStats; did you mean "by"?',
    'by',
  );
  await refuses(
    () => lib.importSessions(sessions, { fiel: 'x' }),
    'unknown option "fiel" of the source of importSessions; did you mean "file"?',
    'file',
  );
  await assert.rejects(
    async () => lib.importSessions(sessions, { file: 'x', text: '{}' }),
    (err) => err.code === 'EINVALID' && /one of \{ file \}, \{ text \} or \{ bundle \}/.test(err.message),
  );
  await assert.rejects(
    async () => lib.exportSessions(sessions, { all: true, file: '   ' }),
    (err) => err.code === 'EINVALID' && err.message === "the bundle's path is blank: name its file",
  );
  assert.deepEqual(readdirSync(root).sort(), ['store'], 'no file written');
  // The install functions, following the trail and trash recovery check theirs too; hidden keys count.
  await refuses(
    () => lib.installHooks({ cwd: root, env: { HOME: root }, dry_run: true }),
    'unknown option "dry_run" of installHooks; did you mean "dryRun"?',
    'dryRun',
  );
  await refuses(
    () => lib.uninstallHooks({ cwd: root, env: { HOME: root }, dryrun: true }),
    'unknown option "dryrun" of uninstallHooks; did you mean "dryRun"?',
    'dryRun',
  );
  await refuses(
    () => lib.followAudit(sessions, { sesion: 'old1', onEntry() {} }),
    'unknown option "sesion" of followAudit; did you mean "session"?',
    'session',
  );
  await refuses(
    () => lib.recoverTrash(sessions, { dryrun: true }),
    'unknown option "dryrun" of recoverTrash; did you mean "dryRun"?',
    'dryRun',
  );
  const hidden = Object.defineProperty({}, 'dryrun', { value: true, enumerable: false });
  await refuses(
    () => lib.cleanup(sessions, hidden),
    'unknown option "dryrun" of cleanup; did you mean "dryRun"?',
    'dryRun',
  );
  assert.deepEqual(readdirSync(root).sort(), ['store'], 'no settings file written');
});

test('AGENT_SESSION_CONFIG naming no file is a usage error; the default config file may be absent', async (t) => {
  const { root } = setup(t);
  const missing = path.join(root, 'nowhere', 'agent-session.json');
  refused(
    await bare(root, ['list'], { AGENT_SESSION_CONFIG: missing }),
    2,
    new RegExp(`AGENT_SESSION_CONFIG names no file: ${literally(missing)}`),
  );
  refused(await bare(root, ['list'], { AGENT_SESSION_CONFIG: 'relative/none.json' }), 2, /names no file: .*none\.json/);
  mkdirSync(path.join(root, '.claude', 'session'), { recursive: true });
  const ok = await bare(root, ['list']);
  assert.deepEqual([ok.code, ok.stdout, ok.stderr], [0, 'No sessions.\n', '']);
});

test('the hooks fail open on an unknown config key or a config path naming no file, and log the problem', async (t) => {
  const unknownKey = project(t);
  writeFileSync(path.join(unknownKey.dir, '.claude', 'agent-session.json'), '{"error_budgit": 3}');
  const noFile = project(t);
  const [a, b] = await Promise.all([
    pre(unknownKey, flow().pre),
    pre(noFile, flow().pre, { AGENT_SESSION_CONFIG: path.join(noFile.dir, 'none.json') }),
  ]);
  for (const [result, proj, pattern] of [
    [a, unknownKey, /EINVALID: unknown key "error_budgit" in \S+; did you mean "error_budget"\?/],
    [b, noFile, /EINVALID: AGENT_SESSION_CONFIG names no file: \S+none\.json/],
  ]) {
    assert.deepEqual([result.code, result.stdout], [0, '']);
    assert.deepEqual(sessionIds(proj.store), []);
    const lines = hookLog(proj.store).split('\n').filter(Boolean);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0], pattern);
  }
});

test('a misspelt AGENT_SESSION_* variable is a warning on stderr; the command still runs', async (t) => {
  const { store } = setup(t);
  mkdirSync(store);
  const result = await cli(store, ['list', '--json'], {
    env: { AGENT_SESSION_ERROR_BUGDET: '5', AGENT_SESSION_SOMETHING_ELSE: '1' },
  });
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.json, { sessions: [], problems: [] });
  assert.equal(
    result.stderr,
    'agent-session: warning: unknown environment variable AGENT_SESSION_ERROR_BUGDET; ' +
      'did you mean AGENT_SESSION_ERROR_BUDGET?\n',
  );
});

test('audit filters are checked: an unknown action names the actions, a malformed id is refused', async (t) => {
  const { store } = setup(t);
  const seeded = await cli(store, ['create', '--agent', 'a', '--id', 'kept', '--json']);
  assert.equal(seeded.code, 0, seeded.stderr);
  const [bogus, close, hostile, good] = await Promise.all([
    cli(store, ['audit', '--action', 'bogus']),
    cli(store, ['audit', '--action', 'creat', '--json']),
    cli(store, ['audit', '--session', '../x']),
    cli(store, ['audit', '--action', 'create', '--session', 'kept', '--json']),
  ]);
  refused(bogus, 2, /unknown audit action "bogus" \(the actions: create, update, finalize, .*hook\.resume_decision/);
  refused(close, 2, /unknown audit action "creat"; did you mean "create"\?/);
  refused(hostile, 2, /invalid session id "\.\.\/x"/);
  assert.equal(good.code, 0, good.stderr);
  assert.deepEqual(
    good.json.entries.map((e) => [e.action, e.ids]),
    [['create', ['kept']]],
  );
  const sessions = lib.Sessions.open({ dir: store, cwd: path.dirname(store), env: {} });
  await assert.rejects(lib.readAudit(sessions, { action: 'bogus' }), { code: 'EINVALID' });
  await assert.rejects(lib.readAudit(sessions, { session: '../x' }), { code: 'EINVALID' });
  // An action a library caller recorded itself is in the trail, so it is a valid filter.
  await sessions.audit('deploy.approved', ['kept']);
  const own = await cli(store, ['audit', '--action', 'deploy.approved', '--json']);
  assert.equal(own.code, 0, own.stderr);
  assert.deepEqual(
    own.json.entries.map((e) => [e.action, e.actor]),
    [['deploy.approved', 'api']],
  );
});

test('list --parent of no session exits 1 like children; a malformed one exits 2, with --orphans too', async (t) => {
  const { store } = setup(t);
  for (const args of [
    ['create', '--agent', 'a', '--id', 'root'],
    ['create', '--agent', 'a', '--id', 'kid', '--parent', 'root'],
  ]) {
    assert.equal((await cli(store, args)).code, 0);
  }
  const [list, children, kids, malformed, orphans, orphanPhase, emptyAgent] = await Promise.all([
    cli(store, ['list', '--parent', 'nope']),
    cli(store, ['children', 'nope']),
    cli(store, ['list', '--parent', 'root', '--json']),
    cli(store, ['list', '--parent', '../x']),
    cli(store, ['list', '--orphans', '--parent', '../x']),
    cli(store, ['list', '--orphans', '--phase', 'bogus']),
    cli(store, ['list', '--agent', '']),
  ]);
  refused(list, 1, /no session nope/);
  refused(children, 1, /no session nope/);
  assert.equal(kids.code, 0, kids.stderr);
  assert.deepEqual(
    kids.json.sessions.map((s) => s.agent_id),
    ['kid'],
  );
  refused(malformed, 2, /invalid parent session id/);
  refused(orphans, 2, /invalid parent session id/);
  refused(orphanPhase, 2, /unknown phase "bogus": use initializing/);
  refused(emptyAgent, 2, /agent name to filter on is empty/);
  const sessions = lib.Sessions.open({ dir: store, cwd: path.dirname(store), env: {} });
  await assert.rejects(sessions.list({ parent: 'nope' }), { code: 'ENOTFOUND' });
});

test('numbers are decimal text and paths are not empty: 0x10 and "" are refused, never read as 16 or 0', async (t) => {
  const { root, store } = setup(t);
  const old = Date.now() - 48 * 3_600_000;
  const sessions = lib.Sessions.open({ dir: store, cwd: root, env: {}, now: () => old });
  await sessions.create({ agentName: 'a', id: 'old' });
  await sessions.finalize('old', 'completed');
  const before = readFileSync(path.join(store, 'old', 'state.json'), 'utf8');
  writeFileSync(path.join(root, 'keep.txt'), 'a file of the user\n');
  const cases = [
    [['cleanup', '--hours', ''], /--hours must be a number >= 0, not ""/], // yargs alone: 0 hours, purge all
    [['cleanup', '--hours', '0x10'], /--hours must be a number >= 0, not "0x10"/],
    [['list', '--limit', '0x10'], /--limit must be a whole number \(0 for all\), not "0x10"/],
    [['list', '--limit', ''], /--limit must be a whole number \(0 for all\), not ""/],
    [['export', 'old', '-o', ''], /--output needs a path, not an empty string/],
    [['export', 'old', '-o', 'bundle/'], /--output bundle\/ ends with a slash: name the bundle's file/],
    // resolve() makes keep.txt/. keep.txt: the file would be replaced by the bundle.
    [['export', 'old', '-o', 'keep.txt/.'], /--output keep\.txt\/\. names a directory: name the bundle's file/],
    [['import', ''], /import needs a path, not an empty string/],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(store, args)));
  results.forEach((result, i) => refused(result, 2, cases[i][1]));
  // --dir "" would make the working directory the store.
  refused(await bare(root, ['--dir', '', 'create', '--agent', 'a']), 2, /--dir needs a directory/);
  assert.deepEqual(readdirSync(root).sort(), ['keep.txt', 'store']);
  assert.equal(readFileSync(path.join(root, 'keep.txt'), 'utf8'), 'a file of the user\n');
  assert.equal(readFileSync(path.join(store, 'old', 'state.json'), 'utf8'), before);
  const listed = await cli(store, ['list', '--limit', ' 1 ', '--json']);
  assert.deepEqual(
    listed.json.sessions.map((s) => s.agent_id),
    ['old'],
  );
});

test('the package ships a LICENSE with the license package.json names', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const license = readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
  assert.equal(pkg.license, 'MIT');
  assert.match(license, /^MIT License\n\nCopyright \(c\) 2026 agent-session maintainers\n/);
  const packed = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  assert.ok(
    JSON.parse(packed)[0].files.some((f) => f.path === 'LICENSE'),
    'LICENSE is in the package',
  );
});
