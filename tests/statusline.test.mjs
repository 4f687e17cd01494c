// statusline: the line Claude Code's statusLine command prints for a conversation, from the payload the
// real CLI sends (tests/fixtures/statusline/payload.json) against stores the real hooks wrote; and
// install --statusline / uninstall --statusline in settings files with and without a status line.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { flow, life, pre, project } from './helpers/hooks.mjs';
import { bareProject } from './helpers/installs.mjs';
import { cleanEnv, DIST, FIXTURES, runCli, runNode, SUBAGENT_STOP } from './helpers/run.mjs';

const STATUSLINE = path.join(DIST, 'hooks', 'statusline.js');
// No background sweep during a test: the one that counts runs in the foreground (--sweep).
const HOOK_ENV = { AGENT_SESSION_SWEEP_INTERVAL_MINUTES: '100000' };

/** The real payload, moved to the conversation `conversation` of the project `dir`. */
function payload(dir, conversation) {
  const real = JSON.parse(readFileSync(path.join(FIXTURES, 'statusline', 'payload.json'), 'utf8'));
  const workspace = { ...real.workspace, current_dir: dir, project_dir: dir };
  return JSON.stringify({ ...real, session_id: conversation, cwd: dir, workspace });
}

/** Runs dist/hooks/statusline.js as Claude Code does: the payload on stdin, CLAUDE_PROJECT_DIR set. */
function statusline(dir, input, env = {}) {
  return runNode(STATUSLINE, [], { cwd: dir, env: cleanEnv({ CLAUDE_PROJECT_DIR: dir, ...env }), input });
}

/** One delegation of an agent type in a conversation, through the real hooks, left as `end` says. */
async function delegate(proj, conversation, n, end) {
  const f = flow({ session: conversation, toolUseId: `toolu_${n}`, agentId: `agent${n}`, type: `type-${n}` });
  await pre(proj, f.pre, HOOK_ENV);
  await life(proj, f.post, HOOK_ENV);
  await life(proj, f.start, HOOK_ENV);
  if (end === 'running') return;
  const message = end === 'completed' ? 'Done: all tests pass.' : `Here is where I am.\nsession-phase: ${end}`;
  await life(proj, f.stop(message), HOOK_ENV);
}

