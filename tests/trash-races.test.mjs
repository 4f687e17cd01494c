// Deletes, restores and cleanups interrupted or raced at exact points (tools/store/fault-points.ts
// holds a process there): no acknowledged backup is destroyed, no session stays hidden, no tree is
// split, and running the command again (or doctor --repair) finishes what was cut short.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { faults } from './helpers/faults.mjs';
import { tempDir, cli } from './helpers/run.mjs';
import { auditedPlaces, build, liveIds, trashEntries, treeSpec } from './helpers/trees.mjs';

/** A store under `t`'s temp dir holding the given trees (recent and paused: cleanup keeps them). */
async function store(t, spec) {
  const dir = path.join(tempDir(t), 'store');
  await build(dir, spec);
  return dir;
}

const recent = (root, depth, fanout) => treeSpec(root, depth, fanout, { phase: 'planning' });

function children(dir, id) {
  const markers = path.join(dir, '.index', 'children', id);
  return existsSync(markers) ? readdirSync(markers).sort() : [];
}

async function doctorReport(dir, repair = false) {
  const run = await cli(dir, ['doctor', ...(repair ? ['--repair'] : []), '--json']);
  return { code: run.code, report: run.json, stderr: run.stderr };
}

test(
  "a cleanup destroys a running delete's finished backup: " + "no more, recovery decides again under the entry's lock",
  async (t) => {
    const dir = await store(t, recent('d0', 3, 3));
    const ids = liveIds(dir);
    assert.equal(ids.length, 13);
    // The delete has made its trash entry and not yet written the manifest: to a look from outside, an
    // empty entry without a manifest, as a killed delete leaves.
    const deleter = faults(t, ['pause:trash-entry-made:1']);
    const deleting = cli(dir, ['delete', 'd0', '--force', '--json'], { env: deleter.env });
    await deleter.reached('trash-entry-made', deleting);
    // The cleanup has seen that entry and is about to take its lock.
    const cleaner = faults(t, ['pause:recover-entry:1']);
    const cleaning = cli(dir, ['cleanup', '--hours', '1', '--json'], { env: cleaner.env });
    await cleaner.reached('recover-entry', cleaning);
    deleter.release('trash-entry-made');
    cleaner.release('recover-entry');
    const [deleted, cleaned] = await Promise.all([deleting, cleaning]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    const entries = trashEntries(dir);
    assert.deepEqual(
      entries.map((e) => e.entry),
      [deleted.json.backup.entry],
      'the acknowledged backup is in the trash',
    );
    assert.deepEqual(entries[0].held, ids);
    assert.equal(entries[0].manifest.status, 'complete');
    const restored = await cli(dir, ['restore', 'd0', '--json']);
    assert.equal(restored.code, 0, restored.stderr);
    assert.deepEqual(liveIds(dir), ids);
  },
);

test(
  'restoring a child while its parent is being deleted breaks the tree: ' + 'no more, the restore waits and refuses',
  async (t) => {
    const dir = await store(t, [
      { id: 'P', phase: 'planning' },
      { id: 'C1', parent: 'P', phase: 'planning' },
      { id: 'C2', parent: 'P', phase: 'planning' },
    ]);
    assert.equal((await cli(dir, ['delete', 'C2', '--force'])).code, 0);
    // `delete P` holds its locks and has started moving.
    const deleter = faults(t, ['pause:trash-move-in:1']);
    const deleting = cli(dir, ['delete', 'P', '--force', '--json'], { env: deleter.env });
    await deleter.reached('trash-move-in', deleting);
    const restoring = cli(dir, ['restore', 'C2', '--json']);
    deleter.release('trash-move-in');
    const [deleted, restored] = await Promise.all([deleting, restoring]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(
      restored.code,
      3,
      `restore C2 must be refused while P is in the trash: ${restored.stdout}${restored.stderr}`,
    );
    assert.match(restored.stderr, /parent P is in the trash .*restore P first/);
    assert.deepEqual(liveIds(dir), [], 'nothing is live with its parent in the trash');

    // Restored in order, the tree is whole again, and the cascade takes all of it.
    assert.equal((await cli(dir, ['restore', 'P'])).code, 0);
    assert.equal((await cli(dir, ['restore', 'C2'])).code, 0);
    assert.deepEqual(children(dir, 'P'), ['C1', 'C2']);
    const listed = await cli(dir, ['children', 'P', '--json']);
    assert.deepEqual(listed.json.children.map((c) => c.agent_id).sort(), ['C1', 'C2']);
    assert.equal((await cli(dir, ['delete', 'P', '--force'])).code, 0);
    assert.deepEqual(liveIds(dir), []);
    const { code } = await doctorReport(dir);
    assert.equal(code, 0);
  },
);

test('a killed restore cannot be finished by running it again: now it can, and doctor sees it half-done', async (t) => {
  const dir = await store(t, recent('big0', 4, 3));
  const ids = liveIds(dir);
  assert.equal(ids.length, 40);
  assert.equal((await cli(dir, ['delete', 'big0', '--force'])).code, 0);
  for (const [round, finish] of [
    [1, ['restore', 'big0']],
    [2, ['doctor', '--repair']],
    [3, 'entry'],
  ]) {
    const restorer = faults(t, ['pause:trash-move-out:15']);
    const restoring = cli(dir, ['restore', 'big0'], { env: restorer.env });
    await restorer.reached('trash-move-out', restoring);
    restorer.kill('trash-move-out');
    await restoring;
    assert.equal(liveIds(dir).length, 14, `round ${round}: 14 sessions were put back before the kill`);
    // Right after the kill (its lock still fresh): not healthy, the hidden sessions named.
    const seen = await doctorReport(dir);
    assert.equal(seen.code, 1, `round ${round}: ${JSON.stringify(seen.report)}`);
    const finding = seen.report.findings.find((f) => f.check === 'trash');
    assert.match(finding.message, /restore that was interrupted .*26 session\(s\) are hidden/);
    const [entry] = trashEntries(dir);
    const again = await cli(dir, finish === 'entry' ? ['restore', entry.entry] : finish);
    assert.equal(again.code, 0, `round ${round}: ${again.stderr}`);
    assert.deepEqual(liveIds(dir), ids, `round ${round}`);
    assert.deepEqual(trashEntries(dir), []);
    const audited = auditedPlaces(dir);
    assert.deepEqual(
      ids.filter((id) => audited.get(id) !== 'live'),
      [],
      `round ${round}: the audit trail's last word on each session is that it is live`,
    );
    assert.equal((await doctorReport(dir)).code, 0);
    if (round < 3) assert.equal((await cli(dir, ['delete', 'big0', '--force'])).code, 0);
  }
});

test(
  'a killed delete, rerun, then repaired, leaves half the subtree live: ' + 'no more, the rerun takes all of it',
  async (t) => {
    const dir = await store(t, recent('big0', 4, 3));
    const ids = liveIds(dir);
    const deleter = faults(t, ['pause:trash-move-in:10']);
    const deleting = cli(dir, ['delete', 'big0', '--force'], { env: deleter.env });
    await deleter.reached('trash-move-in', deleting);
    deleter.kill('trash-move-in');
    await deleting;
    assert.equal(liveIds(dir).length, 31, '9 leaves were moved before the kill');
    const rerun = await cli(dir, ['delete', 'big0', '--force', '--json']);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.equal(rerun.json.total, 40);
    assert.ok(
      rerun.json.warnings.some((w) => /interrupted delete held 9 of these sessions: rolled back/.test(w)),
      rerun.json.warnings.join('\n'),
    );
    const repaired = await doctorReport(dir, true);
    assert.equal(repaired.code, 0, JSON.stringify(repaired.report));
    assert.deepEqual(liveIds(dir), [], 'no part of the subtree is live');
    const entries = trashEntries(dir);
    assert.equal(entries.length, 1);
    assert.deepEqual(entries[0].held, ids);
    assert.equal((await cli(dir, ['restore', 'big0'])).code, 0);
    assert.deepEqual(liveIds(dir), ids);
  },
);

test('a failed delete hides sessions: no more, what moved is put back at once', async (t) => {
  const dir = await store(t, [...recent('r1', 3, 3), ...recent('r2', 2, 2)]);
  const ids = liveIds(dir);
  for (const rule of [
    'fail:trash-moving:1:ENOSPC',
    'fail:trash-move-in:5:ENOSPC',
    'fail:trash-complete:1:ENOSPC',
    'fail:trash-complete:1:EROFS',
  ]) {
    const deleting = await cli(dir, ['delete', 'r1', '--force'], { env: faults(t, [rule]).env });
    assert.equal(deleting.code, 4, `${rule}: ${deleting.stderr}`);
    if (rule.endsWith('ENOSPC')) assert.match(deleting.stderr, /no space left on device/);
    assert.deepEqual(liveIds(dir), ids, `${rule}: every session is where it was`);
    assert.equal((await cli(dir, ['get', 'r1'])).code, 0);
    assert.deepEqual(trashEntries(dir), [], `${rule}: no entry is left behind`);
    assert.equal((await doctorReport(dir)).code, 0, rule);
  }
  // Cleanup on a full disk: the purge is skipped, nothing is hidden, no empty entry stays.
  const old = await store(t, treeSpec('o', 3, 2, { outcome: 'completed', hoursAgo: 48 }));
  const cleaned = await cli(old, ['cleanup', '--json'], { env: faults(t, ['fail:trash-complete:1:ENOSPC']).env });
  assert.equal(cleaned.code, 0, cleaned.stderr);
  assert.match(cleaned.json.skipped.map((s) => s.reason).join('\n'), /no space left on device/);
  assert.equal(liveIds(old).length, 7);
  assert.deepEqual(trashEntries(old), []);
  assert.equal((await doctorReport(old)).code, 0);

  // When even putting back fails, the error says where the sessions wait and what repairs it.
  const stuck = await cli(dir, ['delete', 'r1', '--force'], {
    env: faults(t, ['fail:trash-complete:1:ENOSPC', 'fail:trash-move-out:1:EIO']).env,
  });
  assert.equal(stuck.code, 4);
  assert.match(
    stuck.stderr,
    /13 session\(s\) wait in the trash entry \S+: run `agent-session doctor --repair` to put them back/,
  );
  const seen = await doctorReport(dir);
  assert.equal(seen.code, 1);
  assert.match(
    seen.report.findings.find((f) => f.check === 'trash').message,
    /delete that was interrupted .*13 session\(s\) are hidden/,
  );
  assert.equal((await doctorReport(dir, true)).code, 0);
  assert.deepEqual(liveIds(dir), ids);
  assert.deepEqual(trashEntries(dir), []);
  // What the audit trail says of it: the recovery that put them back.
  const audit = readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(audit.filter((e) => e.action === 'recover').at(-1).ids.length, 13);
});

test(
  'a recovery that cannot finish (a full disk) does not stop cleanup ' +
    'from expiring the trash, and expiry names only what is gone',
  async (t) => {
    const dir = await store(t, [...recent('a', 2, 2), ...recent('b', 2, 2), { id: 'c', phase: 'planning' }]);
    for (const id of ['a', 'c']) assert.equal((await cli(dir, ['delete', id, '--force'])).code, 0);
    // `c` is created again: the trash holds an older `c` that expiry destroys; the live one stays.
    assert.equal((await cli(dir, ['create', '--agent', 'w', '--id', 'c'])).code, 0);
    // `b`'s delete is killed while moving: recovery will fail to write its manifest.
    const deleter = faults(t, ['pause:trash-move-in:2']);
    const deleting = cli(dir, ['delete', 'b', '--force'], { env: deleter.env });
    await deleter.reached('trash-move-in', deleting);
    deleter.kill('trash-move-in');
    await deleting;
    const cleaned = await cli(dir, ['cleanup', '--json'], {
      env: faults(t, ['fail:trash-restoring:1:ENOSPC'], { AGENT_SESSION_TRASH_RETENTION_DAYS: '0' }).env,
    });
    assert.equal(cleaned.code, 0, cleaned.stderr);
    assert.deepEqual(
      cleaned.json.recovered.map((r) => [r.action, /no space left/.test(r.detail)]),
      [['failed', true]],
    );
    assert.equal(cleaned.json.expired_trash.length, 2, 'both complete entries expired');
    assert.deepEqual(
      trashEntries(dir).map((e) => e.manifest.status),
      ['moving'],
    );
    const audited = auditedPlaces(dir);
    assert.equal(audited.get('c'), 'live', 'the expiry of the old c does not name the live one');
    assert.equal(audited.get('a'), 'gone');
    // With room again, the repair finishes the job.
    assert.equal((await doctorReport(dir, true)).code, 0);
    assert.deepEqual(liveIds(dir), ['b', 'b-0', 'b-1', 'c']);
  },
);

test(
  'an import under a parent in the trash is refused, as a restore is: ' + 'no live session has its parent in the trash',
  async (t) => {
    const dir = await store(t, recent('P', 3, 2));
    const bundle = path.join(path.dirname(dir), 'c.bundle');
    assert.equal((await cli(dir, ['export', 'P-1', '-o', bundle])).code, 0);
    assert.equal((await cli(dir, ['delete', 'P', '--force'])).code, 0);
    const imported = await cli(dir, ['import', bundle]);
    assert.equal(imported.code, 3, imported.stderr);
    assert.match(imported.stderr, /cannot import P-1: its parent P is in the trash .*restore P first/);
    assert.deepEqual(liveIds(dir), []);
    assert.equal((await doctorReport(dir)).code, 0, 'no staging or lock is left behind');
    assert.equal((await cli(dir, ['restore', 'P'])).code, 0);
    assert.equal(liveIds(dir).length, 7);
  },
);

test(
  "two restores of one subtree of a cleanup's entry at once put back the whole entry: " +
    'no more, the second finds the subtree gone and the other subtrees stay in the trash',
  async (t) => {
    const old = (root) => treeSpec(root, 2, 2, { outcome: 'completed', hoursAgo: 48 });
    const dir = await store(t, [...old('A'), ...old('B')]);
    assert.equal((await cli(dir, ['cleanup', '--hours', '1'])).code, 0);
    const [{ entry }] = trashEntries(dir);
    assert.deepEqual(liveIds(dir), []);
    // The first restore of A holds the entry, moving A back; the second has found A in that entry already.
    const first = faults(t, ['pause:trash-move-out:1']);
    const restoring = cli(dir, ['restore', 'A', '--json'], { env: first.env });
    await first.reached('trash-move-out', restoring);
    const second = faults(t, ['pause:restore-entry-found:1']);
    const again = cli(dir, ['restore', 'A', '--json'], { env: second.env });
    await second.reached('restore-entry-found', again);
    first.release('trash-move-out');
    assert.equal((await restoring).code, 0);
    second.release('restore-entry-found');
    const late = await again;
    assert.equal(late.code, 1, late.stderr);
    assert.match(late.stderr, new RegExp(`trash entry ${entry} no longer holds session A`));
    assert.deepEqual(liveIds(dir), ['A', 'A-0', 'A-1']);
    assert.deepEqual(
      trashEntries(dir).map((e) => [e.entry, e.manifest.status, e.held]),
      [[entry, 'complete', ['B', 'B-0', 'B-1']]],
    );
    const listed = (await cli(dir, ['trash', '--json'])).json.entries;
    assert.deepEqual(
      listed.map((e) => [e.roots, e.present]),
      [[['B'], 3]],
    );
  },
);

test('a killed restore of one subtree of a cleanup entry: restoring another finishes it, then its own', async (t) => {
  // One cleanup entry of three old trees: d0, d1 and d2, each a root and two children.
  const dir = await store(
    t,
    ['d0', 'd1', 'd2'].flatMap((root) => treeSpec(root, 2, 2, { outcome: 'completed', hoursAgo: 48 })),
  );
  assert.equal((await cli(dir, ['cleanup', '--hours', '1'])).code, 0);
  assert.deepEqual(liveIds(dir), []);
  const restorer = faults(t, ['pause:trash-complete:1']);
  const restoring = cli(dir, ['restore', 'd1'], { env: restorer.env });
  await restorer.reached('trash-complete', restoring);
  restorer.kill('trash-complete');
  await restoring;
  assert.deepEqual(liveIds(dir), ['d1', 'd1-0', 'd1-1'], 'd1 was put back before the kill');
  // Only what the cut restore was moving counts as hidden; d0 and d2 stay in the trash on purpose.
  const seen = await doctorReport(dir);
  assert.match(seen.report.findings.find((f) => f.check === 'trash').message, /; 0 session\(s\) are hidden in it$/);

  const d0 = await cli(dir, ['restore', 'd0', '--json']);
  assert.equal(d0.code, 0, d0.stderr);
  assert.deepEqual(d0.json.restored.map((r) => r.id).sort(), ['d0', 'd0-0', 'd0-1']);
  assert.deepEqual(liveIds(dir), ['d0', 'd0-0', 'd0-1', 'd1', 'd1-0', 'd1-1']);
  assert.deepEqual(
    trashEntries(dir).map((e) => [e.manifest.status, e.held]),
    [['complete', ['d2', 'd2-0', 'd2-1']]],
  );
  assert.equal((await doctorReport(dir)).code, 0);
});
