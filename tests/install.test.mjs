// `agent-session install` / `uninstall`, the plugin's hooks/hooks.json and the repository's own
// .claude/settings.json: the built CLI run on temp projects with a temp HOME, files checked on disk.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { sessionIds } from './helpers/hooks.mjs';
import { git } from './helpers/git.mjs';
import { CLI, cleanEnv, DIST, FIXTURES, loadLibrary, ROOT, runCli, runNode, tempDir } from './helpers/run.mjs';

const lib = await loadLibrary();
const HOOK_FILE = {
  pre_delegate: path.join(DIST, 'hooks', 'pre_delegate.js'),
  subagent_stop: path.join(DIST, 'hooks', 'subagent_stop.js'),
};

/**
 * A temp project (no .claude/ yet) and a temp HOME beside it. The package is no dependency of the
 * project, so install writes `settings` (.claude/settings.local.json); `shared` is .claude/settings.json.
 */
function setup(t) {
  const base = tempDir(t, 'agent-session-install-');
  const dir = path.join(base, 'project');
  const home = path.join(base, 'home');
  mkdirSync(dir);
  mkdirSync(home);
  const settings = path.join(dir, '.claude', 'settings.local.json');
  const shared = path.join(dir, '.claude', 'settings.json');
  return { dir, home, settings, shared, run: (...args) => runCli(args, { cwd: dir, env: cleanEnv({ HOME: home }) }) };
}

const read = (file) => readFileSync(file, 'utf8');
/** The backups of a settings file: in `.agent-session-backups/` beside it. */
const backupDir = (file) => path.join(path.dirname(file), '.agent-session-backups');
const backups = (file) =>
  existsSync(backupDir(file))
    ? readdirSync(backupDir(file)).filter((f) => f.startsWith(`${path.basename(file)}.bak-`))
    : [];
/** The command install writes for a hook file that is not the project's dependency: guarded, absolute. */
const guarded = (file) => `test ! -f ${file} || node ${file}`;