test("statusline counts the conversation's sessions waiting, paused and running, else says nothing", async (t) => {
  const proj = project(t);
  const line = async (conversation) => {
    const r = await statusline(proj.dir, payload(proj.dir, conversation));
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    return r.stdout;
  };
  assert.equal(await line('conv-a'), '', 'no store: nothing to say');
  await delegate(proj, 'conv-a', 1, 'completed');
  assert.equal(await line('conv-a'), '', 'only a finished session: nothing to say');

  await delegate(proj, 'conv-a', 2, 'approval');
  await delegate(proj, 'conv-a', 3, 'planning');
  await delegate(proj, 'conv-a', 4, 'running');
  await delegate(proj, 'conv-b', 5, 'approval');
  assert.equal(await line('conv-a'), '\u23f8 1 waiting for approval \u00b7 \u23f8 1 paused \u00b7 \u25b6 1 running\n');
  assert.equal(
    await line('conv-b'),
    '\u23f8 1 waiting for approval\n',
    "another conversation's sessions are not its own",
  );
  assert.equal(await line('conv-z'), '', 'a conversation with no session and no sweep yet');

  // The periodic sweep lists the project's paused sessions: each conversation counts the others' ones.
  const sweep = await runNode(SUBAGENT_STOP, ['--sweep'], {
    cwd: proj.dir,
    env: cleanEnv({ CLAUDE_PROJECT_DIR: proj.dir }),
  });
  assert.equal(sweep.code, 0, sweep.stderr);
  assert.equal(JSON.parse(sweep.stdout).paused.total, 3);
  const [a, b, z] = await Promise.all(['conv-a', 'conv-b', 'conv-z'].map(line));
  const mine = '\u23f8 1 waiting for approval \u00b7 \u23f8 1 paused \u00b7 \u25b6 1 running';
  assert.equal(a, `${mine} \u00b7 1 paused in other conversations\n`);
  assert.equal(b, '\u23f8 1 waiting for approval \u00b7 2 paused in other conversations\n');
  assert.equal(z, '3 paused in other conversations\n');

  // A listed session finished since the sweep: no longer counted (its record is read again).
  const waiting = JSON.parse(sweep.stdout).paused.sessions.find((s) => s.conversation === 'conv-b');
  const done = await runCli(['finalize', waiting.id, 'completed'], { cwd: proj.dir, env: cleanEnv() });
  assert.equal(done.code, 0, done.stderr);
  assert.equal(await line('conv-z'), '2 paused in other conversations\n');

  // The CLI's statusline prints the same line.
  const cli = await runCli(['statusline'], {
    cwd: proj.dir,
    env: cleanEnv({ CLAUDE_PROJECT_DIR: proj.dir }),
    input: payload(proj.dir, 'conv-a'),
  });
  assert.deepEqual([cli.code, cli.stdout, cli.stderr], [0, `${mine}\n`, '']);

  // By hand: --dir names the store; --json and unknown options are usage errors; help offers no --json.
  const elsewhere = project(t);
  const byHand = (args) =>
    runCli(args, {
      cwd: elsewhere.dir,
      env: cleanEnv({ CLAUDE_PROJECT_DIR: elsewhere.dir }),
      input: payload(elsewhere.dir, 'conv-a'),
    });
  const [dir, noDir, json, bogus, help, watchHelp] = await Promise.all([
    byHand(['statusline', '--dir', proj.store]),
    byHand(['statusline']),
    byHand(['statusline', '--json']),
    byHand(['statusline', '--bogus']),
    byHand(['statusline', '--help']),
    byHand(['watch', '--help']),
  ]);
  assert.deepEqual([dir.code, dir.stdout, dir.stderr], [0, `${mine}\n`, '']);
  assert.deepEqual([noDir.code, noDir.stdout], [0, '']);
  assert.equal(json.code, 2);
  assert.match(json.stderr, /statusline has no --json/);
  assert.equal(json.stdout, '');
  assert.equal(bogus.code, 2);
  assert.match(bogus.stderr, /bogus/);
  assert.match(help.stdout, /--dir/);
  assert.doesNotMatch(help.stdout, /--json/);
  assert.doesNotMatch(watchHelp.stdout, /--json/);
});

test('statusline prints nothing and exits 0 on input it cannot use, or a store it cannot read', async (t) => {
  const proj = project(t);
  await delegate(proj, 'conv-a', 1, 'approval');
  const inputs = [
    '',
    'not json',
    '[]',
    '{"session_id": 5}',
    '{"session_id": "../x"}',
    '{"session_id": "conv-a"',
    '\u0000\u00ff',
  ];
  // A conversation index that is not JSON: a status line shows no error.
  const other = path.join(proj.store, '.claude-code', 'conv-bad.json');
  writeFileSync(other, '{ broken');
  const runs = await Promise.all([
    ...inputs.map((input) => statusline(proj.dir, input)),
    statusline(proj.dir, payload(proj.dir, 'conv-bad')),
    statusline(proj.dir, payload(proj.dir, 'conv-a'), { AGENT_SESSION_CONFIG: path.join(proj.dir, 'missing.json') }),
    runCli(['statusline'], { cwd: proj.dir, env: cleanEnv({ CLAUDE_PROJECT_DIR: proj.dir }), input: 'not json' }),
  ]);
  for (const [i, r] of runs.entries()) assert.deepEqual([r.code, r.stdout, r.stderr], [0, '', ''], `run ${i}`);
  // ... and the same store and payload do say something.
  assert.equal((await statusline(proj.dir, payload(proj.dir, 'conv-a'))).stdout, '\u23f8 1 waiting for approval\n');
});

