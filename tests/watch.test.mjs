// `agent-session watch` under a real pseudo-terminal (tmux, on a private server): it draws the store, follows a
// change made through the CLI, filters with `a`, quits with `q` and with Ctrl-C, and gives the terminal back (the
// alternate screen left, the cursor shown). Piped, it refuses. The layout, apart from the terminal, in-process.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { cleanEnv, cli, CLI, DIST, loadLibrary, tempDir } from './helpers/run.mjs';
import { until } from './helpers/poll.mjs';

const lib = await loadLibrary();
const { Sessions } = lib;
const { layoutWatch } = await import(pathToFileURL(path.join(DIST, 'tools', 'watch', 'watch-layout.js')).href);
const { WatchModel } = await import(pathToFileURL(path.join(DIST, 'tools', 'watch', 'watch-model.js')).href);
const { watchSessions } = await import(pathToFileURL(path.join(DIST, 'tools', 'watch', 'watch-screen.js')).href);
const { colourFor, displayWidth } = await import(pathToFileURL(path.join(DIST, 'tools', 'cli', 'colour.js')).href);

const SGR = /\u001b\[[0-9;]*m/;

/** A store with a running root, its child waiting for approval (with a question), another running one, one done. */
async function store(t) {
  const dir = tempDir(t, 'agent-session-watch-');
  const sessions = Sessions.open({ dir: path.join(dir, 'store'), cwd: dir, env: {} });
  await sessions.create({ agentName: 'explorer', id: 'leak', purpose: 'Find the leak' });
  await sessions.update('leak', { phase: 'executing' });
  await sessions.create({
    agentName: 'reviewer',
    id: 'schema',
    purpose: 'Review the schema',
    parent: 'leak',
    claude: { last_message: 'The change drops a column.\nShall I go ahead?' },
  });
  await sessions.update('schema', { phase: 'approval' });
  await sessions.create({ agentName: 'writer', id: 'docs', purpose: 'Write the docs' });
  await sessions.update('docs', { phase: 'executing' });
  await sessions.create({ agentName: 'tester', id: 'tests', purpose: 'Run the tests' });
  await sessions.finalize('tests', 'completed');
  return { dir, store: path.join(dir, 'store') };
}

/** A tmux server of this test's own (its socket in the temp dir) running a plain shell in a 120x40 pane. */
function terminal(dir) {
  const socket = path.join(dir, 'tmux.sock');
  // No history file: the shell would write it in the temp directory as the server stops.
  const env = cleanEnv({ HOME: dir, TERM: 'xterm-256color', PS1: '$ ', HISTFILE: '' });
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  delete env.TMUX;
  const tmux = (...args) => execFileSync('tmux', ['-S', socket, '-f', '/dev/null', ...args], { env, encoding: 'utf8' });
  const running = () => {
    try {
      return tmux('ls') !== undefined;
    } catch {
      return false;
    }
  };
  tmux('new-session', '-d', '-s', 'w', '-x', '120', '-y', '40', 'bash --norc --noprofile');
  return {
    /** Called before the temp directory goes: without its socket the server could not be reached. */
    close: async () => {
      tmux('kill-server');
      await until(() => !running(), 'the tmux server to stop');
    },
    type: (line) => tmux('send-keys', '-t', 'w', line, 'Enter'),
    key: (key) => tmux('send-keys', '-t', 'w', key),
    resize: (columns) => tmux('resize-window', '-t', 'w', '-x', String(columns)),
    screen: ({ escapes = false } = {}) => tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', 'w'),
    /** [alternate screen on, cursor shown] */
    modes: () => tmux('display', '-p', '-t', 'w', '#{alternate_on} #{cursor_flag}').trim(),
    shows: (what, text) =>
      until(() => text.test(tmux('capture-pane', '-p', '-t', 'w')), what, { intervalMs: 50, timeoutMs: 15_000 }),
  };
}

test('watch in a terminal: follows a change, a filters, q and Ctrl-C quit, the screen is restored', async (t) => {
  const { dir, store: storeDir } = await store(t);
  const term = terminal(dir);
  try {
    await session(term, storeDir);
  } finally {
    await term.close();
  }
});

/** What the person at the terminal does, and sees. */
async function session(term, storeDir) {
  const watch = `node ${CLI} --dir ${storeDir} watch; echo "watch-exit=$?"`;
  term.type(`clear; ${watch}`);
  await term.shows('the first screen', /Running and paused/);
  let screen = term.screen();
  assert.match(screen, /▶ 2 running · 1 waiting for approval · 1 finished today/);
  assert.match(screen, /^explorer +executing .*Find the leak$/m);
  const question = /^└ reviewer +approval .*Review the schema · waits \d+s for approval: "Shall I go ahead\?"$/m;
  assert.match(screen, question);
  assert.match(screen, /^Finished\n✓ completed +tester .*Run the tests$/m);
  assert.equal(term.modes(), '1 0', 'the alternate screen is on and the cursor hidden');
  assert.match(term.screen({ escapes: true }), SGR, 'coloured on a terminal');

  // A change through the CLI shows within the poll's deadline.
  const changed = await cli(storeDir, ['update', 'docs', '--phase', 'approval']);
  assert.equal(changed.code, 0, changed.stderr);
  await term.shows('the change', /▶ 1 running · 2 waiting for approval/);

  term.key('a');
  await term.shows('the approval filter', /Waiting for approval/);
  screen = term.screen();
  assert.match(screen, /Write the docs/);
  assert.match(screen, /Review the schema/);
  assert.doesNotMatch(screen, /Find the leak|Run the tests/);
  term.key('a');
  await term.shows('all again', /Find the leak/);

  // Narrower: laid out again for 70 columns (the store's path cut, the keys still on the title line).
  term.resize(70);
  await term.shows('the screen laid out for 70 columns', /^agent-session watch {2}\S*… +q quit · a approval only$/m);
  assert.match(term.screen(), /^explorer +executing .*Find the leak$/m);

  term.key('q');
  await term.shows('the shell after q', /^watch-exit=0$/m);
  assert.doesNotMatch(term.screen(), /Running and paused/, 'the alternate screen is gone');
  assert.equal(term.modes(), '0 1', 'the main screen is back and the cursor shown');

  // Ctrl-C, with NO_COLOR: no colour at all, and the same clean exit.
  term.type(`clear; NO_COLOR=1 ${watch}`);
  await term.shows('the screen without colour', /Running and paused/);
  assert.doesNotMatch(term.screen({ escapes: true }), SGR);
  term.key('C-c');
  await term.shows('the shell after Ctrl-C', /^watch-exit=0$/m);
  assert.doesNotMatch(term.screen(), /Running and paused/);
  assert.equal(term.modes(), '0 1');

  // SIGTERM from elsewhere: the same (the shell writes its pid and becomes watch, keeping it).
  const pidFile = path.join(path.dirname(storeDir), 'watch.pid');
  term.type(`clear; bash -c 'echo $$ > ${pidFile}; exec node ${CLI} --dir ${storeDir} watch'; echo "watch-exit=$?"`);
  await term.shows('the screen again', /Running and paused/);
  process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
  await term.shows('the shell after SIGTERM', /^watch-exit=0$/m);
  assert.doesNotMatch(term.screen(), /Running and paused/);
  assert.equal(term.modes(), '0 1');
}

test('watch refuses when stdout is not a terminal (exit 3), naming what to use instead', async (t) => {
  const { store: storeDir } = await store(t);
  const out = await cli(storeDir, ['watch'], { timeoutMs: 10_000 });
  assert.equal(out.code, 3);
  assert.equal(out.stdout, '');
  assert.match(
    out.stderr,
    /^agent-session: watch draws on a terminal and stdout is not one; .*stats --json.*audit --follow/,
  );
});

test('an error gives the terminal back (alternate screen, cursor, keys), then is thrown', async (t) => {
  const { dir, store: storeDir } = await store(t);
  const sessions = Sessions.open({ dir: storeDir, cwd: dir, env: {} });
  sessions.store.scanEach = () => {
    throw Object.assign(new Error('the disk is on fire'), { code: 'EIO' });
  };
  const written = [];
  let keys = 'never taken';
  const terminal = {
    size: () => ({ columns: 80, rows: 24 }),
    write: (text) => written.push(text),
    keys: () => ((keys = 'raw'), () => (keys = 'released')),
    onResize: () => () => undefined,
  };
  const palette = colourFor({ isTTY: true }, {});
  await assert.rejects(watchSessions(sessions, terminal, { palette, store: storeDir }), /the disk is on fire/);
  assert.match(written[0], /^\u001b\[\?1049h\u001b\[\?25l/, 'entered the alternate screen, cursor hidden');
  assert.equal(written.at(-1), '\u001b[?25h\u001b[?1049l', 'cursor shown, alternate screen left, last');
  assert.equal(keys, 'released');
});

test('a change reads again only the sessions its entries name; a bulk change, the whole store', async (t) => {
  const { dir, store: storeDir } = await store(t);
  const sessions = Sessions.open({ dir: storeDir, cwd: dir, env: {} });
  const model = new WatchModel(sessions);
  model.loadAll();
  const read = [];
  const readRecord = sessions.store.read.bind(sessions.store);
  sessions.store.read = (id) => (read.push(id), readRecord(id));
  sessions.store.scanEach = () => assert.fail('a full scan for a change that names one session');
  await sessions.finalize('docs', 'completed');
  read.length = 0;
  const entries = (await lib.readAudit(sessions, {})).entries.slice(-1);
  const changed = WatchModel.changedBy(entries);
  assert.deepEqual([changed.all, [...changed.ids]], [false, ['docs']]);
  await model.refresh(changed.ids);
  assert.deepEqual(read, ['docs']);
  const after = model.snapshot(Date.now());
  assert.deepEqual(after.counts, { running: 1, approval: 1, paused: 0, finishedToday: 2 });
  assert.equal(after.finished[0].id, 'docs');
  const many = { ids: Array.from({ length: 501 }, (_, i) => `s${i}`) };
  assert.equal(WatchModel.changedBy([many]).all, true);
  assert.equal(WatchModel.changedBy([{ ids: ['a'], part: [1, 2] }]).all, true);
});

test('the layout fits any width and height, keeps finished sessions in view and counts what it leaves out', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  const open = Array.from({ length: 30 }, (_, i) => ({
    id: `s${i}`,
    agent: i % 2 ? 'reviewer-with-a-very-long-agent-type-name' : '探索者',
    purpose: `Purpose ${i} `.repeat(20),
    phase: i === 3 ? 'approval' : 'executing',
    depth: i % 3,
    startedMs: now - 90_000,
    paused: i === 3 ? { sinceMs: now - 5000, waitsFor: 'approval', note: 'expired', question: 'Go?' } : null,
  }));
  const finished = Array.from({ length: 8 }, (_, i) => ({
    id: `f${i}`,
    agent: 'tester',
    purpose: 'Run',
    outcome: i % 2 ? 'failed' : 'completed',
    finishedMs: now - 3_600_000,
  }));
  const snapshot = { open, finished, counts: { running: 29, approval: 1, paused: 0, finishedToday: 8 } };
  for (const [width, height] of [
    [40, 12],
    [80, 24],
    [200, 30],
  ]) {
    const palette = colourFor({ isTTY: true }, {});
    const lines = layoutWatch({ snapshot, now, width, height, palette, approvalOnly: false, store: '/a/store' });
    assert.ok(lines.length <= height, `${lines.length} lines in ${height}`);
    for (const line of lines) assert.ok(displayWidth(line) <= width, `${JSON.stringify(line)} is wider than ${width}`);
    const text = lines.join('\n').replace(new RegExp(SGR.source, 'g'), '');
    assert.match(text, /^ {2}… \d+ more$/m);
    assert.match(text, /^Finished\n[✓✗] /m);
  }
  const plain = colourFor({ isTTY: true }, { NO_COLOR: '1' });
  const only = layoutWatch({ snapshot, now, width: 80, height: 24, palette: plain, approvalOnly: true, store: '/s' });
  // Only what waits for approval; the purpose and the wait share the room left, half each.
  assert.deepEqual(only.slice(3), [
    'Waiting for approval',
    'reviewer-with-a-very-long-a…  approval         1m  Purpose 3 Pur… · waits 5s fo…',
  ]);
});

test('the tree: ├ before a child with a later sibling, └ before the last', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  const row = (id, depth) => ({
    id,
    agent: id,
    purpose: null,
    phase: 'executing',
    depth,
    startedMs: now,
    paused: null,
  });
  const open = [row('root', 0), row('kid-a', 1), row('grandkid', 2), row('kid-b', 1), row('other', 0)];
  const snapshot = { open, finished: [], counts: { running: 5, approval: 0, paused: 0, finishedToday: 0 } };
  const palette = colourFor({ isTTY: false }, {});
  const lines = layoutWatch({ snapshot, now, width: 80, height: 24, palette, approvalOnly: false, store: '/s' });
  assert.deepEqual(
    lines.slice(4, 9).map((l) => l.replace(/ +executing.*$/, '')),
    ['root', '├ kid-a', '  └ grandkid', '└ kid-b', 'other'],
  );
});