/** A settings file with everything an installer must leave alone, ours-looking hooks included. */
function richSettings() {
  return {
    permissions: { allow: ['Bash(npm test:*)'], deny: ['Read(./.env)'] },
    env: { FOO: 'bar' },
    model: 'opus',
    hooks: {
      PreToolUse: [
        { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo bash-guard', timeout: 5 }] },
        {
          matcher: 'Agent|Task',
          hooks: [{ type: 'command', command: 'node /opt/other-tool/hooks/audit_delegate.js' }],
        },
        { matcher: 'Agent|Task', hooks: [{ type: 'command', command: 'python3 /opt/legacy/hooks/pre_delegate.py' }] },
      ],
      SubagentStop: [{ hooks: [{ type: 'command', command: 'notify-send stopped' }] }],
      Stop: [{ hooks: [{ type: 'prompt', prompt: 'Are we done?' }] }],
      Notification: [],
    },
    statusLine: { type: 'command', command: 'echo hi' },
  };
}

/** The hooks table a fresh install writes. */
function expectedHooks(command) {
  const hooks = {};
  for (const { event, group } of expectedGroups(command)) (hooks[event] ??= []).push(group);
  return hooks;
}

/** The groups we expect after an install, as the library's one list of registrations says. */
function expectedGroups(command = (name) => guarded(HOOK_FILE[name])) {
  return lib.HOOK_REGISTRATIONS.map((r) => ({
    event: r.event,
    group: {
      ...(r.matcher === undefined ? {} : { matcher: r.matcher }),
      hooks: [{ type: 'command', command: command(r.hook), timeout: lib.HOOK_TIMEOUT_SECONDS }],
    },
  }));
}

function sh(command, { env, input = '' }) {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
    // The command may exit without reading stdin (nothing built yet).
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

test(
  'a fresh install writes one group per registration into settings.local.json, ' +
    'run as node <absolute path of a built hook> behind a guard',
  async (t) => {
    const p = setup(t);
    const r = await p.run('install', '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.changed, true);
    assert.equal(report.backup, null);
    assert.equal(report.file, p.settings);
    assert.equal(report.scope, 'local');
    assert.deepEqual(report.project, { dir: p.dir, reason: 'cwd' });
    assert.deepEqual(report.warnings, []);
    assert.equal(existsSync(p.shared), false);
    const written = JSON.parse(read(p.settings));
    const expected = {};
    for (const { event, group } of expectedGroups()) (expected[event] ??= []).push(group);
    assert.deepEqual(written, { hooks: expected });
    assert.equal(report.added.length, lib.HOOK_REGISTRATIONS.length);
    for (const groups of Object.values(written.hooks)) {
      const file = groups[0].hooks[0].command.replace(/^.* \|\| node /, '');
      assert.ok(path.isAbsolute(file) && existsSync(file), file);
      assert.doesNotMatch(groups[0].hooks[0].command, /npx/);
    }
    // The store keeps itself out of git: install leaves .gitignore alone.
    assert.equal(existsSync(path.join(p.dir, '.gitignore')), false);
  },
);

test('the installed commands really run the built hooks', async (t) => {
  const p = setup(t);
  assert.equal((await p.run('install')).code, 0);
  const command = JSON.parse(read(p.settings)).hooks.PreToolUse[0].hooks[0].command;
  const payload = read(path.join(FIXTURES, 'claude', 'pretooluse-task.json'));
  const r = await sh(command, { env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: p.dir }), input: payload });
  assert.equal(r.code, 0);
  const out = JSON.parse(r.stdout);
  assert.equal(out.hookSpecificOutput.permissionDecision, undefined);
  assert.equal(sessionIds(path.join(p.dir, '.claude', 'session')).length, 1);
});

test('install keeps every other setting and group, backs up, and a second install changes nothing', async (t) => {
  const p = setup(t);
  mkdirSync(path.dirname(p.settings));
  const original = richSettings();
  // Four-space indentation: a rewrite keeps the file's own style.
  const originalText = `${JSON.stringify(original, null, 4)}\n`;
  writeFileSync(p.settings, originalText);

  const first = await p.run('install', '--json');
  assert.equal(first.code, 0, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.equal(read(report.backup), originalText);
  assert.deepEqual(backups(p.settings), [path.basename(report.backup)]);

  const expected = structuredClone(original);
  for (const { event, group } of expectedGroups()) (expected.hooks[event] ??= []).push(group);
  const installedText = read(p.settings);
  assert.equal(installedText, `${JSON.stringify(expected, null, 4)}\n`);

  const second = await p.run('install', '--json');
  assert.equal(second.code, 0);
  assert.equal(JSON.parse(second.stdout).changed, false);
  assert.deepEqual(JSON.parse(second.stdout).added, []);
  assert.equal(read(p.settings), installedText);
  assert.equal(backups(p.settings).length, 1);

  const removed = await p.run('uninstall', '--json');
  assert.equal(removed.code, 0);
  assert.equal(JSON.parse(removed.stdout).removed.length, lib.HOOK_REGISTRATIONS.length);
  assert.deepEqual(JSON.parse(read(p.settings)), original);
  assert.equal(read(JSON.parse(removed.stdout).backup), installedText);
  const again = await p.run('uninstall', '--json');
  assert.equal(JSON.parse(again.stdout).changed, false);
});

test(
  'entries of ours from elsewhere are replaced in place by install and removed by uninstall; ' + 'look-alikes stay',
  async (t) => {
    const p = setup(t);
    mkdirSync(path.dirname(p.settings));
    const lookAlikes = [
      { type: 'command', command: 'node /home/me/tools/my_pre_delegate.js' },
      { type: 'command', command: 'python3 /opt/legacy/hooks/subagent_stop.py' },
      // Mentions a built hook's path without running it with node.
      { type: 'command', command: 'python3 scripts/lint.py dist/hooks/pre_delegate.js' },
      { type: 'command', command: 'node "$CLAUDE_PROJECT_DIR"/.claude/hooks/pre_delegate.js' },
    ];
    // On an event we never register, even our own command is the user's.
    const elsewhere = [
      {
        hooks: [
          { type: 'command', command: 'node "$CLAUDE_PROJECT_DIR"/.claude/hooks/subagent_stop.js' },
          { type: 'command', command: 'node /x/dist/hooks/subagent_stop.js' },
        ],
      },
    ];
    const old = {
      hooks: {
        Stop: elsewhere,
        PreToolUse: [
          {
            matcher: 'Agent|Task',
            hooks: [
              {
                type: 'command',
                command:
                  "AGENT_SESSION_DEBUG=1 node '/old place/node_modules/agent-session/dist/hooks/pre_delegate.js'",
                timeout: 10,
                statusMessage: 'recording',
              },
              ...lookAlikes,
            ],
          },
          {
            matcher: 'Task',
            hooks: [
              { type: 'command', command: 'npx agent-session-pre-delegate' },
              { type: 'command', command: 'node C:\\proj\\dist\\hooks\\pre_delegate.js' },
            ],
          },
        ],
        SubagentStop: [{ hooks: [{ type: 'command', command: 'npx -y agent-session-subagent-stop' }] }],
      },
    };
    writeFileSync(p.settings, JSON.stringify(old));
    const r = await p.run('install', '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.deepEqual(
      report.removed.map((e) => e.command).sort(),
      [
        "AGENT_SESSION_DEBUG=1 node '/old place/node_modules/agent-session/dist/hooks/pre_delegate.js'",
        'npx -y agent-session-subagent-stop',
        'npx agent-session-pre-delegate',
        'node C:\\proj\\dist\\hooks\\pre_delegate.js',
      ].sort(),
    );
    const hooks = JSON.parse(read(p.settings)).hooks;
    // Updated where it was, next to the look-alikes, keeping a field someone added; the group emptied
    // of the npx entry is gone.
    assert.deepEqual(hooks.PreToolUse, [
      {
        matcher: 'Agent|Task',
        hooks: [
          {
            type: 'command',
            command: guarded(HOOK_FILE.pre_delegate),
            timeout: lib.HOOK_TIMEOUT_SECONDS,
            statusMessage: 'recording',
          },
          ...lookAlikes,
        ],
      },
    ]);
    assert.deepEqual(hooks.Stop, elsewhere);
    assert.equal(hooks.SubagentStop.length, 1);
    assert.equal(hooks.SubagentStop[0].hooks[0].command, guarded(HOOK_FILE.subagent_stop));

    assert.equal((await p.run('uninstall')).code, 0);
    assert.deepEqual(JSON.parse(read(p.settings)), {
      hooks: { Stop: elsewhere, PreToolUse: [{ matcher: 'Agent|Task', hooks: lookAlikes }] },
    });

    // Nothing of ours left: uninstall writes nothing, no backup, even where it could tidy up.
    const tidy = '{"model":"x","hooks":{}}';
    writeFileSync(p.settings, tidy);
    const before = backups(p.settings).length;
    const none = await p.run('uninstall', '--json');
    assert.equal(JSON.parse(none.stdout).changed, false);
    assert.equal(read(p.settings), tidy);
    assert.equal(backups(p.settings).length, before);
  },
);

test(
  'which commands run our hooks: node and its options, lists of commands, ' +
    'Windows paths; mentions, echo and comments are not ours',
  () => {
    const cases = [
      ['node /x/dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['node --enable-source-maps /x/dist/hooks/subagent_stop.js', 'subagent_stop'],
      ['node -r ./trace.cjs /x/dist/hooks/subagent_stop.js', 'subagent_stop'],
      ['/usr/local/bin/node /x/dist/hooks/pre_delegate.js; echo done', 'pre_delegate'],
      ['cd /x && node dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['exec node "/my dir/dist/hooks/pre_delegate.js"', 'pre_delegate'],
      // Written unquoted by an earlier version on Windows: the shell would eat the backslashes.
      ['node C:\\proj\\node_modules\\agent-session\\dist\\hooks\\pre_delegate.js', 'pre_delegate'],
      ['"C:\\Program Files\\nodejs\\node.exe" "C:\\proj\\dist\\hooks\\subagent_stop.js"', 'subagent_stop'],
      [
        'test ! -f "$CLAUDE_PROJECT_DIR/dist/hooks/pre_delegate.js" ' +
          '|| node "$CLAUDE_PROJECT_DIR/dist/hooks/pre_delegate.js"',
        'pre_delegate',
      ],
      ['DEBUG=1 npx -y agent-session-subagent-stop', 'subagent_stop'],
      ['node --title x /x/dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['env -i PATH=/usr/bin node /x/dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['env -u HOME node /x/dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['timeout -s KILL 5 nice -n 5 node /x/dist/hooks/subagent_stop.js', 'subagent_stop'],
      ['{ node /x/dist/hooks/pre_delegate.js; }', 'pre_delegate'],
      ['if true; then node /x/dist/hooks/pre_delegate.js; fi', 'pre_delegate'],
      ['node \\\n  /x/dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['cat <<EOF\nnode /x/dist/hooks/pre_delegate.js\nEOF', undefined],
      ['node --inspect /x/other.js', undefined],
      ['node --no-warnings ./scripts/check.js /x/dist/hooks/pre_delegate.js', undefined],
      ['node --inspect wrap.js /x/dist/hooks/pre_delegate.js', undefined],
      ['node -e "run()" /x/dist/hooks/pre_delegate.js', undefined],
      ['node --test /x/dist/hooks/pre_delegate.js', undefined],
      ['command -v node /x/dist/hooks/pre_delegate.js', undefined],
      ['command node /x/dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['node --no-warnings /x/dist/hooks/subagent_stop.js', 'subagent_stop'],
      [
        'node --disable-warning ExperimentalWarning --unhandled-rejections strict /x/dist/hooks/subagent_stop.js',
        'subagent_stop',
      ],
      ['# note \\\nnode /x/dist/hooks/pre_delegate.js', 'pre_delegate'],
      ['echo node /x/dist/hooks/pre_delegate.js', undefined],
      ['# node /x/dist/hooks/pre_delegate.js', undefined],
      ['true # node /x/dist/hooks/pre_delegate.js', undefined],
      ['node /x/lint.js /x/dist/hooks/pre_delegate.js', undefined],
      ['node -e "require(\'/x/dist/hooks/pre_delegate.js\')"', undefined],
      ['node "/x/dist/hooks/pre_delegate.js.bak"', undefined],
      ["echo 'a; node /x/dist/hooks/pre_delegate.js'", undefined],
    ];
    for (const [command, hook] of cases)
      assert.equal(lib.ourHook({ type: 'command', command }, 'PreToolUse'), hook, command);
  },
);

test(
  'a settings file keeps its layout (BOM, CRLF, indentation); ' +
    'one a rewrite would alter, or read-only, is refused untouched',
  async (t) => {
    const p = setup(t);
    mkdirSync(path.dirname(p.settings));
    writeFileSync(p.settings, '\ufeff{\r\n\t"model": "x"\r\n}\r\n');
    assert.equal((await p.run('install')).code, 0);
    const text = read(p.settings);
    assert.ok(text.startsWith('\ufeff{\r\n\t"model": "x",\r\n\t"hooks": {'), JSON.stringify(text.slice(0, 40)));
    assert.equal(text.replace(/\r\n/g, '').includes('\n'), false, 'every line ends in CRLF');
    assert.equal((await p.run('uninstall')).code, 0);
    assert.equal(read(p.settings), '\ufeff{\r\n\t"model": "x"\r\n}\r\n');

    for (const [json, reason] of [
      ['{"env":{"BIG":12345678901234567890}}', /the number 12345678901234567890 cannot be kept exactly/],
      ['{"a":1e400}', /the number 1e400 cannot be kept exactly/],
      ['{"d":1,"e":{"d":1,"d":2}}', /the key "d" appears twice in one object/],
    ]) {
      writeFileSync(p.settings, json);
      const r = await p.run('install');
      assert.equal(r.code, 2, json);
      assert.match(r.stderr, reason);
      assert.equal(read(p.settings), json);
      // Uninstall with nothing of ours writes nothing, so it has nothing to refuse.
      const none = await p.run('uninstall', '--json');
      assert.equal(none.code, 0, none.stderr);
      assert.equal(JSON.parse(none.stdout).changed, false);
    }
    writeFileSync(p.settings, '{"hooks": null}');
    assert.equal((await p.run('install')).code, 2);
    assert.equal(JSON.parse((await p.run('uninstall', '--json')).stdout).changed, false);
    assert.equal(read(p.settings), '{"hooks": null}');
    // The same values written differently are no loss: 1.50 is 1.5, a key may repeat in another object.
    writeFileSync(p.settings, '{"env":{"F":1.50,"H":1E2,"K":{"d":1}},"d":3,"L":[{"d":1},{"d":2}]}');
    assert.equal((await p.run('install')).code, 0);
    assert.deepEqual(JSON.parse(read(p.settings)).env, { F: 1.5, H: 100, K: { d: 1 } });

    writeFileSync(p.settings, '{"model": "opus"}');
    chmodSync(p.settings, 0o444);
    const readOnly = await p.run('install');
    assert.equal(readOnly.code, 2);
    assert.match(readOnly.stderr, /settings\.local\.json is read-only; refusing to change it/);
    assert.equal(read(p.settings), '{"model": "opus"}');
    chmodSync(p.settings, 0o666);
    assert.equal((await p.run('install')).code, 0);
    assert.equal(statSync(p.settings).mode & 0o777, 0o666, 'the mode is kept exactly, whatever the umask');
  },
);

test(
  'a dangling settings symlink is written through to its target; ' + 'the project must exist and not be HOME',
  async (t) => {
    const p = setup(t);
    mkdirSync(path.dirname(p.settings));
    const target = path.join(p.home, 'dotfiles', 'settings.json');
    symlinkSync(target, p.settings);
    mkdirSync(path.dirname(target));
    assert.equal((await p.run('install')).code, 0);
    assert.ok(lstatSync(p.settings).isSymbolicLink());
    assert.equal(JSON.parse(read(target)).hooks.SubagentStart.length, 1);

    const missing = path.join(p.home, 'no', 'such', 'project');
    const r = await runCli(['install'], { cwd: p.dir, env: cleanEnv({ HOME: p.home, CLAUDE_PROJECT_DIR: missing }) });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the project directory .*no\/such\/project \(CLAUDE_PROJECT_DIR\) does not exist/);
    assert.equal(existsSync(path.join(p.home, 'no')), false);

    mkdirSync(path.join(p.home, '.claude'));
    const home = await runCli(['install'], { cwd: p.home, env: cleanEnv({ HOME: p.home }) });
    assert.equal(home.code, 2);
    assert.match(home.stderr, /the project would be your home directory .*use install --user/);
    // HOME reached through a symlink is still HOME.
    const alias = path.join(path.dirname(p.home), 'home-alias');
    symlinkSync(p.home, alias);
    const viaLink = await runCli(['install'], {
      cwd: p.dir,
      env: cleanEnv({ HOME: p.home, CLAUDE_PROJECT_DIR: alias }),
    });
    assert.equal(viaLink.code, 2);
    assert.match(viaLink.stderr, /the project would be your home directory .*home-alias/);
    assert.deepEqual(readdirSync(p.home).sort(), ['.claude', 'dotfiles']);
    assert.deepEqual(readdirSync(path.join(p.home, '.claude')), []);
  },
);

test('a file that already has our hooks in its own layout is not rewritten; mode and symlinks are kept', async (t) => {
  const p = setup(t);
  mkdirSync(path.dirname(p.settings));
  const hooks = {};
  for (const { event, group } of expectedGroups()) (hooks[event] ??= []).push(group);
  const compact = JSON.stringify({ model: 'opus', hooks });
  writeFileSync(p.settings, compact);
  const r = await p.run('install', '--json');
  assert.equal(JSON.parse(r.stdout).changed, false);
  assert.equal(read(p.settings), compact);
  assert.deepEqual(backups(p.settings), []);

  // A dotfiles-style symlink to a private file: written through, still a link, still 0600.
  const q = setup(t);
  const target = path.join(q.home, 'dotfiles', 'claude-settings.json');
  mkdirSync(path.dirname(target));
  writeFileSync(target, '{"model": "opus"}');
  chmodSync(target, 0o600);
  mkdirSync(path.dirname(q.settings));
  symlinkSync(target, q.settings);
  assert.equal((await q.run('install')).code, 0);
  assert.ok(lstatSync(q.settings).isSymbolicLink());
  assert.equal(statSync(target).mode & 0o777, 0o600);
  assert.equal(JSON.parse(read(target)).hooks.SubagentStop[0].hooks[0].command, guarded(HOOK_FILE.subagent_stop));
  assert.equal(read(path.join(backupDir(q.settings), backups(q.settings)[0])), '{"model": "opus"}');
});

test('the plans: only groups and events emptied by uninstall go; a "*" or empty matcher counts as none', () => {
  const commands = {
    pre_delegate: 'node /a/dist/hooks/pre_delegate.js',
    subagent_stop: 'node /a/dist/hooks/subagent_stop.js',
  };
  const old = {
    hooks: {
      SubagentStart: [{ matcher: '*', hooks: [{ type: 'command', command: 'node /b/dist/hooks/subagent_stop.js' }] }],
      SubagentStop: [{ hooks: [] }, { matcher: '', hooks: [{ type: 'command', command: 'echo mine' }] }],
    },
  };
  const installed = lib.planInstall(old, commands, 15).settings;
  // The stale entry was replaced where it stood, in the group with the "*" matcher.
  assert.deepEqual(installed.hooks.SubagentStart, [
    { matcher: '*', hooks: [{ type: 'command', command: commands.subagent_stop, timeout: 15 }] },
  ]);
  assert.deepEqual(installed.hooks.SubagentStop.slice(0, 2), old.hooks.SubagentStop);
  assert.equal(lib.planInstall(installed, commands, 15).changed, false);
  const removed = lib.planUninstall(installed).settings;
  assert.deepEqual(removed, {
    hooks: { SubagentStop: [{ hooks: [] }, { matcher: '', hooks: [{ type: 'command', command: 'echo mine' }] }] },
  });
  assert.deepEqual(
    old.hooks.SubagentStart[0].hooks[0].command,
    'node /b/dist/hooks/subagent_stop.js',
    'the input is not mutated',
  );
});

test('a file that is not valid JSON, or not an object, is refused with exit 2 and left as it was', async (t) => {
  const p = setup(t);
  mkdirSync(path.dirname(p.settings));
  for (const text of ['{"hooks": {', '[]', '{"hooks": []}', '{"hooks": {"PreToolUse": {}}}']) {
    writeFileSync(p.settings, text);
    for (const command of ['install', 'uninstall']) {
      const r = await p.run(command);
      // Hooks of the wrong type hold nothing of ours: uninstall has nothing to write, so nothing to refuse.
      const nothingToRemove =
        command === 'uninstall' && (text.startsWith('{"hooks": [') || text.startsWith('{"hooks": {"'));
      assert.equal(r.code, nothingToRemove ? 0 : 2, `${command} on ${text}`);
      if (!nothingToRemove) assert.match(r.stderr, /^agent-session: /);
      assert.equal(read(p.settings), text);
    }
  }
  assert.deepEqual(backups(p.settings), []);
  assert.equal(existsSync(path.join(p.dir, '.gitignore')), false);
  const json = await p.run('install', '--json');
  assert.equal(json.code, 2);
  assert.equal(json.stdout, '');
});

test('--dry-run prints the resulting file and changes nothing', async (t) => {
  const p = setup(t);
  const dry = await p.run('install', '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(existsSync(path.join(p.dir, '.claude')), false);
  assert.equal(existsSync(path.join(p.dir, '.gitignore')), false);
  assert.equal((await p.run('install')).code, 0);
  assert.equal(dry.stdout, read(p.settings));

  const installed = read(p.settings);
  const dryUninstall = await p.run('uninstall', '--dry-run', '--json');
  const report = JSON.parse(dryUninstall.stdout);
  assert.equal(report.dry_run, true);
  assert.equal(report.changed, true);
  assert.equal(report.backup, null);
  // Nothing but our hooks in the file: uninstall would remove it.
  assert.equal(report.content, '');
  assert.deepEqual(
    report.files.map((f) => [f.file, f.changed, f.removed_file]),
    [
      [p.shared, false, false],
      [p.settings, true, true],
    ],
  );
  assert.equal(read(p.settings), installed);
  assert.deepEqual(backups(p.settings), []);
});

test('--user installs into $HOME/.claude/settings.json and leaves the project alone', async (t) => {
  const p = setup(t);
  const userFile = path.join(p.home, '.claude', 'settings.json');
  const r = await p.run('install', '--user', '--json');
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.file, userFile);
  assert.equal(report.scope, 'user');
  assert.equal(JSON.parse(read(userFile)).hooks.PreToolUse[0].hooks[0].command, guarded(HOOK_FILE.pre_delegate));
  assert.equal(existsSync(path.join(p.dir, '.claude')), false);
  assert.equal(existsSync(path.join(p.dir, '.gitignore')), false);
  assert.equal((await p.run('uninstall', '--user')).code, 0);
  // The user's file stays, even with nothing left in it.
  assert.deepEqual(JSON.parse(read(userFile)), {});
});

test(
  'a project without .claude/ below a HOME that has one installs into the project, ' + "not into the user's settings",
  async (t) => {
    const p = setup(t);
    const project = path.join(p.home, 'code', 'app');
    mkdirSync(project, { recursive: true });
    mkdirSync(path.join(p.home, '.claude'));
    const r = await runCli(['install', '--json'], { cwd: project, env: cleanEnv({ HOME: p.home }) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).file, path.join(project, '.claude', 'settings.local.json'));
    assert.deepEqual(readdirSync(path.join(p.home, '.claude')), []);
    assert.equal(existsSync(path.join(p.home, '.gitignore')), false);

    // The same with HOME given as a symlink to that home (the working directory is always a real path).
    const other = path.join(p.home, 'code', 'other');
    mkdirSync(other);
    const link = path.join(path.dirname(p.home), 'home-link');
    symlinkSync(p.home, link);
    const viaLink = await runCli(['install', '--json'], { cwd: other, env: cleanEnv({ HOME: link }) });
    assert.equal(viaLink.code, 0, viaLink.stderr);
    assert.equal(JSON.parse(viaLink.stdout).file, path.join(other, '.claude', 'settings.local.json'));
    assert.deepEqual(readdirSync(path.join(p.home, '.claude')), []);
  },
);

/** Every path under `dir` (relative, sorted), .git/ left out. */
function tree(dir) {
  return readdirSync(dir, { recursive: true })
    .filter((f) => f !== '.git' && !f.startsWith(`.git${path.sep}`))
    .sort();
}

test(
  'install from a subfolder of a git project goes to its root, says why, and leaves .gitignore alone; ' +
    'uninstall then leaves the project as it was',
  async (t) => {
    const p = setup(t);
    git(p.dir, 'init', '-q');
    writeFileSync(path.join(p.dir, 'a.txt'), 'a\n');
    git(p.dir, 'add', '-A');
    git(p.dir, 'commit', '-q', '-m', 'first');
    const sub = path.join(p.dir, 'src', 'lib');
    mkdirSync(sub, { recursive: true });
    const excludeBefore = readFileSync(path.join(p.dir, '.git', 'info', 'exclude'), 'utf8');
    const env = cleanEnv({ HOME: p.home });
    const r = await runCli(['install'], { cwd: sub, env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.split('\n')[0], `Project ${p.dir} (git work tree root of ${sub}).`);
    assert.match(r.stdout, new RegExp(`^Installed the agent-session hooks in ${p.settings}\\.$`, 'm'));
    assert.match(r.stdout, /not a dependency of this project.*settings\.local\.json/);
    assert.deepEqual(tree(p.dir), [
      '.claude',
      path.join('.claude', 'settings.local.json'),
      'a.txt',
      'src',
      path.join('src', 'lib'),
    ]);
    // This machine's paths stay out of git through the clone's own exclude file, not a shared .gitignore.
    const exclude = path.join(p.dir, '.git', 'info', 'exclude');
    assert.match(
      r.stdout,
      new RegExp(`^Added /\\.claude/settings\\.local\\.json to ${exclude} \\(this clone only\\)`, 'm'),
    );
    assert.equal(git(p.dir, 'status', '--porcelain', '--untracked-files=all'), '');
    assert.equal(git(p.dir, 'check-ignore', '.claude/settings.local.json').trim(), '.claude/settings.local.json');

    const u = await runCli(['uninstall', '--json'], { cwd: sub, env });
    assert.equal(u.code, 0, u.stderr);
    const report = JSON.parse(u.stdout);
    assert.deepEqual(report.project, { dir: p.dir, reason: 'claude-dir' });
    assert.equal(report.removed.length, lib.HOOK_REGISTRATIONS.length);
    assert.deepEqual(
      report.files.map((f) => [f.file, f.scope, f.changed, f.removed_file, f.backup]),
      [
        [p.shared, 'project', false, false, null],
        [p.settings, 'local', true, true, null],
      ],
    );
    assert.deepEqual(report.git_exclude, {
      file: exclude,
      pattern: '/.claude/settings.local.json',
      changed: true,
      tracked: false,
    });
    assert.deepEqual(tree(p.dir), ['a.txt', 'src', path.join('src', 'lib')]);
    assert.equal(git(p.dir, 'status', '--porcelain', '--untracked-files=all'), '');
    assert.equal(readFileSync(exclude, 'utf8'), excludeBefore, 'the exclude file is as git init made it');
  },
);

test("a linked work tree's local settings are excluded through the repository's common exclude file", async (t) => {
  const p = setup(t);
  git(p.dir, 'init', '-q');
  writeFileSync(path.join(p.dir, 'a.txt'), 'a\n');
  git(p.dir, 'add', '-A');
  git(p.dir, 'commit', '-q', '-m', 'first');
  const linked = path.join(path.dirname(p.dir), `${path.basename(p.dir)}-linked`);
  git(p.dir, 'worktree', 'add', '-q', linked);
  t.after(() => rmSync(linked, { recursive: true, force: true }));
  const r = await runCli(['install', '--json'], { cwd: linked, env: cleanEnv({ HOME: p.home }) });
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.git_exclude.file, path.join(p.dir, '.git', 'info', 'exclude'));
  assert.equal(git(linked, 'status', '--porcelain', '--untracked-files=all'), '');
  // A second install finds its line and adds nothing.
  const again = await runCli(['install', '--json'], { cwd: linked, env: cleanEnv({ HOME: p.home }) });
  assert.equal(JSON.parse(again.stdout).git_exclude.changed, false);
  // The main work tree installs too; uninstall in the linked one keeps the shared line the main one needs.
  assert.equal((await runCli(['install'], { cwd: p.dir, env: cleanEnv({ HOME: p.home }) })).code, 0);
  const u = await runCli(['uninstall', '--json'], { cwd: linked, env: cleanEnv({ HOME: p.home }) });
  assert.equal(JSON.parse(u.stdout).git_exclude.changed, false);
  assert.equal(git(p.dir, 'status', '--porcelain', '--untracked-files=all'), '');
  // The last one out takes the lines away.
  const last = await runCli(['uninstall', '--json'], { cwd: p.dir, env: cleanEnv({ HOME: p.home }) });
  assert.equal(JSON.parse(last.stdout).git_exclude.changed, true);
  assert.doesNotMatch(readFileSync(report.git_exclude.file, 'utf8'), /settings\.local\.json/);
});

test('a settings.local.json that git tracks gets a warning: no exclude line can keep its paths out', async (t) => {
  const p = setup(t);
  git(p.dir, 'init', '-q');
  mkdirSync(path.dirname(p.settings));
  writeFileSync(p.settings, '{"permissions": {"allow": ["Bash(ls)"]}}\n');
  git(p.dir, 'add', '-A');
  git(p.dir, 'commit', '-q', '-m', 'local settings committed');
  const r = await p.run('install');
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, /Added .* so git does not show/);
  assert.match(
    r.stdout,
    /^Warning: git tracks .*settings\.local\.json, so this machine's hook paths .*git rm --cached/m,
  );
  assert.doesNotMatch(readFileSync(path.join(p.dir, '.git', 'info', 'exclude'), 'utf8'), /settings\.local/);
});

test('a settings file with other content stays after uninstall; its backups go where git ignores them', async (t) => {
  const p = setup(t);
  git(p.dir, 'init', '-q');
  mkdirSync(path.dirname(p.settings));
  writeFileSync(p.settings, '{"model": "opus"}\n');
  writeFileSync(p.shared, '{"permissions": {"allow": ["Bash(ls)"]}}\n');
  git(p.dir, 'add', '-A');
  git(p.dir, 'commit', '-q', '-m', 'settings');
  assert.equal((await p.run('install')).code, 0);
  assert.equal((await p.run('uninstall')).code, 0);
  // Uninstall gives the file back byte for byte: only the members that change are rewritten.
  assert.equal(read(p.settings), '{"model": "opus"}\n');
  assert.equal(read(p.shared), '{"permissions": {"allow": ["Bash(ls)"]}}\n');
  assert.equal(backups(p.settings).length, 2);
  assert.equal(read(path.join(backupDir(p.settings), '.gitignore')), '*\n');
  // Neither the settings nor the backups show.
  assert.equal(git(p.dir, 'status', '--porcelain', '--untracked-files=all'), '');
});

test('uninstall removes our entries from settings.json and settings.local.json, and reports each', async (t) => {
  const p = setup(t);
  mkdirSync(path.dirname(p.settings));
  const ours = {
    hooks: { SubagentStop: [{ hooks: [{ type: 'command', command: 'node /old/dist/hooks/subagent_stop.js' }] }] },
  };
  writeFileSync(p.shared, JSON.stringify({ model: 'opus', ...ours }));
  assert.equal((await p.run('install')).code, 0);
  const r = await p.run('uninstall');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(
    lines[1],
    new RegExp(`^Removed the agent-session hooks from ${p.shared} \\(previous version: .*\\)\\.$`),
  );
  assert.equal(lines[2], '  - SubagentStop: node /old/dist/hooks/subagent_stop.js');
  assert.ok(lines.includes(`Removed the agent-session hooks and ${p.settings}, which held nothing else.`), r.stdout);
  assert.deepEqual(JSON.parse(read(p.shared)), { model: 'opus' });
  assert.equal(existsSync(p.settings), false);
  // .claude/ still holds settings.json (and the backup): it stays.
  assert.deepEqual(readdirSync(path.dirname(p.settings)).sort(), ['.agent-session-backups', 'settings.json']);

  // When the second file cannot be written, the first is put back: all or nothing.
  writeFileSync(p.shared, JSON.stringify({ model: 'opus', ...ours }));
  const local = JSON.stringify({ env: { A: '1' }, ...ours });
  // A name the temp file beside it cannot get (too long for the file system): a failure no check foresees.
  const longTarget = path.join(p.home, 'x'.repeat(250));
  writeFileSync(longTarget, local);
  symlinkSync(longTarget, p.settings);
  const failed = await p.run('uninstall');
  assert.notEqual(failed.code, 0);
  assert.match(failed.stderr, /^agent-session: cannot write .*settings\.local\.json: ENAMETOOLONG/);
  assert.deepEqual(JSON.parse(read(p.shared)), { model: 'opus', ...ours });
  assert.equal(read(longTarget), local);
});

test(
  'a project depending on the package gets settings.json with commands under $CLAUDE_PROJECT_DIR, ' +
    'a quiet no-op once the package is gone',
  async (t) => {
    const p = setup(t);
    // The package installed in the project, and run from there.
    const pkg = path.join(p.dir, 'node_modules', 'agent-session');
    cpSync(DIST, path.join(pkg, 'dist'), { recursive: true });
    copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
    const r = await runNode(path.join(pkg, 'dist', 'bin', 'agent-session.js'), ['install', '--json'], {
      cwd: p.dir,
      env: cleanEnv({ HOME: p.home }),
    });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.scope, 'project');
    assert.equal(report.file, p.shared);
    assert.deepEqual(report.warnings, []);
    const file = (hook) => `"$CLAUDE_PROJECT_DIR/node_modules/agent-session/dist/hooks/${hook}.js"`;
    assert.deepEqual(JSON.parse(read(p.shared)), {
      hooks: expectedHooks((h) => `test ! -f ${file(h)} || node ${file(h)}`),
    });
    assert.equal(existsSync(p.settings), false);

    const command = JSON.parse(read(p.shared)).hooks.PreToolUse[0].hooks[0].command;
    const payload = read(path.join(FIXTURES, 'claude', 'pretooluse-task.json'));
    const hookEnv = cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: p.dir });
    const ran = await sh(command, { env: hookEnv, input: payload });
    assert.equal(ran.code, 0);
    assert.match(
      JSON.parse(ran.stdout).hookSpecificOutput.updatedInput.prompt,
      /\[agent-session\] Your session: agent-/,
    );

    // --user from that copy: every project's hooks would hang on this one project's node_modules.
    const user = await runNode(path.join(pkg, 'dist', 'bin', 'agent-session.js'), ['install', '--user', '--json'], {
      cwd: p.dir,
      env: cleanEnv({ HOME: p.home }),
    });
    assert.equal(user.code, 0, user.stderr);
    assert.deepEqual(JSON.parse(user.stdout).warnings.slice(-1), [
      `the user hooks run the copy of agent-session inside ${p.dir}: removing that project or its node_modules ` +
        'turns them off in every project (install the package globally, npm install -g agent-session, ' +
        'and run agent-session install --user from there)',
    ]);
    const fromBuild = await p.run('uninstall', '--user');
    assert.equal(fromBuild.code, 0, fromBuild.stderr);
    assert.doesNotMatch((await p.run('install', '--user')).stdout, /inside/, 'a copy outside the project: no warning');

    rmSync(path.join(p.dir, 'node_modules'), { recursive: true });
    assert.deepEqual(await sh(command, { env: hookEnv, input: payload }), { code: 0, stdout: '' });

    // Listed in package.json but not installed yet (a fresh clone): the same commands, and a warning.
    const q = setup(t);
    writeFileSync(
      path.join(q.dir, 'package.json'),
      JSON.stringify({ name: 'app', devDependencies: { 'agent-session': '^0.1.0' } }),
    );
    const listed = await q.run('install');
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(read(q.shared)), JSON.parse(read(p.shared)));
    assert.match(
      listed.stdout,
      /^Warning: .*node_modules\/agent-session\/dist\/hooks\/pre_delegate\.js.* not found: .*npm install/m,
    );
  },
);

test("--shared writes settings.json with this machine's path, and warns that teammates lack it", async (t) => {
  const p = setup(t);
  const r = await p.run('install', '--shared', '--json');
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.scope, 'project');
  assert.equal(report.file, p.shared);
  assert.deepEqual(JSON.parse(read(p.shared)), { hooks: expectedHooks() });
  assert.equal(report.warnings.length, 1);
  assert.match(report.warnings[0], /paths of this machine: a teammate .* has no hooks/);
  const text = await p.run('install', '--shared');
  assert.match(text.stdout, /^Warning: .*paths of this machine/m);
  const both = await p.run('install', '--shared', '--user');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^agent-session: --user and --shared name different files .*: give one of them\n$/);
});

