// An import killed with SIGKILL at several points: it is finished or rolled back, the rerun says what
// happened, and the audit trail accounts for it. Export and import stopped with Ctrl-C.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { faults } from './helpers/faults.mjs';
import { audited, locksLeft, oldTrees } from './helpers/interrupted.mjs';
import { killWhen } from './helpers/kill.mjs';
import { cli, DIST, tempDir } from './helpers/run.mjs';
import { build, liveIds, treeSpec } from './helpers/trees.mjs';

test(
  'purges and deletes that took effect with no audit entry: an import killed at any point ' +
    'is finished or rolled back, the rerun says what happened, and the trail accounts for it',
  { timeout: 240_000 },
  async (t) => {
    const base = tempDir(t);
    const from = path.join(base, 'from');
    const spec = treeSpec('imp', 3, 10);
    await build(from, spec);
    const ids = spec.map((s) => s.id);
    const file = path.join(base, 'bundle.json');
    assert.equal((await cli(from, ['export', 'imp', '-o', file])).code, 0);
    const importState = (dir) => {
      const root = path.join(dir, '.importing');
      const [op] = existsSync(root) ? readdirSync(root) : [];
      if (!op) return undefined;
      try {
        return JSON.parse(readFileSync(path.join(root, op, 'manifest.json'), 'utf8')).status;
      } catch {
        return 'starting';
      }
    };
    const points = [
      ['staging', (s) => s === 'staged'],
      ['committing', (s) => s === 'committing'],
      ['done', (s) => s === 'done'],
      ['done, again', (s) => s === 'done'],
      ['done, once more', (s) => s === 'done'],
    ];
    let landed = 0;
    for (const [name, when] of points) {
      const dir = path.join(base, name.replace(/[^a-z0-9]+/g, '-'));
      const run = await killWhen(['--dir', dir, 'import', file, '--json'], () => when(importState(dir)), 'SIGKILL');
      if (run.signal !== 'SIGKILL') {
        assert.equal(run.code, 0, run.stderr);
        continue;
      }
      landed++;
      const rerun = await cli(dir, ['import', file, '--json']);
      if (rerun.code !== 0) {
        assert.equal(rerun.code, 3, rerun.stderr);
        assert.match(rerun.stderr, /already imported/, `${name}: a rerun of a finished import must say so`);
      }
      assert.deepEqual(liveIds(dir), [...ids].sort(), `${name}: the bundle is not all in the store`);
      const named = audited(dir, 'import');
      assert.deepEqual(
        ids.filter((id) => !named.has(id)),
        [],
        `${name}: imported but not audited`,
      );
    }
    assert.ok(landed >= 3, `only ${landed} kills landed during the import`);
  },
);

/** A fake terminal for runCli: Ctrl-C is pressed once the first progress bar labelled `label` is drawn. */
function terminal(cwd, label) {
  const listeners = [];
  const io = {
    stderr: '',
    stdout: () => undefined,
    env: {},
    cwd,
    stderrIsTTY: true,
    signals: {
      on: (name, listener) => listeners.push({ name, listener }),
      off: (name, listener) =>
        listeners.splice(
          listeners.findIndex((l) => l.name === name && l.listener === listener),
          1,
        ),
      exit: () => assert.fail('one signal must not exit at once'),
    },
  };
  io.stderr = (text) => {
    io.text = (io.text ?? '') + text;
    if (text.startsWith(`\r${label} [`)) for (const l of listeners.filter((x) => x.name === 'SIGINT')) l.listener();
  };
  return { io, listeners, stderr: () => io.text ?? '' };
}

/** `interrupted after N of M` on stderr, after the bar it clears: [N, M]. */
function interruptedAfter(stderr, label) {
  const match = new RegExp(
    `^\\r${label} \\[#*\\.*\\] \\d+/\\d+\\r\\u001b\\[2K` +
      'agent-session: interrupted after (\\d+) of (\\d+); run it again to finish\\n$',
  ).exec(stderr);
  assert.ok(match, stderr);
  return [Number(match[1]), Number(match[2])];
}

