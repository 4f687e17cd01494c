// A delete killed with SIGKILL at several points: afterwards it is audited as deleted, or rolled back
// with a recover line.
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { audited, trashCount, trashEntriesWithManifest, unauditedTrash } from './helpers/interrupted.mjs';
import { killWhen } from './helpers/kill.mjs';
import { until } from './helpers/poll.mjs';
import { cli, tempDir } from './helpers/run.mjs';
import { build, liveIds, treeSpec } from './helpers/trees.mjs';

test(
  'purges and deletes that took effect with no audit entry: ' +
    'a delete killed at any point is audited as deleted, or rolled back with a recover line',
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
