// A cleanup killed with SIGKILL at several points: every subtree it moved to the trash is in the
// audit trail, and running it again finishes the job.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { audited, oldTrees, trashedCount, trashEntriesWithManifest, unauditedTrash } from './helpers/interrupted.mjs';
import { killWhen } from './helpers/kill.mjs';
import { cli, tempDir } from './helpers/run.mjs';
import { liveIds } from './helpers/trees.mjs';

test(
  'purges and deletes that took effect with no audit entry: ' +
    'a cleanup killed mid-way has an audit entry for every subtree it moved',
  { timeout: 240_000 },
  async (t) => {
    const base = tempDir(t);
    for (const after of [1, 3, 10, 40]) {
      const dir = path.join(base, `kill-${after}`);
      // Enough trees for the last kill (after 40 purges, 120 sessions) to land mid-run: the purges go into
      // one trash entry, in batches, so the kill lands in the first batch or in a later one.
      const ids = await oldTrees(dir, 80);
      const run = await killWhen(
        ['--dir', dir, 'cleanup', '--hours', '1', '--json'],
        () => trashedCount(dir) > after * 3,
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
      // Already true right after the kill: each batch was audited before the entry counted it as committed.
      assert.deepEqual(unauditedTrash(dir, 'cleanup'), [], `kill after ${after}: trashed but not audited`);

      // What a batch committed before the kill stays where it is; the rest of the entry is rolled back.
      const kept = trashEntriesWithManifest(dir).flatMap((e) => {
        const n = (e.manifest.subtrees ?? []).slice(0, e.manifest.committed ?? 0).reduce((m, x) => m + x.sessions, 0);
        return e.manifest.status === 'moving' ? e.manifest.sessions.slice(0, n).map((s) => `${e.entry}/${s.id}`) : [];
      });
      const rerun = await cli(dir, ['cleanup', '--hours', '1', '--json']);
      assert.equal(rerun.code, 0, rerun.stderr);
      const held = new Set(trashEntriesWithManifest(dir).flatMap((e) => e.held.map((id) => `${e.entry}/${id}`)));
      assert.deepEqual(
        kept.filter((k) => !held.has(k)),
        [],
        `kill after ${after}: committed subtrees moved again`,
      );
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