test('hooks registered in another settings file Claude Code reads are reported as double registrations', async (t) => {
  const p = setup(t);
  assert.equal((await p.run('install')).code, 0);
  // The same command string in two files: Claude Code runs it once, so nothing to warn about.
  const user = await p.run('install', '--user', '--json');
  assert.equal(user.code, 0, user.stderr);
  assert.deepEqual(JSON.parse(user.stdout).warnings, []);
  // Another command for the same hooks in the user's file runs besides the project's.
  const userFile = path.join(p.home, '.claude', 'settings.json');
  const unguarded = { type: 'command', command: `node ${HOOK_FILE.pre_delegate}` };
  writeFileSync(userFile, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Agent|Task', hooks: [unguarded] }] } }));
  const project = await p.run('install');
  assert.match(
    project.stdout,
    /^Warning: .*home\/\.claude\/settings\.json also registers the agent-session hooks with another .*--user\)\.$/m,
  );

  // An earlier install's absolute path left in the shared file, found by an install into the local one.
  const q = setup(t);
  mkdirSync(path.dirname(q.shared));
  writeFileSync(q.shared, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Agent|Task', hooks: [unguarded] }] } }));
  const local = JSON.parse((await q.run('install', '--json')).stdout);
  assert.equal(local.file, q.settings);
  assert.deepEqual(local.warnings, [
    `${q.shared} also registers the agent-session hooks with another command: Claude Code runs both, ` +
      'so each hook runs twice; remove one (agent-session uninstall, then this install again)',
  ]);
  assert.equal((await q.run('uninstall')).code, 0);
  assert.deepEqual(JSON.parse((await q.run('install', '--json')).stdout).warnings, []);

  // A team's dependency form whose package is not installed here does nothing: no double registration.
  const r = setup(t);
  mkdirSync(path.dirname(r.shared));
  const inactive = {
    type: 'command',
    command:
      'test ! -f "$CLAUDE_PROJECT_DIR/node_modules/agent-session/dist/hooks/pre_delegate.js" || ' +
      'node "$CLAUDE_PROJECT_DIR/node_modules/agent-session/dist/hooks/pre_delegate.js"',
  };
  writeFileSync(r.shared, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Agent|Task', hooks: [inactive] }] } }));
  assert.deepEqual(JSON.parse((await r.run('install', '--json')).stdout).warnings, []);
});

test('install and uninstall refuse the agent-session repository itself unless --allow-self', async (t) => {
  const p = setup(t);
  writeFileSync(path.join(p.dir, 'package.json'), JSON.stringify({ name: 'agent-session', version: '0.0.0' }));
  for (const command of ['install', 'uninstall']) {
    const r = await p.run(command);
    assert.equal(r.code, 2, command);
    assert.match(r.stderr, /^agent-session: .* is the agent-session repository itself.*pass --allow-self/);
  }
  assert.equal(existsSync(path.join(p.dir, '.claude')), false);
  assert.equal((await p.run('install', '--allow-self')).code, 0);
  assert.equal((await p.run('uninstall', '--allow-self')).code, 0);
  assert.deepEqual(readdirSync(p.dir), ['package.json']);
});

test('a package path that needs quoting for the shell is quoted, and the installed hook runs', async (t) => {
  const p = setup(t);
  // A backslash is no path separator here, but the shell would eat it unquoted.
  const pkg = path.join(p.home, 'pkg\\1');
  cpSync(DIST, path.join(pkg, 'dist'), { recursive: true });
  copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
  const r = await runNode(path.join(pkg, 'dist', 'bin', 'agent-session.js'), ['install'], {
    cwd: p.dir,
    env: cleanEnv({ HOME: p.home }),
  });
  assert.equal(r.code, 0, r.stderr);
  const command = JSON.parse(read(p.settings)).hooks.PreToolUse[0].hooks[0].command;
  const quoted = `'${pkg.replace(/'/g, "'\\''")}/dist/hooks/pre_delegate.js'`;
  assert.equal(command, `test ! -f ${quoted} || node ${quoted}`);
  const ran = await sh(command, {
    env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: p.dir }),
    input: read(path.join(FIXTURES, 'claude', 'pretooluse-task.json')),
  });
  assert.equal(ran.code, 0);
  assert.match(JSON.parse(ran.stdout).hookSpecificOutput.updatedInput.prompt, /\[agent-session\] Your session: agent-/);
  // A second install recognises the quoted entries as ours: nothing changes.
  const again = await runNode(path.join(pkg, 'dist', 'bin', 'agent-session.js'), ['install', '--json'], {
    cwd: p.dir,
    env: cleanEnv({ HOME: p.home }),
  });
  assert.equal(JSON.parse(again.stdout).changed, false);
});

