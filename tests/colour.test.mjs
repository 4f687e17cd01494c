// Colour and layout of the text output (SESSION_README.md, "Colour and the terminal"): on a terminal (`script`
// gives the CLI one) phases and outcomes are coloured, lines fit the width and `list` shows the newest 50; piped,
// or with NO_COLOR, no colour; the palette, the width and the cut to width in-process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { cleanEnv, cli, CLI, DIST, loadLibrary } from './helpers/run.mjs';

const { Sessions } = await loadLibrary();
const colour = await import(pathToFileURL(path.join(DIST, 'tools', 'cli', 'colour.js')).href);

const SGR = /\u001b\[[0-9;]*m/;
const SGR_ALL = new RegExp(SGR.source, 'g');
const COUNT = 55;
const LONG = 'a purpose long enough to be cut on any terminal narrower than two hundred columns, '.repeat(3);

/** One store for every test here (they only read it): 55 sessions, the newest in approval, one failed. */
const storeDir = await store();

async function store() {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-session-colour-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const storeDir = path.join(dir, 'store');
  const sessions = Sessions.open({ dir: storeDir, cwd: dir, env: {} });
  for (let i = 0; i < COUNT; i++) {
    const id = `s-${String(i).padStart(3, '0')}`;
    await sessions.create({ agentName: i % 2 ? 'reviewer' : 'explorer', id, purpose: `${id} ${LONG}` });
  }
  await sessions.update('s-054', { phase: 'approval' });
  await sessions.finalize('s-053', 'failed');
  return storeDir;
}

/** Runs a shell script under `script`, whose pseudo-terminal the CLI sees as its stdout; resolves what it printed. */
function underTerminal(script, env) {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', script, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out: out.replaceAll('\r\n', '\n') }));
  });
}

