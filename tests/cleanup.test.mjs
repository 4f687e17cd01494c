// cleanup: every finding category, a dry run that computes the same report and changes nothing,
// one cleanup at a time.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { CLI, cleanEnv, loadLibrary, tempDir, cli } from './helpers/run.mjs';
import { build, HOUR, liveIds, record, snapshot, trashEntries, treeSpec, writeFinished } from './helpers/trees.mjs';

const DONE = { outcome: 'completed', hoursAgo: 48 };

/** A store with one of everything cleanup looks for. */
async function messyStore(dir) {
  await build(dir, [
    { id: 'done', ...DONE },
    { id: 'done-c', parent: 'done', ...DONE },
    { id: 'paused', phase: 'approval', hoursAgo: 48 },
    { id: 'fresh', phase: 'approval' },
    { id: 'stuck', phase: 'executing', hoursAgo: 100 },
    { id: 'busy', phase: 'executing', hoursAgo: 30 },
    { id: 'guard', ...DONE },
    { id: 'guard-c', parent: 'guard', ...DONE },
    { id: 'guard-g', parent: 'guard-c', phase: 'executing' },
    { id: 'gone', ...DONE },
    { id: 'orph', parent: 'gone', ...DONE },
    { id: 'orph2', parent: 'gone', outcome: 'completed' },
    { id: 'old-trash', ...DONE },
    { id: 'new-trash', ...DONE },
  ]);
  const { Sessions, deleteSession } = await loadLibrary();
  // 'gone' vanishes behind the store's back (its children become orphans); two trash entries, one past retention.
  rmSync(path.join(dir, 'gone'), { recursive: true });
  await deleteSession(Sessions.open({ dir, cwd: dir, env: {}, now: () => Date.now() - 8 * 24 * HOUR }), 'old-trash');
  await deleteSession(Sessions.open({ dir, cwd: dir, env: {} }), 'new-trash');
  mkdirSync(path.join(dir, 'bad'));
  writeFileSync(path.join(dir, 'bad', 'state.json'), '{ "agent_id": "bad", torn');
  const hourAgo = new Date(Date.now() - HOUR);
  // Temp files of record writes: an old one (a crash's), one being written, one an earlier version
  // left inside a session directory (doctor's to remove, not cleanup's).
  writeFileSync(path.join(dir, '.tmp', 'fresh.state.json.123.1.abc.tmp'), 'partial');
  utimesSync(path.join(dir, '.tmp', 'fresh.state.json.123.1.abc.tmp'), hourAgo, hourAgo);
  writeFileSync(path.join(dir, '.tmp', 'fresh.state.json.124.1.abd.tmp'), 'being written');
  writeFileSync(path.join(dir, 'fresh', 'state.json.125.1.abe.tmp'), 'legacy');
  utimesSync(path.join(dir, 'fresh', 'state.json.125.1.abe.tmp'), hourAgo, hourAgo);
  mkdirSync(path.join(dir, '.locks', 'busy.lock'), { recursive: true });
  utimesSync(path.join(dir, '.locks', 'busy.lock'), hourAgo, hourAgo);
  // The guard of a takeover whose process was killed inside it.
  mkdirSync(path.join(dir, '.locks', 'fresh.lock.takeover'));
  utimesSync(path.join(dir, '.locks', 'fresh.lock.takeover'), hourAgo, hourAgo);
  // A lock dated an hour ahead: its holder's clock was stepped back (or it is long dead).
  const hourAhead = new Date(Date.now() + HOUR);
  mkdirSync(path.join(dir, '.locks', 'guard.lock'));
  utimesSync(path.join(dir, '.locks', 'guard.lock'), hourAhead, hourAhead);
}

const ids = (list) => list.map((x) => x.id).sort();