test('install refuses with a clear error when the built hooks are not next to the CLI', async (t) => {
  const p = setup(t);
  // The CLI is dist/bin/ (its launcher and bundle), copied without dist/hooks/.
  const lonely = path.join(p.home, 'pkg', 'dist', 'bin', 'agent-session.js');
  cpSync(path.dirname(CLI), path.dirname(lonely), { recursive: true });
  const r = await runNode(lonely, ['install'], { cwd: p.dir, env: cleanEnv({ HOME: p.home }) });
  assert.equal(r.code, 4);
  assert.match(r.stderr, /^agent-session: /);
  assert.equal(existsSync(path.join(p.dir, '.claude')), false);
});

test('the plugin: hooks/hooks.json registers the same events and matchers through ${CLAUDE_PLUGIN_ROOT}', () => {
  const file = JSON.parse(read(path.join(ROOT, 'hooks', 'hooks.json')));
  assert.deepEqual(file, lib.pluginHooksFile());
  const registered = [];
  for (const [event, groups] of Object.entries(file.hooks)) {
    for (const group of groups) {
      for (const entry of group.hooks) {
        // Guarded: a plugin installed without dist/ (an unbuilt checkout) runs nothing instead of failing.
        const hookFile = /"\$\{CLAUDE_PLUGIN_ROOT\}\/dist\/hooks\/(?:pre_delegate|subagent_stop)\.js"/.source;
        assert.match(entry.command, new RegExp(`^test ! -f (${hookFile}) \\|\\| node \\1$`));
        assert.equal(entry.timeout, lib.HOOK_TIMEOUT_SECONDS);
        registered.push({ event, matcher: group.matcher, hook: lib.ourHook(entry) });
      }
    }
  }
  assert.deepEqual(
    registered,
    lib.HOOK_REGISTRATIONS.map((r) => ({ event: r.event, matcher: r.matcher, hook: r.hook })),
  );
  const manifest = JSON.parse(read(path.join(ROOT, '.claude-plugin', 'plugin.json')));
  const pkg = JSON.parse(read(path.join(ROOT, 'package.json')));
  assert.equal(manifest.name, pkg.name);
  assert.equal(manifest.version, pkg.version);
  assert.ok(pkg.files.includes('hooks/hooks.json') && pkg.files.includes('.claude-plugin/'));
  // A directory marketplace of the package itself: `claude plugin marketplace add <package dir>`.
  const market = JSON.parse(read(path.join(ROOT, '.claude-plugin', 'marketplace.json')));
  assert.deepEqual(
    market.plugins.map((p) => [p.name, p.source]),
    [[pkg.name, './']],
  );
});

