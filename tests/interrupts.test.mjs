// Commands cut short: killed with SIGKILL at several points, or stopped with SIGINT/SIGTERM. What took
// effect is in the audit trail; an interrupt stops at a safe point, releases its locks and says so.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';
import { faults } from './helpers/faults.mjs';
import { killWhen } from './helpers/kill.mjs';
import { until } from './helpers/poll.mjs';
import { cli, DIST, tempDir } from './helpers/run.mjs';
import { build, liveIds, treeSpec } from './helpers/trees.mjs';

/** Every entry of the store's trail (`audit.jsonl` read directly), parsed. */
function auditEntries(dir) {
  const file = path.join(dir, 'audit.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Ids named by entries of `action`. */
function audited(dir, action) {
  return new Set(
    auditEntries(dir)
      .filter((e) => e.action === action)
      .flatMap((e) => e.ids),
  );
}

/** The trash entries that have a manifest (a kill can land between creating an entry and writing it). */
function trashEntries(dir) {
  const trash = path.join(dir, '.trash');
  if (!existsSync(trash)) return [];
  return readdirSync(trash)
    .sort()
    .filter((entry) => existsSync(path.join(trash, entry, 'manifest.json')))
    .map((entry) => {
      const manifest = JSON.parse(readFileSync(path.join(trash, entry, 'manifest.json'), 'utf8'));
      const sessions = path.join(trash, entry, 'sessions');
      return { entry, manifest, held: existsSync(sessions) ? readdirSync(sessions).sort() : [] };
    });
}

function trashCount(dir) {
  const trash = path.join(dir, '.trash');
  return existsSync(trash) ? readdirSync(trash).length : 0;
}

/** Lock directories (and takeover guards) left in `<store>/.locks/`. */
function locksLeft(dir) {
  const locks = path.join(dir, '.locks');
  return existsSync(locks) ? readdirSync(locks).filter((n) => n.endsWith('.lock') || n.endsWith('.takeover')) : [];
}

const templates = mkdtempSync(path.join(tmpdir(), 'agent-session-interrupts-'));
after(() => rmSync(templates, { recursive: true, force: true }));
const oldTreesTemplates = new Map();

/**
 * A copy at `dir` of a store of `count` old finished trees of 3 sessions (a root and two children);
 * resolves their ids. Each size is built once for the whole file, from a copy of a smaller one if any.
 */
async function oldTrees(dir, count) {
  if (!oldTreesTemplates.has(count)) {
    const smaller = Math.max(0, ...[...oldTreesTemplates.keys()].filter((n) => n < count));
    const building = (async () => {
      const template = path.join(templates, `old-trees-${count}`);
      const spec = [];
      for (let i = 0; i < count; i++)
        spec.push(...treeSpec(`r${String(i).padStart(4, '0')}`, 2, 2, { outcome: 'completed', hoursAgo: 48 }));
      if (smaller > 0) cpSync((await oldTreesTemplates.get(smaller)).template, template, { recursive: true });
      await build(template, spec.slice(smaller * 3));
      return { template, ids: spec.map((s) => s.id) };
    })();
    oldTreesTemplates.set(count, building);
  }
  const { template, ids } = await oldTreesTemplates.get(count);
  cpSync(template, dir, { recursive: true });
  return ids;
}

/** Sessions held by complete trash entries that no audit line of `action` names. */
function unauditedTrash(dir, action) {
  const named = audited(dir, action);
  return trashEntries(dir)
    .filter((e) => e.manifest.status === 'complete')
    .flatMap((e) => e.held)
    .filter((id) => !named.has(id));
}

test(
  'purges and deletes that took effect with no audit entry: a cleanup killed mid-way has an audit entry for every subtree it moved',
  { timeout: 240_000 },
  async (t) => {
    const base = tempDir(t);
    for (const after of [1, 3, 10, 40]) {
      const dir = path.join(base, `kill-${after}`);
      // Enough trees for the last kill (after 40 purges) to land mid-run.
      const ids = await oldTrees(dir, 80);
      const run = await killWhen(
        ['--dir', dir, 'cleanup', '--hours', '1', '--json'],
        () => trashCount(dir) > after,
        'SIGKILL',
      );
      assert.equal(
        run.signal,
        'SIGKILL',
        `kill after ${after}: the cleanup ended by itself (${run.code}) ${run.stderr}`,
      );
      const live = liveIds(dir);
      assert.ok(
        live.length > 0 && live.length < ids.length,
        `kill after ${after}: not mid-run (${live.length} of ${ids.length} live)`,
      );
      // Already true right after the kill: each purge was audited before its entry was complete.
      assert.deepEqual(unauditedTrash(dir, 'cleanup'), [], `kill after ${after}: trashed but not audited`);

      const rerun = await cli(dir, ['cleanup', '--hours', '1', '--json']);
      assert.equal(rerun.code, 0, rerun.stderr);
      assert.deepEqual(liveIds(dir), [], `kill after ${after}: the rerun did not finish the job`);
      assert.deepEqual(
        unauditedTrash(dir, 'cleanup'),
        [],
        `kill after ${after}: trashed but not audited after the rerun`,
      );
      const everyTrashed = new Set(trashEntries(dir).flatMap((e) => e.held));
      assert.deepEqual([...everyTrashed].sort(), [...ids].sort());
    }
  },
);

test(
  'purges and deletes that took effect with no audit entry: a delete killed at any point is audited as deleted, or rolled back with a recover line',
  { timeout: 240_000 },
  async (t) => {
    const base = tempDir(t);
    const template = path.join(base, 'template');
    // 259 sessions: a delete long enough for a kill at each of its points.
    const spec = treeSpec('big', 4, 6, { outcome: 'completed', hoursAgo: 48 });
    await build(template, spec);
    const ids = spec.map((s) => s.id);
    const entryState = (dir) => {
      const [entry] = existsSync(path.join(dir, '.trash'))
        ? trashEntries(dir).filter((e) => existsSync(path.join(dir, '.trash', e.entry, 'manifest.json')))
        : [];
      return entry ? { status: entry.manifest.status, moved: entry.held.length } : undefined;
    };
    // Moving (a few sessions, half of them), and just after the entry is marked complete.
    const points = [
      ['moving, 1 moved', (s) => s?.status === 'moving' && s.moved >= 1],
      ['moving, half moved', (s) => s?.status === 'moving' && s.moved >= ids.length / 2],
      ['complete', (s) => s?.status === 'complete'],
      ['complete, again', (s) => s?.status === 'complete'],
    ];
    for (const [name, when] of points) {
      const dir = path.join(base, name.replace(/[^a-z0-9]+/g, '-'));
      cpSync(template, dir, { recursive: true });
      const ready = () => {
        try {
          return when(entryState(dir));
        } catch {
          return false; // a manifest being renamed into place
        }
      };
      const run = await killWhen(['--dir', dir, 'delete', 'big', '--json'], ready, 'SIGKILL');
      assert.equal(run.signal, 'SIGKILL', `${name}: the delete ended by itself (${run.code}) ${run.stderr}`);
      assert.ok(trashCount(dir) === 1, `${name}: the kill did not land during the delete`);

      // Doctor leaves an entry whose lock is still fresh (stale 2 s after the kill): repair until none is left.
      await until(
        async () => {
          if (!trashEntries(dir).some((e) => e.manifest.status !== 'complete')) return true;
          const repair = await cli(dir, ['doctor', '--repair', '--json']);
          assert.ok(repair.json, repair.stderr);
          return false;
        },
        `${name}: a repaired trash entry`,
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      assert.equal(
        (await cli(dir, ['doctor', '--json'])).code,
        0,
        `${name}: the store is not healthy after the repair`,
      );
      const live = liveIds(dir);
      if (live.length === 0) {
        assert.deepEqual(unauditedTrash(dir, 'delete'), [], `${name}: deleted but not audited`);
        assert.deepEqual([...audited(dir, 'delete')].sort(), [...ids].sort());
      } else {
        // Rolled back: whatever the trail says about a delete, a recover line follows for every session of it.
        assert.deepEqual(live, [...ids].sort(), `${name}: a partial rollback`);
        const recovered = audited(dir, 'recover');
        assert.deepEqual(
          [...audited(dir, 'delete')].filter((id) => !recovered.has(id)),
          [],
          `${name}: audited as deleted, but live`,
        );
      }
    }
  },
);

test(
  'purges and deletes that took effect with no audit entry: an import killed at any point is finished or rolled back, the rerun says what happened, and the trail accounts for it',
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

test(
  'Ctrl-C behaves like SIGKILL: SIGINT and SIGTERM stop a bulk command at a safe point, release its locks, say so and exit 130',
  { timeout: 240_000 },
  async (t) => {
    const base = tempDir(t);
    for (const signal of ['SIGINT', 'SIGTERM']) {
      const dir = path.join(base, signal);
      const ids = await oldTrees(dir, 80);
      const run = await killWhen(
        ['--dir', dir, 'cleanup', '--hours', '1', '--json'],
        () => trashCount(dir) >= 3,
        signal,
      );
      assert.ok(run.sent, `${signal}: the cleanup ended before the signal`);
      assert.equal(run.signal, null, `${signal}: killed by the signal instead of stopping`);
      assert.equal(run.code, 130, run.stderr);
      const [, done, total] =
        /^agent-session: interrupted after (\d+) of (\d+); run it again to finish\n$/.exec(run.stderr) ?? [];
      assert.ok(done !== undefined, run.stderr);
      // At least the purges the signal waited for (3 trash entries), never more than there was to do.
      assert.ok(Number(done) >= 3 && Number(done) < Number(total), `${signal}: ${run.stderr}`);
      assert.equal(run.stdout, '');
      assert.deepEqual(locksLeft(dir), [], `${signal}: locks left behind`);
      assert.deepEqual(
        trashEntries(dir)
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
      assert.equal(new Set(trashEntries(dir).flatMap((e) => e.held)).size, ids.length);
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
        if (text.startsWith('\r[') && listeners.length > 0)
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
        `^\\r\\[#*\\.*\\] \\d+/${trees}\\r\\u001b\\[2K` +
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
    assert.equal(trashEntries(dir)[0].held.length, ids.length);
  },
);