test('cleanup finds and handles each category, and reports it', async (t) => {
  const dir = tempDir(t);
  await messyStore(dir);
  const badBytes = readFileSync(path.join(dir, 'bad', 'state.json'));

  const res = await cli(dir, ['cleanup', '--json']);
  assert.equal(res.code, 0, res.stderr);
  // Not a terminal: no progress bar, nothing on stderr.
  assert.equal(res.stderr, '');
  const r = res.json;
  assert.equal(r.scanned, 12);
  assert.deepEqual(ids(r.purged), ['done', 'done-c', 'orph', 'paused']);
  assert.deepEqual(r.removed.sort(), ['done', 'done-c', 'orph', 'paused']);
  assert.deepEqual(ids(r.abandoned), ['stuck']);
  assert.deepEqual(ids(r.quarantined), ['bad']);
  assert.deepEqual(ids(r.skipped), ['busy', 'guard', 'guard-c']);
  for (const s of r.skipped) assert.ok(s.reason.length > 0);
  assert.deepEqual(r.orphans.map((o) => [o.id, o.action.startsWith('purged')]).sort(), [
    ['orph', true],
    ['orph2', false],
  ]);
  assert.deepEqual(
    r.expired_trash.map((e) => e.entry.endsWith('-old-trash')),
    [true],
  );
  assert.deepEqual(r.swept.map((s) => s.kind).sort(), ['lock', 'lock', 'lock', 'temp']);
  assert.deepEqual(
    readdirSync(path.join(dir, '.locks')).filter((n) => n.endsWith('.takeover') || n === 'guard.lock'),
    [],
  );
  assert.ok(r.bytes_freed > 0 && r.bytes_to_trash > 0);

  assert.deepEqual(liveIds(dir), ['busy', 'fresh', 'guard', 'guard-c', 'guard-g', 'orph2', 'stuck']);
  assert.equal(record(dir, 'stuck').phase, 'abandoned');
  assert.equal(record(dir, 'stuck').outcome, 'abandoned');
  const quarantined = readdirSync(path.join(dir, '.quarantine'));
  assert.equal(quarantined.length, 1);
  assert.deepEqual(readFileSync(path.join(dir, '.quarantine', quarantined[0], 'state.json')), badBytes);
  assert.deepEqual(readdirSync(path.join(dir, '.tmp')), ['fresh.state.json.124.1.abd.tmp']);
  assert.deepEqual(readdirSync(path.join(dir, 'fresh')).sort(), ['state.json', 'state.json.125.1.abe.tmp']);
  // What was purged is in the trash, restorable, in one entry for the whole run; the expired entry is gone.
  const entries = trashEntries(dir);
  assert.equal(entries.length, 2);
  const purged = entries.find((e) => e.manifest.root !== 'new-trash');
  assert.equal(purged.manifest.reason, 'cleanup');
  assert.deepEqual(purged.manifest.subtrees.map((t) => t.root).sort(), ['done', 'orph', 'paused']);
  assert.deepEqual(
    purged.held.filter((id) => id.startsWith('done')),
    ['done', 'done-c'],
  );
  // One subtree comes back on its own; the others stay in the entry.
  const back = await cli(dir, ['restore', 'done', '--json']);
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(
    back.json.restored.map((s) => s.id),
    ['done', 'done-c'],
  );
  const after = trashEntries(dir).find((e) => e.entry === purged.entry);
  assert.deepEqual(after.manifest.subtrees.map((t) => t.root).sort(), ['orph', 'paused']);
  assert.equal(after.manifest.status, 'complete');
  assert.ok(!after.held.includes('done'));
  assert.equal((await cli(dir, ['delete', 'done', '--no-backup', '--json'])).code, 0);

  // A second run: the abandoned session is recent now (it ages out later); nothing else to do.
  const again = await cli(dir, ['cleanup', '--json']);
  assert.deepEqual(again.json.purged, []);
  assert.deepEqual(again.json.abandoned, []);
  const later = await loadLibrary().then(({ Sessions, cleanup }) =>
    cleanup(Sessions.open({ dir, cwd: dir, env: {}, now: () => Date.now() + 25 * HOUR })),
  );
  assert.ok(later.removed.includes('stuck'));
});