test(
  "the repository's own .claude/settings.json runs the project's built hooks, " + 'and nothing before they are built',
  async (t) => {
    const settings = JSON.parse(read(path.join(ROOT, '.claude', 'settings.json')));
    assert.deepEqual(settings.hooks, lib.repositoryHooks());
    const events = Object.entries(settings.hooks).map(([event, groups]) => [event, groups.map((g) => g.matcher)]);
    assert.deepEqual(
      events,
      lib.HOOK_REGISTRATIONS.map((r) => [r.event, [r.matcher]]),
    );
    // Uninstall would recognise them as ours.
    assert.deepEqual(lib.planUninstall(settings).settings, {});

    const command = settings.hooks.PreToolUse[0].hooks[0].command;
    const payload = read(path.join(FIXTURES, 'claude', 'pretooluse-task.json'));
    const unbuilt = tempDir(t);
    const none = await sh(command, { env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: unbuilt }), input: payload });
    assert.deepEqual(none, { code: 0, stdout: '' });
    assert.deepEqual(readdirSync(unbuilt), []);

    const built = tempDir(t);
    symlinkSync(DIST, path.join(built, 'dist'));
    const ran = await sh(command, { env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: built }), input: payload });
    assert.equal(ran.code, 0);
    assert.equal(JSON.parse(ran.stdout).hookSpecificOutput.permissionDecision, undefined);
  },
);

test('install and uninstall refuse --dir (exit 2): the hooks find their store from the project', async (t) => {
  const { dir, run } = setup(t);
  for (const command of ['install', 'uninstall']) {
    for (const extra of [[], ['--mcp'], ['--statusline']]) {
      const result = await run(command, ...extra, '--dir', 'elsewhere');
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        new RegExp(`^agent-session: ${command} does not take --dir: the hooks find the store`),
      );
    }
  }
  assert.deepEqual(readdirSync(dir), [], 'nothing written');
});