test(
  'Ctrl-C during an export or an import: the bar is cleared, nothing half-written is left, ' +
    'no lock is held, exit 130; the rerun finishes',
  { timeout: 240_000 },
  async (t) => {
    const base = tempDir(t);
    const from = path.join(base, 'from');
    const ids = await oldTrees(from, 170);
    const { runCli } = await import(pathToFileURL(path.join(DIST, 'tools', 'cli', 'run.js')).href);

    // Export: stopped between two records; no bundle, no temp file beside it.
    const out = path.join(base, 'out');
    mkdirSync(out);
    const exporting = terminal(base, 'export');
    const code = await runCli(['--dir', from, 'export', '--all', '-o', path.join(out, 'bundle.json')], exporting.io);
    assert.equal(code, 130, exporting.stderr());
    const [done, total] = interruptedAfter(exporting.stderr(), 'export');
    assert.ok(done < total && total === ids.length, exporting.stderr());
    assert.deepEqual(readdirSync(out), [], 'an interrupted export leaves no file');
    assert.deepEqual(exporting.listeners, []);
    assert.deepEqual(locksLeft(from), []);

    // Import: stopped while staging, so none of it took effect (all or nothing) and nothing is audited.
    const file = path.join(base, 'bundle.json');
    assert.equal((await cli(from, ['export', '--all', '-o', file])).code, 0);
    const to = path.join(base, 'to');
    const importing = terminal(base, 'import');
    assert.equal(await runCli(['--dir', to, 'import', file], importing.io), 130, importing.stderr());
    const [imported, of] = interruptedAfter(importing.stderr(), 'import');
    assert.deepEqual([imported, of], [0, ids.length]);
    assert.deepEqual(liveIds(to), []);
    assert.deepEqual(readdirSync(path.join(to, '.importing')), [], 'its staging is dropped');
    assert.deepEqual(locksLeft(to), []);
    assert.deepEqual([...audited(to, 'import')], []);
    assert.deepEqual(importing.listeners, []);

    const rerun = await cli(to, ['import', file, '--json']);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual(liveIds(to), [...ids].sort());
    assert.deepEqual(
      ids.filter((id) => !audited(to, 'import').has(id)),
      [],
    );
  },
);

test('an interrupted import whose manifest cannot be read stays as it is, with the sessions it replaced', async (t) => {
  const store = path.join(tempDir(t), 'store');
  // 70 roots: the commit takes two lock batches of 64, and the kill lands in the second.
  const spec = Array.from({ length: 70 }, (_, i) => ({ id: `r${String(i).padStart(2, '0')}` }));
  await build(store, spec);
  const file = path.join(store, '..', 'bundle.json');
  assert.equal((await cli(store, ['export', '--all', '-o', file])).code, 0);
  const f = faults(t, ['pause:session-locks:2']);
  const importing = cli(store, ['import', file, '--overwrite'], { env: f.env });
  await f.reached('session-locks', importing);
  f.kill('session-locks');
  await importing;
  const [op] = readdirSync(path.join(store, '.importing'));
  const opDir = path.join(store, '.importing', op);
  const replaced = readdirSync(path.join(opDir, 'replaced'));
  assert.equal(replaced.length, 64, 'the first batch set its originals aside');
  // A manifest that cannot be read (cut, damaged, or over the size limit): what it says is unknown.
  writeFileSync(path.join(opDir, 'manifest.json'), '{"op": "cut');

  const repair = await cli(store, ['doctor', '--repair', '--json']);
  const finding = JSON.parse(repair.stdout).findings.find((x) => x.check === 'import');
  assert.match(finding.message, /^an interrupted import left as it is: the import manifest .* cannot be read/);
  const again = await cli(store, ['import', file, '--overwrite']);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(readdirSync(path.join(opDir, 'replaced')), replaced, 'never discarded blind');
  assert.deepEqual(liveIds(store).sort(), spec.map((s) => s.id).sort());
});

test('an import whose commit cannot begin (a full disk at its manifest) leaves no staging behind', async (t) => {
  const base = tempDir(t);
  const from = path.join(base, 'from');
  await build(from, treeSpec('imp', 2, 3));
  const file = path.join(base, 'bundle.json');
  assert.equal((await cli(from, ['export', 'imp', '-o', file])).code, 0);
  const store = path.join(base, 'to');
  await build(store, [{ id: 'other' }]);
  const f = faults(t, ['fail:import-committing:1:ENOSPC']);
  const failed = await cli(store, ['import', file], { env: f.env });
  assert.equal(failed.code, 4);
  assert.match(failed.stderr, /ENOSPC/);
  assert.deepEqual(readdirSync(path.join(store, '.importing')), [], 'the staged records went with the failure');
  assert.deepEqual(liveIds(store), ['other']);
  assert.equal((await cli(store, ['doctor'])).code, 0);
});