test('--dry-run computes the same report as the real run and leaves the store byte-identical', async (t) => {
  const dir = tempDir(t);
  await messyStore(dir);
  const before = snapshot(dir);
  const dry = await cli(dir, ['cleanup', '--dry-run', '--json']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(snapshot(dir), before);
  const text = await cli(dir, ['cleanup', '--dry-run']);
  assert.match(text.stdout, /^Would purge \d+/m);
  assert.deepEqual(snapshot(dir), before);

  const real = await cli(dir, ['cleanup', '--json']);
  assert.equal(real.code, 0, real.stderr);
  assert.equal(dry.json.dry_run, true);
  assert.equal(real.json.dry_run, false);
  for (const field of ['purged', 'abandoned', 'quarantined', 'skipped']) {
    assert.deepEqual(ids(dry.json[field]), ids(real.json[field]), field);
  }
  assert.deepEqual(
    dry.json.purged.map((p) => [p.id, p.depth]).sort(),
    real.json.purged.map((p) => [p.id, p.depth]).sort(),
  );
  assert.equal(dry.json.scanned, real.json.scanned);
  assert.deepEqual(dry.json.orphans, real.json.orphans);
  assert.deepEqual(dry.json.expired_trash, real.json.expired_trash);
  assert.deepEqual(dry.json.swept.map((s) => s.path).sort(), real.json.swept.map((s) => s.path).sort());
  assert.equal(dry.json.bytes_to_trash, real.json.bytes_to_trash);
  assert.equal(dry.json.bytes_freed, real.json.bytes_freed);
});

test('a purge takes whole subtrees only: a running great-grandchild protects every ancestor', async (t) => {
  const dir = tempDir(t);
  const spec = treeSpec('t', 4, 2, DONE);
  await build(dir, [...spec, { id: 'live', parent: 't-1-0-1', phase: 'planning' }]);
  const res = await cli(dir, ['cleanup', '--json']);
  assert.equal(res.code, 0, res.stderr);
  const kept = ['t', 't-1', 't-1-0', 't-1-0-1', 'live'];
  const live = liveIds(dir);
  for (const id of kept) assert.ok(live.includes(id), `${id} should stay`);
  assert.equal(live.length, kept.length);
  // Every purge root's parent is live: no live session lost its parent.
  for (const id of live) {
    const parent = record(dir, id).parent_session_id;
    if (parent) assert.ok(live.includes(parent), `${id} lost ${parent}`);
  }
});

/** Changes fields of a record behind the library's back, as a person with an editor would. */
function editRecord(dir, id, fields) {
  const file = path.join(dir, id, 'state.json');
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), ...fields }, null, 2));
}

test(
  'sessions on a hand-made parent cycle are kept, ' + 'and the dry run plans exactly what the real run does',
  async (t) => {
    const dir = tempDir(t);
    await build(dir, [
      { id: 'a', ...DONE },
      { id: 'b', parent: 'a', ...DONE },
      { id: 'c', parent: 'b', ...DONE },
      { id: 'x', parent: 'c', ...DONE },
      { id: 'y', parent: 'a', phase: 'planning' },
      { id: 'self', ...DONE },
    ]);
    // a → b → c → a: no tree holds them (doctor reports it as an error). x hangs off the cycle and is
    // purgeable on its own; y is recent, and everything on the cycle reaches it.
    // 'self' is its own parent.
    editRecord(dir, 'a', { parent_session_id: 'c' });
    editRecord(dir, 'self', { parent_session_id: 'self' });

    const dry = await cli(dir, ['cleanup', '--dry-run', '--json']);
    assert.equal(dry.code, 0, dry.stderr);
    const real = await cli(dir, ['cleanup', '--json']);
    assert.equal(real.code, 0, real.stderr);
    for (const report of [dry.json, real.json]) {
      assert.deepEqual(
        report.purged.map((p) => [p.id, p.root]),
        [['x', 'x']],
      );
      assert.deepEqual(ids(report.skipped), ['a', 'b', 'c', 'self']);
      for (const s of report.skipped) assert.match(s.reason, /parent links form a cycle/);
    }
    assert.deepEqual(liveIds(dir), ['a', 'b', 'c', 'self', 'y']);
  },
);

