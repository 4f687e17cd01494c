// Commands stopped with SIGINT/SIGTERM (Ctrl-C): they stop at a safe point, release their locks and say
// so, whether working, drawing a progress bar or waiting for a lock.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { faults } from './helpers/faults.mjs';
import {
  audited,
  locksLeft,
  oldTrees,
  trashedCount,
  trashEntriesWithManifest,
  unauditedTrash,
} from './helpers/interrupted.mjs';
import { killWhen } from './helpers/kill.mjs';
import { cli, DIST, tempDir } from './helpers/run.mjs';
import { build, liveIds, treeSpec } from './helpers/trees.mjs';

test(
  'Ctrl-C behaves like SIGKILL: SIGINT and SIGTERM stop a bulk command at a safe point, ' +
    'release its locks, say so and exit 130',
  { timeout: 240_000 },
  async (t) => {
    const base = tempDir(t);
    for (const signal of ['SIGINT', 'SIGTERM']) {
      const dir = path.join(base, signal);
      const ids = await oldTrees(dir, 80);
      const run = await killWhen(
        ['--dir', dir, 'cleanup', '--hours', '1', '--json'],
        () => trashedCount(dir) >= 9,
        signal,
      );
      assert.ok(run.sent, `${signal}: the cleanup ended before the signal`);
      assert.equal(run.signal, null, `${signal}: killed by the signal instead of stopping`);
      assert.equal(run.code, 130, run.stderr);
      const [, done, total] =
        /^agent-session: interrupted after (\d+) of (\d+); run it again to finish\n$/.exec(run.stderr) ?? [];
      assert.ok(done !== undefined, run.stderr);
      // At least the purges the signal waited for (3 trees in the trash), never more than there was to do.
      assert.ok(Number(done) >= 3 && Number(done) < Number(total), `${signal}: ${run.stderr}`);
      assert.equal(run.stdout, '');
      assert.deepEqual(locksLeft(dir), [], `${signal}: locks left behind`);
      assert.deepEqual(
        trashEntriesWithManifest(dir)
          .filter((e) => e.manifest.status !== 'complete')
          .map((e) => e.entry),
        [],
        `${signal}: an entry left moving`,
      );
      const live = liveIds(dir);
      assert.ok(live.length > 0 && live.length < ids.length, `${signal}: not stopped mid-run (${live.length} live)`);
      assert.deepEqual(unauditedTrash(dir, 'cleanup'), []);

      const rerun = await cli(dir, ['cleanup', '--hours', '1', '--json']);
      assert.equal(rerun.code, 0, rerun.stderr);
      assert.deepEqual(liveIds(dir), []);
      assert.equal(new Set(trashEntriesWithManifest(dir).flatMap((e) => e.held)).size, ids.length);
    }
  },
);

