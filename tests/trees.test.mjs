// Hierarchy: children, descendants, tree, orphans, and a children index that never loses a child.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { loadLibrary, tempDir, cli } from './helpers/run.mjs';
import { build, record, snapshot } from './helpers/trees.mjs';

const SPEC = [
  { id: 'root', outcome: 'completed' },
  { id: 'a', parent: 'root', outcome: 'completed' },
  { id: 'b', parent: 'root', phase: 'approval' },
  { id: 'a1', parent: 'a', outcome: 'failed' },
  { id: 'a1x', parent: 'a1', outcome: 'completed' },
  { id: 'zlone' },
];

test('children and tree through the CLI: direct children only, then the whole tree with depths', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await build(dir, SPEC);
  const kids = await cli(dir, ['children', 'root', '--json']);
  assert.equal(kids.code, 0, kids.stderr);
  assert.deepEqual(
    kids.json.children.map((c) => c.agent_id),
    ['a', 'b'],
  );

  const sub = await cli(dir, ['tree', 'a', '--json']);
  assert.deepEqual(
    sub.json.sessions.map((r) => [r.agent_id, r.depth]),
    [
      ['a', 0],
      ['a1', 1],
      ['a1x', 2],
    ],
  );

  const all = await cli(dir, ['tree', '--json']);
  assert.deepEqual(
    all.json.sessions.map((r) => [r.agent_id, r.depth]),
    [
      ['root', 0],
      ['a', 1],
      ['a1', 2],
      ['a1x', 3],
      ['b', 1],
      ['zlone', 0],
    ],
  );
  const text = await cli(dir, ['tree']);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /^root {2}worker {2}completed/m);
  assert.match(text.stdout, /^ {6}a1x {2}worker {2}completed/m);

  const none = await cli(dir, ['children', 'nope']);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /^agent-session: /);
});

test('library: children, descendants (depth-first with depth), countChildren', async (t) => {
  const dir = tempDir(t);
  await build(dir, SPEC);
  const { Sessions, children, descendants, countChildren } = await loadLibrary();
  const sessions = Sessions.open({ dir, cwd: dir, env: {} });
  assert.deepEqual(
    (await children(sessions, 'a')).map((s) => s.agent_id),
    ['a1'],
  );
  assert.deepEqual(
    (await descendants(sessions, 'root')).map((s) => [s.agent_id, s.depth]),
    [
      ['a', 1],
      ['a1', 2],
      ['a1x', 3],
      ['b', 1],
    ],
  );
  assert.equal(await countChildren(sessions, 'root'), 2);
  assert.equal(await countChildren(sessions, 'a1x'), 0);
  await assert.rejects(descendants(sessions, 'missing'), { code: 'ENOTFOUND' });
});

test('orphans: list --orphans and tree show a session whose parent is gone', async (t) => {
  const dir = tempDir(t);
  await build(dir, SPEC);
  // The parent vanishes behind the store's back (an older tool, a manual rm).
  rmSync(path.join(dir, 'a'), { recursive: true });
  const listed = await cli(dir, ['list', '--orphans', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(
    listed.json.sessions.map((s) => s.agent_id),
    ['a1'],
  );
  const all = await cli(dir, ['tree', '--json']);
  const a1 = all.json.sessions.find((r) => r.agent_id === 'a1');
  assert.equal(a1.orphan, true);
  assert.equal(a1.depth, 0);
  assert.equal(all.json.sessions.find((r) => r.agent_id === 'a1x').orphan, false);
  const text = await cli(dir, ['list', '--orphans']);
  assert.match(text.stdout, /^a1 /m);
  assert.doesNotMatch(text.stdout, /^a1x /m);
});

test('the index: a missing index, hand-written records and stale markers never lose or invent a child', async (t) => {
  const dir = tempDir(t);
  await build(dir, SPEC);
  const { Sessions, children } = await loadLibrary();
  const sessions = Sessions.open({ dir, cwd: dir, env: {} });
  // A record written by hand (no index marker), as an older version or a copy would leave it.
  const copy = { ...record(dir, 'a1x'), agent_id: 'handmade', parent_session_id: 'b' };
  mkdirSync(path.join(dir, 'handmade'));
  writeFileSync(path.join(dir, 'handmade', 'state.json'), `${JSON.stringify(copy, null, 2)}\n`);
  // A marker for a child that does not exist, and one whose record names another parent.
  mkdirSync(path.join(dir, '.index', 'children', 'b'), { recursive: true });
  writeFileSync(path.join(dir, '.index', 'children', 'b', 'ghost'), '');
  writeFileSync(path.join(dir, '.index', 'children', 'b', 'a1'), '');
  assert.deepEqual(
    (await children(sessions, 'b')).map((s) => s.agent_id),
    ['handmade'],
  );

  const before = snapshot(dir);
  // Read-only lookups do not write the index.
  await cli(dir, ['children', 'b', '--json']);
  assert.deepEqual(snapshot(dir), before);

  rmSync(path.join(dir, '.index'), { recursive: true });
  assert.deepEqual(
    (await children(sessions, 'root')).map((s) => s.agent_id),
    ['a', 'b'],
  );
  // Only the ids half of the index lost: still every child.
  await build(dir, [{ id: 'c', parent: 'root' }]);
  rmSync(path.join(dir, '.index', 'children'), { recursive: true });
  assert.deepEqual(
    (await children(sessions, 'root')).map((s) => s.agent_id),
    ['a', 'b', 'c'],
  );
  // A rebuild restores every marker; then an ids marker lost with its link: still found.
  const { rebuildIndex, checkIndex } = await loadLibrary();
  assert.equal((await rebuildIndex(sessions)).indexed, 8);
  assert.deepEqual(await checkIndex(sessions), { missing: [], stale: [], unindexed: [] });
  unlinkSync(path.join(dir, '.index', 'ids', 'a'));
  unlinkSync(path.join(dir, '.index', 'children', 'root', 'a'));
  assert.deepEqual(
    (await children(sessions, 'root')).map((s) => s.agent_id),
    ['a', 'b', 'c'],
  );
  // A link lost while the ids marker stays is what doctor reports.
  unlinkSync(path.join(dir, '.index', 'children', 'root', 'b'));
  assert.deepEqual((await checkIndex(sessions)).missing, [{ parent: 'root', child: 'b' }]);
});

test('a corrupt child is still part of its parent subtree (found by its marker)', async (t) => {
  const dir = tempDir(t);
  await build(dir, SPEC);
  writeFileSync(path.join(dir, 'a1', 'state.json'), '{ torn');
  const { Sessions, tree, children } = await loadLibrary();
  const sessions = Sessions.open({ dir, cwd: dir, env: {} });
  // Listed summaries skip what cannot be read, but the grandchild under it is still reached.
  assert.deepEqual(
    (await tree(sessions, 'a')).map((r) => r.agent_id),
    ['a', 'a1x'],
  );
  assert.deepEqual(await children(sessions, 'a'), []);
});
