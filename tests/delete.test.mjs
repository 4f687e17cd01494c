// delete: multi-level cascade, guards, dry run, trash, restore, work preservation on a real git repository.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadLibrary, tempDir, cli } from './helpers/run.mjs';
import { build, liveIds, sessionFiles, snapshot, trashEntries, treeSpec } from './helpers/trees.mjs';
import { git } from './helpers/git.mjs';

const OLD = { outcome: 'completed', hoursAgo: 2 };

test('delete removes a session and every descendant, five levels deep, into one trash entry', async (t) => {
  const dir = tempDir(t);
  const spec = treeSpec('r', 5, 2, OLD);
  await build(dir, [...spec, { id: 'other', ...OLD }]);
  const res = await cli(dir, ['delete', 'r-1', '--json']);
  assert.equal(res.code, 0, res.stderr);
  const subtree = spec.map((s) => s.id).filter((id) => id === 'r-1' || id.startsWith('r-1-'));
  assert.equal(subtree.length, 15);
  assert.deepEqual(res.json.removed.map((s) => s.id).sort(), subtree.sort());
  assert.deepEqual(res.json.counts_by_depth, { 0: 1, 1: 2, 2: 4, 3: 8 });
  assert.equal(res.json.removed.find((s) => s.id === 'r-1-0-1-0').depth, 3);
  assert.ok(
    res.json.warnings.some((w) => w.includes('14')),
    res.json.warnings.join('; '),
  );
  assert.ok(existsSync(res.json.backup.path));
  const live = liveIds(dir);
  for (const id of subtree) assert.ok(!live.includes(id), `${id} still live`);
  assert.ok(live.includes('r') && live.includes('r-0-1-1-1') && live.includes('other'));
  const [entry] = trashEntries(dir);
  assert.equal(entry.manifest.status, 'complete');
  assert.deepEqual(entry.held, [...subtree].sort());
  // Leaves first: every session is moved before its parent.
  const order = entry.manifest.sessions.map((s) => s.id);
  for (const s of entry.manifest.sessions)
    if (s.parent && subtree.includes(s.parent)) assert.ok(order.indexOf(s.id) < order.indexOf(s.parent));
  // The index no longer lists the removed subtree.
  const kids = await cli(dir, ['children', 'r', '--json']);
  assert.deepEqual(
    kids.json.children.map((c) => c.agent_id),
    ['r-0'],
  );
});

test('the guard: a running grandchild blocks the delete (exit 3, EREFUSED, listed); --force goes ahead', async (t) => {
  const dir = tempDir(t);
  await build(dir, [
    { id: 'p', ...OLD },
    { id: 'c', parent: 'p', ...OLD },
    { id: 'g', parent: 'c', phase: 'executing', hoursAgo: 5 },
    { id: 'q', parent: 'p', phase: 'planning' },
  ]);
  const before = snapshot(dir);
  const refused = await cli(dir, ['delete', 'p']);
  assert.equal(refused.code, 3);
  assert.match(refused.stderr, /^agent-session: /);
  assert.match(refused.stderr, /\bg\b/);
  assert.match(refused.stderr, /\bq\b/);
  assert.deepEqual(
    sessionFiles(dir),
    Object.fromEntries(Object.entries(before).filter(([k]) => !k.startsWith('.') && !k.startsWith('audit'))),
  );

  const { Sessions, deleteSession } = await loadLibrary();
  const sessions = Sessions.open({ dir, cwd: dir, env: {} });
  await assert.rejects(deleteSession(sessions, 'p'), (err) => {
    assert.equal(err.code, 'EREFUSED');
    assert.deepEqual(err.details.blocked.map((b) => b.id).sort(), ['g', 'q']);
    return true;
  });
  const forced = await cli(dir, ['delete', 'p', '--force', '--json']);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(forced.json.total, 4);
  assert.deepEqual(liveIds(dir), []);
});

test('--no-cascade refuses a session with children and deletes a leaf', async (t) => {
  const dir = tempDir(t);
  await build(dir, [
    { id: 'p', ...OLD },
    { id: 'c', parent: 'p', ...OLD },
  ]);
  const refused = await cli(dir, ['delete', 'p', '--no-cascade', '--force']);
  assert.equal(refused.code, 3);
  assert.deepEqual(liveIds(dir), ['c', 'p']);
  const leaf = await cli(dir, ['delete', 'c', '--no-cascade', '--json']);
  assert.equal(leaf.code, 0, leaf.stderr);
  assert.deepEqual(liveIds(dir), ['p']);
});

test('--dry-run prints the tree, counts, bytes and blockers and leaves the store byte-identical', async (t) => {
  const dir = tempDir(t);
  await build(dir, [...treeSpec('r', 3, 2, OLD), { id: 'run', parent: 'r-0', phase: 'executing' }]);
  const before = snapshot(dir);
  const res = await cli(dir, ['delete', 'r', '--dry-run', '--json']);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.json.dry_run, true);
  assert.equal(res.json.total, 8);
  assert.ok(res.json.bytes > 0);
  assert.deepEqual(
    res.json.blocked.map((b) => b.id),
    ['run'],
  );
  const text = await cli(dir, ['delete', 'r', '--dry-run', '--no-cascade']);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /Would delete 8 session/);
  assert.match(text.stdout, /^Blocked: r /m);
  assert.deepEqual(snapshot(dir), before);
});