test(
  'Ctrl-C behaves like SIGKILL: on a terminal the progress line is cleared before the message, not cut mid-bar',
  { timeout: 120_000 },
  async (t) => {
    // Enough sessions for the progress bar (500 scanned); it counts the trees to purge.
    const dir = path.join(tempDir(t), 'store');
    const trees = (await oldTrees(dir, 170)).filter((id) => !id.includes('-')).length;
    const { runCli } = await import(pathToFileURL(path.join(DIST, 'tools', 'cli', 'run.js')).href);
    const listeners = [];
    let stderr = '';
    const io = {
      stdout: () => undefined,
      stderr: (text) => {
        stderr += text;
        // The first bar drawn: the user presses Ctrl-C.
        if (text.startsWith('\rcleanup [') && listeners.length > 0)
          for (const l of listeners.filter((x) => x.name === 'SIGINT')) l.listener();
      },
      env: {},
      cwd: path.dirname(dir),
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
    const code = await runCli(['--dir', dir, 'cleanup', '--hours', '1'], io);
    assert.equal(code, 130, stderr);
    assert.match(
      stderr,
      new RegExp(
        `^\\rcleanup \\[#*\\.*\\] \\d+/${trees}\\r\\u001b\\[2K` +
          `agent-session: interrupted after \\d+ of ${trees}; run it again to finish\\n$`,
      ),
    );
    assert.deepEqual(listeners, [], 'the handlers stay installed after the command');
    assert.ok(liveIds(dir).length > 0);
  },
);

test(
  'Ctrl-C behaves like SIGKILL: not while a command waits for a lock another process holds either',
  { timeout: 120_000 },
  async (t) => {
    const dir = path.join(tempDir(t), 'store');
    await build(dir, treeSpec('r', 3, 2, { outcome: 'completed', hoursAgo: 48 }));
    const ids = liveIds(dir);
    // One delete holds the locks of the subtree; the other comes to wait for them.
    const holder = faults(t, ['pause:trash-move-in:1']);
    const holding = cli(dir, ['delete', 'r'], { env: holder.env });
    await holder.reached('trash-move-in', holding);
    for (const [signal, target] of [
      ['SIGINT', 'r'],
      ['SIGTERM', 'r-1'],
    ]) {
      const waiter = faults(t, ['pause:session-locks:1'], { AGENT_SESSION_LOCK_TIMEOUT_MS: '60000' });
      const waiting = cli(dir, ['delete', target], { env: waiter.env });
      await waiter.reached('session-locks', waiting);
      waiter.kill('session-locks', signal);
      waiter.release('session-locks');
      const result = await waiting;
      assert.equal(result.code, 130, `delete ${target}: ${result.stderr}`);
      assert.match(
        result.stderr,
        /^agent-session: interrupted while waiting for session \S+, before anything changed; run it again to finish\n$/,
      );
    }
    holder.release('trash-move-in');
    assert.equal((await holding).code, 0);
    assert.deepEqual(liveIds(dir), []);
    assert.deepEqual(locksLeft(dir), []);
    assert.equal(trashEntriesWithManifest(dir)[0].held.length, ids.length);
  },
);

test(
  'Ctrl-C behaves like SIGKILL: a delete and a restore of a large subtree stop before anything moves, ' +
    'or finish the subtree once it moves',
  { timeout: 180_000 },
  async (t) => {
    const dir = path.join(tempDir(t), 'store');
    // 259 sessions: one subtree, one trash entry.
    await build(dir, treeSpec('big', 4, 6, { outcome: 'completed', hoursAgo: 48 }));
    const ids = liveIds(dir);
    const stop = async (args, point, signal) => {
      const f = faults(t, [`pause:${point}`]);
      const running = cli(dir, args, { env: f.env });
      await f.reached(point.split(':')[0], running);
      f.kill(point.split(':')[0], signal);
      f.release(point.split(':')[0]);
      return running;
    };
    const auditedIds = (action) => audited(dir, action);

    // Stopped with every lock taken, before the first move: nothing changed, no lock left.
    for (const [args, signal] of [
      [['delete', 'big'], 'SIGINT'],
      [['delete', 'big'], 'SIGTERM'],
    ]) {
      const run = await stop(args, 'session-locks:1', signal);
      assert.equal(run.code, 130, run.stderr);
      assert.match(
        run.stderr,
        new RegExp(`^agent-session: interrupted after 0 of ${ids.length}; run it again to finish\\n$`),
      );
      assert.deepEqual(liveIds(dir), ids);
      assert.deepEqual(trashEntriesWithManifest(dir), []);
      assert.deepEqual(locksLeft(dir), []);
    }
    // Once the subtree moves it moves whole: the delete finishes, audited, and exits as usual.
    const deleting = await stop(['delete', 'big', '--json'], 'trash-move-in:5', 'SIGINT');
    assert.equal(deleting.code, 0, deleting.stderr);
    assert.deepEqual(liveIds(dir), []);
    assert.deepEqual(locksLeft(dir), []);
    assert.deepEqual(unauditedTrash(dir, 'delete'), []);
    assert.equal(trashEntriesWithManifest(dir)[0].held.length, ids.length);

    // The restore alike: before it moves, nothing comes back; once it moves, everything does.
    const early = await stop(['restore', 'big'], 'session-locks:1', 'SIGINT');
    assert.equal(early.code, 130, early.stderr);
    assert.match(
      early.stderr,
      new RegExp(`^agent-session: interrupted after 0 of ${ids.length}; run it again to finish\\n$`),
    );
    assert.deepEqual(liveIds(dir), []);
    assert.equal(trashEntriesWithManifest(dir)[0].manifest.status, 'complete');
    assert.deepEqual(locksLeft(dir), []);
    const restoring = await stop(['restore', 'big', '--json'], 'trash-move-out:5', 'SIGINT');
    assert.equal(restoring.code, 0, restoring.stderr);
    assert.deepEqual(liveIds(dir), ids);
    assert.deepEqual(trashEntriesWithManifest(dir), []);
    assert.deepEqual(locksLeft(dir), []);
    assert.deepEqual(
      ids.filter((id) => !auditedIds('restore').has(id)),
      [],
    );
  },
);

/**
 * An `export --all -o` of 240 sessions whose fifth record's read hangs for a second (a slow disk: no
 * handler runs meanwhile; the other records take far less), sent `signals` during the hang.
 */
async function exportStalled(t, signals) {
  const base = tempDir(t);
  const dir = path.join(base, 'store');
  const ids = await oldTrees(dir, 80);
  const f = faults(t, ['stall:export-record:5:1000']);
  const running = cli(dir, ['export', '--all', '-o', path.join(base, 'bundle.json')], { env: f.env });
  await f.reached('export-record', running);
  for (const signal of signals) f.kill('export-record', signal);
  const run = await running;
  assert.equal(run.code, 130, run.stderr);
  assert.deepEqual(readdirSync(base).sort(), ['store'], 'no bundle and no temp file are left');
  assert.deepEqual(locksLeft(dir), []);
  return { run, ids };
}

test(
  'Ctrl-C during export --all is seen between two records, not only once the last is written',
  { timeout: 120_000 },
  async (t) => {
    const { run, ids } = await exportStalled(t, ['SIGINT']);
    const [, done, total] =
      /^agent-session: interrupted after (\d+) of (\d+); run it again to finish\n$/.exec(run.stderr) ?? [];
    assert.equal(Number(total), ids.length, run.stderr);
    assert.ok(Number(done) < 10, `stopped after ${done} records, not at the next one: ${run.stderr}`);
  },
);

test(
  'a second signal during export -o exits at once and takes the temp file with it',
  { timeout: 120_000 },
  async (t) => {
    const { run } = await exportStalled(t, ['SIGINT', 'SIGTERM']);
    assert.match(run.stderr, /interrupted again: stopped at once/);
  },
);
