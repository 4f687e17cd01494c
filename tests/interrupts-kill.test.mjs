// Commands killed with SIGKILL at several points (cleanup, delete, import): whatever took effect is in
// the audit trail, or rolled back with a recover line.
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { audited, oldTrees, trashCount, trashEntriesWithManifest, unauditedTrash } from './helpers/interrupted.mjs';
import { killWhen } from './helpers/kill.mjs';
import { until } from './helpers/poll.mjs';
import { cli, tempDir } from './helpers/run.mjs';
import { build, liveIds, treeSpec } from './helpers/trees.mjs';

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
      const everyTrashed = new Set(trashEntriesWithManifest(dir).flatMap((e) => e.held));
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
        ? trashEntriesWithManifest(dir).filter((e) => existsSync(path.join(dir, '.trash', e.entry, 'manifest.json')))
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
          if (!trashEntriesWithManifest(dir).some((e) => e.manifest.status !== 'complete')) return true;
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
