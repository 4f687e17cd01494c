// An import killed with SIGKILL at several points: it is finished or rolled back, the rerun says what
// happened, and the audit trail accounts for it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { audited } from './helpers/interrupted.mjs';
import { killWhen } from './helpers/kill.mjs';
import { cli, tempDir } from './helpers/run.mjs';
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