test(
  'the dry run plans what the real run does: ' + 'hand-edited parents, a newer-schema child, children oldest first',
  async (t) => {
    const dir = tempDir(t);
    await build(dir, [
      { id: 'x', ...DONE },
      { id: 'w', ...DONE },
      { id: 'p', ...DONE },
      { id: 'q', parent: 'p', ...DONE },
      { id: 'r', ...DONE },
      { id: 'zz', parent: 'r', ...DONE, hoursAgo: 49 },
      { id: 'aa', parent: 'r', ...DONE },
    ]);
    // w was made a child of x by hand (the children index still lists it as a root); q is a record of
    // a schema this version does not read, so neither run may take its parent.
    editRecord(dir, 'w', { parent_session_id: 'x' });
    editRecord(dir, 'q', { schema_version: 99 });

    const dry = await cli(dir, ['cleanup', '--dry-run', '--json']);
    assert.equal(dry.code, 0, dry.stderr);
    const real = await cli(dir, ['cleanup', '--json']);
    assert.equal(real.code, 0, real.stderr);
    for (const report of [dry.json, real.json]) {
      // r's children in creation order (zz first), not in the order of their names.
      const purged = report.purged.map((e) => [e.id, e.root, e.depth]);
      assert.deepEqual(
        purged.filter(([, root]) => root === 'r'),
        [
          ['r', 'r', 0],
          ['zz', 'r', 1],
          ['aa', 'r', 1],
        ],
      );
      assert.deepEqual(
        purged.filter(([, root]) => root === 'x'),
        [
          ['x', 'x', 0],
          ['w', 'x', 1],
        ],
      );
      assert.equal(purged.length, 5);
      assert.deepEqual(ids(report.skipped), ['p', 'q']);
      assert.match(report.skipped.find((e) => e.id === 'p').reason, /descendant q: EVERSION/);
    }
    assert.deepEqual(liveIds(dir), ['p', 'q']);
  },
);

test(
  'one cleanup at a time: a held cleanup lock makes the second exit 4 with a message; ' +
    'two at once never purge twice',
  async (t) => {
    const dir = tempDir(t);
    await build(
      dir,
      Array.from({ length: 40 }, (_, i) => ({ id: `s${i}`, ...DONE })),
    );
    // A live holder refreshes its lock; so does this test.
    const lock = path.join(dir, '.locks', '.cleanup.lock');
    mkdirSync(lock, { recursive: true });
    const timer = setInterval(() => utimesSync(lock, new Date(), new Date()), 300);
    const blocked = await cli(dir, ['cleanup', '--json']);
    clearInterval(timer);
    assert.equal(blocked.code, 4);
    assert.match(
      blocked.stderr,
      new RegExp(
        '^agent-session: another cleanup is running on this store; ' +
          'the store for cleanup is locked by another process; gave up after \\d+ ms\n$',
      ),
    );
    assert.equal(liveIds(dir).length, 40);

    const run = () =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [CLI, '--dir', dir, 'cleanup', '--json'], { cwd: dir, env: cleanEnv() });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('close', (code) => resolve({ code, out }));
      });
    const results = await Promise.all([run(), run()]);
    const purged = results.filter((r) => r.code === 0).flatMap((r) => JSON.parse(r.out).removed);
    for (const r of results) assert.ok(r.code === 0 || r.code === 4, `exit ${r.code}`);
    assert.equal(purged.length, 40);
    assert.equal(new Set(purged).size, 40);
    assert.deepEqual(liveIds(dir), []);
  },
);

test('a missing store: exit 0, nothing to clean, and the store is not created', async (t) => {
  const dir = path.join(tempDir(t), 'none');
  for (const args of [['--hours', '1', '--dry-run'], []]) {
    const text = await cli(dir, ['cleanup', ...args]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^No sessions have been recorded here yet: .* \(from --dir\): nothing to clean\.$/m);
  }
  const res = await cli(dir, ['cleanup', '--json']);
  assert.equal(res.code, 0, res.stderr);
  assert.deepEqual([res.json.dry_run, res.json.scanned, res.json.bytes_freed, res.json.purged], [false, 0, 0, []]);
  assert.equal(existsSync(dir), false);
});

test('an empty store: exit 0 with a zero report', async (t) => {
  const dir = tempDir(t);
  const text = await cli(dir, ['cleanup', '--hours', '1']);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^Scanned 0 session/m);
});

test('progress: the library reports each step of a large cleanup', async (t) => {
  const dir = tempDir(t);
  await build(
    dir,
    Array.from({ length: 30 }, (_, i) => ({ id: `p${i}`, ...DONE })),
  );
  const { Sessions, cleanup } = await loadLibrary();
  const seen = [];
  const report = await cleanup(Sessions.open({ dir, cwd: dir, env: {} }), { onProgress: (p) => seen.push(p) });
  assert.equal(report.purged.length, 30);
  assert.equal(seen.length, 30);
  assert.deepEqual(seen.at(-1), { done: 30, total: 30, scanned: 30 });
});