test(
  'restore puts a deleted subtree back byte-identically, ' + 'by id or by entry; refuses when an id exists',
  async (t) => {
    const dir = tempDir(t);
    await build(dir, [...treeSpec('r', 4, 2, OLD), { id: 'keep', ...OLD }]);
    const before = sessionFiles(dir);
    const del = await cli(dir, ['delete', 'r-0', '--json']);
    assert.equal(del.code, 0, del.stderr);
    const listing = await cli(dir, ['trash', '--json']);
    assert.equal(listing.json.entries.length, 1);
    assert.equal(listing.json.entries[0].root, 'r-0');
    assert.equal(listing.json.entries[0].present, 7);
    assert.equal(listing.json.entries[0].restorable, true);
    assert.ok(
      Date.parse(listing.json.entries[0].expires_at) - Date.parse(listing.json.entries[0].deleted_at) ===
        7 * 86_400_000,
    );

    const restored = await cli(dir, ['restore', 'r-0-1', '--json']);
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(restored.json.restored.length, 7);
    assert.deepEqual(sessionFiles(dir), before);
    assert.deepEqual((await cli(dir, ['trash', '--json'])).json.entries, []);
    assert.deepEqual(
      (await cli(dir, ['children', 'r', '--json'])).json.children.map((c) => c.agent_id),
      ['r-0', 'r-1'],
    );

    // Deleted again, then one id is taken by a new session: restore refuses and changes nothing.
    const again = await cli(dir, ['delete', 'r-0', '--json']);
    await build(dir, [{ id: 'r-0-0' }]);
    const mid = snapshot(dir);
    const clash = await cli(dir, ['restore', again.json.backup.entry]);
    assert.equal(clash.code, 3);
    assert.match(clash.stderr, /^agent-session: /);
    assert.deepEqual(snapshot(dir), mid);
    const missing = await cli(dir, ['restore', 'never-deleted']);
    assert.equal(missing.code, 1);
  },
);

test('--no-backup destroys the subtree: nothing in the trash', async (t) => {
  const dir = tempDir(t);
  await build(dir, treeSpec('r', 3, 2, OLD));
  const res = await cli(dir, ['delete', 'r', '--no-backup', '--json']);
  assert.equal(res.code, 0, res.stderr);
  assert.equal(res.json.backup, null);
  assert.deepEqual(liveIds(dir), []);
  assert.deepEqual(trashEntries(dir), []);
});

test(
  'work preservation: unsaved work in a real git repository blocks; ' +
    '--preserve-work saves a patch restore can reapply',
  async (t) => {
    const root = tempDir(t);
    const repo = path.join(root, 'repo');
    const dir = path.join(root, 'store');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-q', '-m', 'first');
    await build(dir, [
      { id: 'w', metadata: { worktree: repo }, ...OLD },
      { id: 'wc', parent: 'w', ...OLD },
    ]);

    // A clean work tree does not block (checked with a dry run).
    assert.deepEqual((await cli(dir, ['delete', 'w', '--dry-run', '--json'])).json.blocked, []);
    writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
    writeFileSync(path.join(repo, 'new.txt'), 'untracked\n');
    const preview = await cli(dir, ['delete', 'w', '--dry-run', '--json']);
    assert.equal(preview.json.blocked.length, 1);
    assert.equal(preview.json.work[0].dir, repo);
    const refused = await cli(dir, ['delete', 'w']);
    assert.equal(refused.code, 3);
    assert.deepEqual(liveIds(dir), ['w', 'wc']);

    const kept = await cli(dir, ['delete', 'w', '--preserve-work', '--json']);
    assert.equal(kept.code, 0, kept.stderr);
    const patch = kept.json.work[0].patch;
    assert.ok(readFileSync(patch, 'utf8').includes('+two'));
    const [entry] = trashEntries(dir);
    assert.equal(entry.manifest.work[0].branch, 'main');
    assert.equal(entry.manifest.work[0].head, git(repo, 'rev-parse', 'HEAD').trim());
    assert.deepEqual(entry.manifest.work[0].untracked, ['new.txt']);

    const restored = await cli(dir, ['restore', 'w']);
    assert.equal(restored.code, 0, restored.stderr);
    assert.match(restored.stdout, /git apply --3way /);
    assert.match(restored.stdout, /new\.txt/);
    // The printed patch reapplies the lost change on a clean checkout.
    git(repo, 'checkout', '--', 'a.txt');
    git(repo, 'apply', '--3way', patch);
    assert.equal(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\ntwo\n');
    assert.deepEqual(liveIds(dir), ['w', 'wc']);

    const forced = await cli(dir, ['delete', 'w', '--force', '--json']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.deepEqual(forced.json.work, []);
    assert.match(forced.stderr, /unsaved work in .* was left there because of --discard-work/);
    assert.equal(readFileSync(path.join(repo, 'a.txt'), 'utf8'), 'one\ntwo\n');
  },
);