test('install --statusline sets the status line but never replaces another; uninstall removes only ours', async (t) => {
  const proj = bareProject(t);
  const env = cleanEnv({ HOME: proj.home });
  const run = (args) => runCli(args, { cwd: proj.dir, env });
  const local = path.join(proj.dir, '.claude', 'settings.local.json');
  const settings = () => JSON.parse(readFileSync(local, 'utf8'));

  const first = await run(['install', '--statusline']);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /Installed the agent-session status line in .*settings\.local\.json/);
  const { statusLine } = settings();
  assert.equal(statusLine.type, 'command');
  assert.equal(statusLine.command, `test ! -f ${STATUSLINE} || node ${STATUSLINE}`);
  assert.equal(settings().hooks, undefined, 'the hooks are not installed with it');
  const reported = await run(['status']);
  assert.match(reported.stdout, /^Status line \(local\): agent-session's, test ! -f /m);
  const again = await run(['install', '--statusline']);
  assert.equal(again.code, 0);
  assert.match(again.stdout, /status line already installed; nothing changed/);
  // Uninstalling the hooks leaves the status line, and says so.
  const hooksOnly = await run(['uninstall']);
  assert.equal(hooksOnly.code, 0, hooksOnly.stderr);
  assert.match(hooksOnly.stdout, /keeps the agent-session status line.*: agent-session uninstall --statusline removes/);
  assert.deepEqual(settings().statusLine, statusLine);

  // The command written runs our status line (as Claude Code runs it: sh -c, the payload on stdin).
  await delegate({ dir: proj.dir, store: proj.store }, 'conv-a', 1, 'approval');
  const shown = execFileSync('sh', ['-c', statusLine.command], {
    cwd: proj.dir,
    env: cleanEnv({ CLAUDE_PROJECT_DIR: proj.dir }),
    input: payload(proj.dir, 'conv-a'),
    encoding: 'utf8',
  });
  assert.equal(shown, '\u23f8 1 waiting for approval\n');

  const removed = await run(['uninstall', '--statusline']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(
    removed.stdout,
    /Removed the agent-session status line and .*settings\.local\.json, which held nothing else/,
  );
  const none = await run(['uninstall', '--statusline']);
  assert.equal(none.code, 0);

  // Someone else's status line: left as it is (exit 3), with a script that shows both.
  const theirs = { type: 'command', command: 'printf mine', padding: 1 };
  writeFileSync(local, `${JSON.stringify({ statusLine: theirs }, null, 2)}\n`);
  const before = readFileSync(local, 'utf8');
  const refused = await run(['install', '--statusline']);
  assert.equal(refused.code, 3);
  assert.match(refused.stdout, /already has a status line that is not agent-session's; left as it is/);
  assert.match(refused.stdout, /printf mine/);
  assert.equal(readFileSync(local, 'utf8'), before);
  const script = refused.stdout
    .split('\n')
    .filter((l) => l.startsWith('  '))
    .slice(1)
    .map((l) => l.slice(2))
    .join('\n');
  assert.match(script, /^#!\/bin\/sh\n/);
  const both = execFileSync('sh', ['-c', script], {
    cwd: proj.dir,
    env: cleanEnv({ CLAUDE_PROJECT_DIR: proj.dir }),
    input: payload(proj.dir, 'conv-a'),
    encoding: 'utf8',
  });
  assert.equal(both, 'mine | \u23f8 1 waiting for approval\n');
  const json = await run(['install', '--statusline', '--json']);
  assert.equal(json.code, 3);
  assert.equal(JSON.parse(json.stdout).refused.command, 'printf mine');
  const other = JSON.parse((await run(['status', '--json'])).stdout).status_line;
  assert.deepEqual(other, { place: 'local', file: local, command: 'printf mine', ours: false });
  const kept = await run(['uninstall', '--statusline']);
  assert.equal(kept.code, 0);
  assert.equal(readFileSync(local, 'utf8'), before, 'uninstall leaves a status line that is not ours');
});

test('install --statusline refuses when another settings file has a status line that is not ours', async (t) => {
  const proj = bareProject(t);
  const env = cleanEnv({ HOME: proj.home });
  const run = (args) => runCli(args, { cwd: proj.dir, env });
  const claude = (dir, name) => path.join(dir, '.claude', name);
  const user = claude(proj.home, 'settings.json');
  const local = claude(proj.dir, 'settings.local.json');
  const shared = claude(proj.dir, 'settings.json');
  const write = (file, command) =>
    writeFileSync(file, `${JSON.stringify({ statusLine: { type: 'command', command } })}\n`);

  mkdirSync(path.dirname(user));
  // The user's: ours in the project would replace it there.
  write(user, 'npx ccusage statusline');
  const under = await run(['install', '--statusline']);
  assert.equal(under.code, 3, under.stderr);
  assert.match(under.stdout, /settings\.json has a status line that is not agent-session's \(one in .*settings\.local/);
  assert.match(under.stdout, /^ {2}npx ccusage statusline$/m);
  assert.match(under.stdout, /save this script \(for example as ~\/\.claude\/statusline\.sh/);
  assert.match(under.stdout, /^ {2}#!\/bin\/sh$/m);
  assert.equal(existsSync(local), false, 'nothing written');
  // The same for --user when the user's file has it (its script belongs beside that file).
  const userScope = await run(['install', '--statusline', '--user']);
  assert.equal(userScope.code, 3);
  assert.match(userScope.stdout, /already has a status line .*\n.*\n.*for example as ~\/\.claude\/statusline\.sh/);

  // The local settings' (drawn before the shared file's): ours in settings.json would never show.
  rmSync(user);
  write(local, 'printf mine');
  const over = await run(['install', '--statusline', '--shared', '--json']);
  assert.equal(over.code, 3, over.stderr);
  const { refused } = JSON.parse(over.stdout);
  assert.deepEqual([refused.file, refused.place, refused.command], [local, 'local', 'printf mine']);
  assert.equal(existsSync(shared), false, 'nothing written');
  const text = await run(['install', '--statusline', '--shared']);
  assert.match(text.stdout, /\(Claude Code draws it instead of one in .*settings\.json\); nothing written/);
  assert.match(text.stdout, /for example as \.claude\/statusline\.sh/);

  // Once that one is ours, the install goes ahead.
  rmSync(local);
  assert.equal((await run(['install', '--statusline'])).code, 0);
  const installed = await run(['install', '--statusline', '--shared']);
  assert.equal(installed.code, 0, installed.stdout);
  assert.equal(JSON.parse(readFileSync(shared, 'utf8')).statusLine.type, 'command');
});

test("which status lines are ours: the forms install writes, never a command that also runs another's", async () => {
  const tools = (file) => import(pathToFileURL(path.join(DIST, 'tools', 'install', file)).href);
  const { isOurStatusLine } = await tools('status-line-setting.js');
  const { dependencyCommand, guardedCommand } = await tools('registrations.js');
  const ours = (command) => isOurStatusLine({ type: 'command', command });
  for (const command of [
    dependencyCommand('statusline'),
    guardedCommand("/opt/it's here/dist/hooks/statusline.js"),
    'node /opt/agent-session/dist/hooks/statusline.js',
    'npx agent-session statusline',
  ])
    assert.equal(ours(command), true, command);
  for (const command of [
    'sh .claude/statusline.sh',
    'node /opt/agent-session/dist/hooks/statusline.js; ccusage statusline',
    'test ! -f /a/dist/hooks/statusline.js || node /b/dist/hooks/statusline.js',
    'ccusage statusline',
  ])
    assert.equal(ours(command), false, command);
});