test('on a terminal: coloured, fitted to the width, list cut to the newest 50; NO_COLOR and --limit 0', async () => {
  const run = `node ${CLI} --dir ${storeDir}`;
  const env = cleanEnv({ HOME: path.dirname(storeDir), TERM: 'xterm-256color' });
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  const { code, out } = await underTerminal(
    [
      'stty cols 100 rows 40',
      `${run} list`,
      'echo "::"',
      `${run} tree`,
      'echo "::"',
      `${run} show s-053`,
      'echo "::"',
      `${run} audit`,
      'echo "::"',
      `NO_COLOR=1 ${run} list`,
      'echo "::"',
      `${run} list --limit 0`,
      'echo "::"',
      `${run} stats --by outcome`,
    ].join('; '),
    env,
  );
  assert.equal(code, 0, out);
  const [list, tree, show, audit, noColour, all, stats] = out.split('::\n').map((part) => part.trimEnd().split('\n'));
  const fits = (lines, name) => {
    for (const line of lines)
      assert.ok(colour.displayWidth(line) <= 100, `${name}: ${JSON.stringify(line)} is too wide`);
  };

  assert.equal(list.length, 1 + 50 + 1, 'the header, the newest 50, and the count of the rest');
  assert.match(list[1], /^s-053 /, 'newest first');
  assert.match(list[1], /\u001b\[[0-9;]*mfailed\u001b\[0m/, 'the phase coloured');
  assert.match(list[2], /\u001b\[[0-9;]*mapproval\u001b\[0m/);
  assert.match(list[1], /…$/, 'the purpose cut to the width');
  assert.equal(list.at(-1).replace(SGR_ALL, ''), `… ${COUNT - 50} more (--limit 0 for all)`);
  fits(list, 'list');

  assert.match(tree[0].replace(SGR_ALL, ''), /^SESSION +AGENT +PHASE +UPDATED +PURPOSE$/);
  assert.equal(tree.length, 1 + COUNT);
  assert.ok(tree.some((line) => /\u001b\[[0-9;]*mapproval\u001b\[0m/.test(line)));
  fits(tree, 'tree');

  assert.match(show.join('\n'), /^ {2}phase: {8}\u001b\[[0-9;]*mfailed\u001b\[0m$/m);
  assert.match(show.join('\n'), / as \u001b\[[0-9;]*mfailed\u001b\[0m, after /);

  assert.ok(audit.length >= COUNT + 2);
  assert.ok(audit.every((line) => SGR.test(line)));
  assert.ok(audit.some((line) => line.replace(SGR_ALL, '').endsWith('…')));
  fits(audit, 'audit');

  assert.doesNotMatch(noColour.join('\n'), SGR, 'NO_COLOR: no colour');
  assert.equal(noColour.length, 1 + 50 + 1, 'NO_COLOR: still the newest 50 on a terminal');
  fits(noColour, 'list with NO_COLOR');

  assert.equal(all.length, 1 + COUNT, '--limit 0: every session, no count line');
  assert.doesNotMatch(all.at(-1), /more/);

  // stats: bold titles, the outcome keys and the state columns' figures coloured, the columns still aligned.
  assert.match(stats[0], /^\u001b\[1mSessions started from /);
  const failedRow = stats.find((line) => line.replace(SGR_ALL, '').startsWith('failed '));
  assert.match(failedRow, /^\u001b\[[0-9;]*mfailed\u001b\[0m +1 /);
  const header = stats[2].replace(SGR_ALL, '');
  const total = stats.find((line) => line.startsWith('TOTAL')).replace(SGR_ALL, '');
  assert.equal(total.indexOf(' 55 ') + 1, header.indexOf('STARTED'), 'aligned under its header');
});

test('piped: no colour, every session, purposes whole, as before', async () => {
  // FORCE_COLOR=1, as CI services and `node --test` on a terminal set it: still no colour in a pipe.
  const out = await cli(storeDir, ['list'], { env: { FORCE_COLOR: '1' } });
  assert.equal(out.code, 0, out.stderr);
  const lines = out.stdout.trimEnd().split('\n');
  assert.doesNotMatch(out.stdout, SGR);
  assert.equal(lines.length, 1 + COUNT);
  assert.ok(lines[1].endsWith(LONG.trimEnd()));
});

test('the palette: a terminal colours unless NO_COLOR (any non-empty value); FORCE_COLOR only turns it off', () => {
  const tty = { isTTY: true, columns: 90 };
  const pipe = { isTTY: false };
  const on = (stream, env) => colour.colourFor(stream, env).phase('failed', 'x') !== 'x';
  assert.equal(on(tty, {}), true);
  assert.equal(on(pipe, {}), false);
  assert.equal(on(tty, { NO_COLOR: '1' }), false);
  assert.equal(on(tty, { NO_COLOR: 'no' }), false);
  assert.equal(on(tty, { NO_COLOR: '' }), true, 'an empty NO_COLOR is not set (no-color.org)');
  assert.equal(on(pipe, { FORCE_COLOR: '1' }), false, 'never when piped (CI and node --test set FORCE_COLOR=1)');
  assert.equal(on(tty, { FORCE_COLOR: '1' }), true);
  assert.equal(on(tty, { FORCE_COLOR: '0' }), false);
  assert.equal(on(tty, { FORCE_COLOR: 'false' }), false);
  assert.equal(on(tty, { FORCE_COLOR: '1', NO_COLOR: '1' }), false, 'NO_COLOR wins');
  assert.equal(on(tty, { TERM: 'dumb' }), false);
  const p = colour.colourFor(tty, {});
  assert.equal(p.outcome('completed', 'done'), '\u001b[32mdone\u001b[0m');
  assert.equal(colour.colourFor(pipe, {}).bold('b'), 'b');

  assert.equal(colour.terminalWidth(tty), 90);
  assert.equal(colour.terminalWidth(pipe), Infinity);
  assert.equal(colour.terminalWidth({ isTTY: true }), Infinity);
});

test('cut to width counts columns: wide CJK and emoji as two, combining marks as none, colour codes as none', () => {
  const { cutToWidth, displayWidth } = colour;
  assert.equal(cutToWidth('short', 10), 'short');
  assert.equal(cutToWidth('exactly10!', 10), 'exactly10!');
  assert.equal(cutToWidth('eleven chars', 10), 'eleven ch…');
  assert.equal(cutToWidth('anything', 0), '');
  assert.equal(cutToWidth('anything', Infinity), 'anything');
  assert.equal(displayWidth('日本語'), 6);
  assert.equal(cutToWidth('日本語のテキスト', 7), '日本語…');
  assert.equal(displayWidth('🚀ok'), 4);
  assert.equal(displayWidth('café'), 4);
  assert.equal(displayWidth('cafe\u0301'), 4);
  assert.equal(cutToWidth('cafe\u0301 au lait', 6), 'cafe\u0301 …');
  assert.equal(displayWidth('\u001b[1;31mred\u001b[0m'), 3);
  assert.equal(displayWidth('→ ✓ … ·'), 7);
});

test('a table wider than the terminal is cut where the terminal ends, coloured cells included', async () => {
  const { styledTable } = await import(pathToFileURL(path.join(DIST, 'tools', 'cli', 'format.js')).href);
  const palette = colour.colourFor({ isTTY: true }, {});
  const rows = [['agent-20261126-041749-5c1f1ae2', 'general-purpose', 'executing', 'a purpose to cut']];
  const paint = (_row, col, text) => (col === 2 ? palette.phase('executing', text) : text);
  for (const width of [80, 60, 40, 12]) {
    const lines = styledTable(['ID', 'AGENT', 'PHASE', 'PURPOSE'], rows, { palette, width, paint });
    for (const line of lines) assert.ok(colour.displayWidth(line) <= width, `${width}: ${JSON.stringify(line)}`);
    assert.ok(lines[1].replace(SGR_ALL, '').startsWith(width < 30 ? 'agent-20' : 'agent-20261126-041749-5c1f1ae2'));
  }
  // Wide enough: nothing is cut, the columns line up.
  const whole = styledTable(['ID', 'PURPOSE'], [['a', 'b']], { palette, width: 80 });
  assert.deepEqual(
    whole.map((l) => l.replace(SGR_ALL, '')),
    ['ID  PURPOSE', 'a   b'],
  );
});