test('on a terminal, a large cleanup draws a progress bar on stderr and keeps stdout clean', async (t) => {
  const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
  if (script.status !== 0) return t.skip('no util-linux script(1) to provide a terminal');
  const dir = tempDir(t);
  writeFinished(dir, 600, new Date(Date.now() - 48 * HOUR).toISOString());
  const out = path.join(tempDir(t), 'out.json');
  const command =
    `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} --dir ${JSON.stringify(dir)} ` +
    `cleanup --dry-run --json > ${JSON.stringify(out)}`;
  const tty = spawnSync('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd: dir,
    encoding: 'utf8',
    env: cleanEnv(),
  });
  assert.equal(tty.status, 0, tty.stderr);
  assert.match(tty.stdout, /\[#+\] 600\/600/);
  assert.equal(JSON.parse(readFileSync(out, 'utf8')).purged.length, 600);
});

test('the text report summarises: counts by reason, the first 20 ids, sizes; --verbose lists all', async (t) => {
  const dir = tempDir(t);
  const spec = [
    ...Array.from({ length: 23 }, (_, i) => ({ id: `done-${String(i).padStart(2, '0')}`, ...DONE })),
    ...Array.from({ length: 2 }, (_, i) => ({ id: `failed-${i}`, outcome: 'failed', hoursAgo: 30 })),
    { id: 'kid', parent: 'done-00', ...DONE },
  ];
  await build(dir, spec);
  const dry = await cli(dir, ['cleanup', '--hours', '24', '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  const lines = dry.stdout.trimEnd().split('\n');
  assert.match(lines[1], /^Would purge 26, abandon 0, quarantine 0, skip 0, keep 0 recent\.$/);
  // A count per reason, figures stripped; the child counts under its root's reason.
  assert.ok(lines.includes('  would purge 24: completed, last activity over the cutoff'), dry.stdout);
  assert.ok(lines.includes('  would purge 2: failed, last activity over the cutoff'), dry.stdout);
  // Twenty ids, three to a line, then how many more and how to see them.
  const idLines = lines.filter((l) => /^ {4}\S/.test(l));
  const shown = idLines.filter((l) => !l.startsWith('    and ')).flatMap((l) => l.trim().split(' '));
  assert.equal(shown.length, 20, dry.stdout);
  assert.equal(new Set(shown).size, 20);
  assert.ok(
    idLines.every((l) => l.length <= 100),
    'an id line fits a terminal',
  );
  assert.ok(lines.includes('    and 6 more (--verbose lists them)'), dry.stdout);
  // Each reason's ids right under it: the first 20 are all of the larger group, none of them failed.
  const firstGroup = lines.indexOf('  would purge 24: completed, last activity over the cutoff');
  assert.ok(firstGroup >= 0 && firstGroup < lines.indexOf('  would purge 2: failed, last activity over the cutoff'));
  assert.ok(
    shown.every((id) => !id.startsWith('failed-')),
    dry.stdout,
  );
  assert.match(dry.stdout, /^Would move to the trash: \d+ bytes \(\d+(\.\d)? KiB\); the trash frees it after 7 day/m);
  assert.match(dry.stdout, /^Would free: 0 bytes\.$/m);

  const verbose = await cli(dir, ['cleanup', '--hours', '24', '--verbose']);
  assert.equal(verbose.code, 0, verbose.stderr);
  for (const { id } of spec) assert.match(verbose.stdout, new RegExp(`^ {4}${id}: `, 'm'), id);
  const verboseLines = verbose.stdout.split('\n');
  const failed = verboseLines.indexOf('  purged 2: failed, last activity over the cutoff');
  assert.deepEqual(
    verboseLines.slice(failed + 1, failed + 3).map((l) => l.split(':')[0].trim()),
    ['failed-0', 'failed-1'],
    verbose.stdout,
  );
  assert.doesNotMatch(verbose.stdout, /more \(--verbose lists them\)/);
  assert.match(verbose.stdout, /^Moved to the trash: \d+ bytes \(\d+(\.\d)? KiB\) \(\d{8}-\d{6}-/m);
  assert.deepEqual(liveIds(dir), []);
});
