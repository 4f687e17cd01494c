// Record writes put their temp file in the store's `.tmp/` (so that cleanup finds strays with one
// readdir): a write leaves nothing behind, a crash's leftover never matters to readers and is swept
// when old, `.tmp` is never a session, and temps that earlier versions left inside session
// directories are doctor's to find and remove.
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DIST, loadLibrary, tempDir, cli } from './helpers/run.mjs';
import { build, HOUR, liveIds } from './helpers/trees.mjs';

const { writeFileAtomic } = await import(pathToFileURL(path.join(DIST, 'tools', 'store', 'atomic.js')).href);

const HOUR_AGO = new Date(Date.now() - HOUR);
const TEMP_NAME = /^(.+)\.state\.json\.\d+\.\d+\.[0-9a-f]+\.tmp$/;

/** A temp file in `.tmp/` as a writer killed before its rename leaves it. */
function strayTemp(dir, id, pid, text, date) {
  const file = path.join(dir, '.tmp', `${id}.state.json.${pid}.1.abcdef.tmp`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  if (date) utimesSync(file, date, date);
  return file;
}

function files(dir) {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

test('create and update leave state.json alone in the session directory and nothing in .tmp/', async (t) => {
  const dir = tempDir(t);
  const { Sessions } = await loadLibrary();
  const sessions = Sessions.open({ dir, cwd: dir, env: {} });
  await sessions.create({ agentName: 'w', id: 'one' });
  await sessions.update('one', { phase: 'planning', metadata: { n: 1 } });
  assert.deepEqual(files(path.join(dir, 'one')), ['state.json']);
  assert.ok(existsSync(path.join(dir, '.tmp')), 'the first write creates .tmp/');
  assert.deepEqual(files(path.join(dir, '.tmp')), []);
  // Removed behind the store's back, .tmp/ is made again by the next write.
  rmSync(path.join(dir, '.tmp'), { recursive: true });
  await sessions.update('one', { phase: 'approval' });
  assert.deepEqual(files(path.join(dir, '.tmp')), []);
  assert.equal(JSON.parse(readFileSync(path.join(dir, 'one', 'state.json'), 'utf8')).phase, 'approval');
});

test('writeFileAtomic with a temp directory: the temp is named there and removed when the write fails', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 's1', 'state.json');
  mkdirSync(path.dirname(file));
  writeFileSync(file, 'old');
  const temps = path.join(dir, '.tmp');
  let seen;
  const lost = Object.assign(new Error('lost the lock'), { code: 'ELOCKED' });
  const beforeRename = () => {
    seen = files(temps);
    throw lost;
  };
  // The lock's check fails after the fsync: the record is unchanged and the temp gone.
  await assert.rejects(
    writeFileAtomic(file, 'new', { tempDir: temps, tempName: 's1.state.json', beforeRename }),
    (err) => err === lost,
  );
  assert.equal(seen.length, 1);
  assert.equal(TEMP_NAME.exec(seen[0])?.[1], 's1');
  assert.equal(readFileSync(file, 'utf8'), 'old');
  assert.deepEqual(files(temps), []);
  // A rename that fails (the target directory is gone) removes its temp too.
  rmSync(path.dirname(file), { recursive: true });
  await assert.rejects(
    writeFileAtomic(file, 'new', { tempDir: temps, tempName: 's1.state.json' }),
    (err) => err.code === 'ENOENT',
  );
  assert.deepEqual(files(temps), []);
});

test('a stray temp in .tmp/ never matters to readers or writers, and is never a session', async (t) => {
  const dir = tempDir(t);
  await build(dir, [
    { id: 'a', phase: 'approval' },
    { id: 'b', parent: 'a', phase: 'planning' },
  ]);
  strayTemp(dir, 'a', 4242, '{"agent_id": "a", "phase": "exec');
  strayTemp(dir, 'b', 4243, '');
  // Even a `.tmp` that looks like a session directory is not one.
  writeFileSync(path.join(dir, '.tmp', 'state.json'), readFileSync(path.join(dir, 'a', 'state.json')));
  const [list, tree, exported, doctor] = await Promise.all([
    cli(dir, ['list', '--json']),
    cli(dir, ['tree', '--json']),
    cli(dir, ['export', '--all']),
    cli(dir, ['doctor', '--json']),
  ]);
  assert.deepEqual(list.json.sessions.map((s) => s.agent_id).sort(), ['a', 'b']);
  assert.deepEqual(list.json.problems, []);
  assert.deepEqual(tree.json.sessions.map((s) => s.agent_id).sort(), ['a', 'b']);
  const bundled = exported.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((line) => line.session);
  assert.deepEqual(bundled.map((line) => line.session.agent_id).sort(), ['a', 'b']);
  assert.equal(doctor.json.checked.sessions, 2);
  assert.deepEqual(doctor.json.findings, [], 'fresh temps are not reported');
  const updated = await cli(dir, ['update', 'a', '--phase', 'planning', '--json']);
  assert.equal(updated.code, 0, updated.stderr);
  assert.equal(JSON.parse(readFileSync(path.join(dir, 'a', 'state.json'), 'utf8')).phase, 'planning');
  assert.deepEqual(liveIds(dir), ['a', 'b']);
});

test('cleanup reports an old temp of .tmp/ in a dry run and removes it; a fresh one stays', async (t) => {
  const dir = tempDir(t);
  await build(dir, [{ id: 'a', phase: 'approval' }]);
  const old = strayTemp(dir, 'a', 4242, '{"half": ', HOUR_AGO);
  const fresh = strayTemp(dir, 'a', 4243, 'being written');
  const dry = await cli(dir, ['cleanup', '--dry-run', '--json']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(dry.json.swept, [{ path: old, kind: 'temp' }]);
  assert.equal(dry.json.bytes_freed, '{"half": '.length);
  assert.ok(existsSync(old));

  const real = await cli(dir, ['cleanup', '--json']);
  assert.equal(real.code, 0, real.stderr);
  assert.deepEqual(real.json.swept, [{ path: old, kind: 'temp' }]);
  assert.deepEqual(files(path.join(dir, '.tmp')), [path.basename(fresh)]);
  assert.deepEqual(liveIds(dir), ['a']);
});

test(
  'doctor finds old temps of .tmp/ and, from earlier versions, ' + 'inside session directories; --repair removes them',
  async (t) => {
    const dir = tempDir(t);
    await build(dir, [
      { id: 'a', phase: 'approval' },
      { id: 'b.2', phase: 'approval' },
    ]);
    const stray = strayTemp(dir, 'b.2', 4242, '{"half": ', HOUR_AGO);
    const legacy = path.join(dir, 'a', 'state.json.4241.3.abcdef.tmp');
    writeFileSync(legacy, '{"agent_id": "a", "pha');
    utimesSync(legacy, HOUR_AGO, HOUR_AGO);
    const freshLegacy = path.join(dir, 'a', 'state.json.4243.1.abcdef.tmp');
    writeFileSync(freshLegacy, 'being written by an older version');
    const before = readFileSync(path.join(dir, 'a', 'state.json'), 'utf8');

    // Cleanup sweeps .tmp/ only: the legacy temp is doctor's.
    const dry = await cli(dir, ['cleanup', '--dry-run', '--json']);
    assert.deepEqual(dry.json.swept, [{ path: stray, kind: 'temp' }]);

    const found = await cli(dir, ['doctor', '--json']);
    assert.equal(found.code, 1);
    const temps = found.json.findings.filter((f) => f.check === 'temp');
    assert.deepEqual(temps.map((f) => f.subject).sort(), [legacy, stray].sort());
    assert.match(temps.find((f) => f.subject === stray).message, /of session b\.2 /);
    assert.match(temps.find((f) => f.subject === legacy).message, /of session a /);
    assert.ok(temps.every((f) => f.severity === 'error' && f.repair === 'remove it'));
    assert.ok(existsSync(stray) && existsSync(legacy), 'without --repair nothing changes');

    const repaired = await cli(dir, ['doctor', '--json', '--repair']);
    assert.equal(repaired.code, 0, JSON.stringify(repaired.json));
    assert.deepEqual(repaired.json.remaining, []);
    assert.ok(!existsSync(stray) && !existsSync(legacy));
    assert.ok(existsSync(freshLegacy), 'a fresh temp may belong to a live writer');
    assert.equal(readFileSync(path.join(dir, 'a', 'state.json'), 'utf8'), before);
  },
);

test(
  'a dry run counts each state.json; ' + 'a real purge moves, and counts, whatever else its directory holds',
  async (t) => {
    const dir = tempDir(t);
    await build(dir, [{ id: 'old', outcome: 'completed', hoursAgo: 48 }]);
    const recordBytes = readFileSync(path.join(dir, 'old', 'state.json')).length;
    writeFileSync(path.join(dir, 'old', 'notes.txt'), 'twelve bytes');
    const dry = await cli(dir, ['cleanup', '--dry-run', '--json']);
    assert.equal(dry.json.bytes_to_trash, recordBytes);
    assert.equal(dry.json.bytes_freed, 0);
    // Without a backup, the same bytes are freed at once, in a dry run as in a real one.
    const dryNoBackup = await cli(dir, ['cleanup', '--dry-run', '--no-backup', '--json']);
    assert.deepEqual([dryNoBackup.json.bytes_to_trash, dryNoBackup.json.bytes_freed], [0, recordBytes]);
    const real = await cli(dir, ['cleanup', '--json']);
    assert.deepEqual(real.json.removed, ['old']);
    assert.equal(real.json.bytes_to_trash, recordBytes + 12);
    const [entry] = files(path.join(dir, '.trash'));
    assert.deepEqual(files(path.join(dir, '.trash', entry, 'sessions', 'old')), ['notes.txt', 'state.json']);
  },
);

test(
  'an unusable .tmp/ fails writes with its path, ' + 'leaves no empty session directory, and doctor names it',
  async (t) => {
    const { Sessions } = await loadLibrary();
    for (const kind of ['file', 'link']) {
      const dir = tempDir(t);
      const sessions = Sessions.open({ dir, cwd: dir, env: {} });
      await sessions.create({ agentName: 'w', id: 'kept' });
      rmSync(path.join(dir, '.tmp'), { recursive: true });
      if (kind === 'file') {
        writeFileSync(path.join(dir, '.tmp'), 'not a directory');
        await assert.rejects(sessions.create({ agentName: 'w', id: 'new' }), (err) =>
          err.message.includes(path.join(dir, '.tmp')),
        );
        assert.equal(existsSync(path.join(dir, 'new')), false, 'the failed create left no directory');
        await assert.rejects(sessions.update('kept', { phase: 'approval' }), (err) =>
          err.message.includes(path.join(dir, '.tmp')),
        );
        assert.equal(JSON.parse(readFileSync(path.join(dir, 'kept', 'state.json'), 'utf8')).phase, 'initializing');
      } else {
        const outside = tempDir(t);
        symlinkSync(outside, path.join(dir, '.tmp'));
      }
      const found = await cli(dir, ['doctor', '--json']);
      assert.equal(found.code, 1, `${kind}: ${JSON.stringify(found.json)}`);
      const finding = found.json.findings.find((f) => f.check === 'temp');
      assert.equal(finding.subject, path.join(dir, '.tmp'));
      assert.equal(finding.severity, 'error');
      assert.match(finding.message, kind === 'file' ? /is not a directory/ : /is a symbolic link/);
      const text = await cli(dir, ['doctor']);
      assert.doesNotMatch(text.stdout, /The store is healthy/);
    }
  },
);

test(
  'doctor --repair removes an old empty session directory ' + '(a create that died) under its lock; a fresh one stays',
  async (t) => {
    const dir = tempDir(t);
    await build(dir, [{ id: 'a', phase: 'approval' }]);
    mkdirSync(path.join(dir, 'dead'));
    utimesSync(path.join(dir, 'dead'), HOUR_AGO, HOUR_AGO);
    mkdirSync(path.join(dir, 'young'));
    mkdirSync(path.join(dir, 'full'));
    writeFileSync(path.join(dir, 'full', 'notes.txt'), 'kept');
    utimesSync(path.join(dir, 'full'), HOUR_AGO, HOUR_AGO);

    const found = await cli(dir, ['doctor', '--json']);
    const records = Object.fromEntries(
      found.json.findings.filter((f) => f.check === 'record').map((f) => [f.subject, f]),
    );
    assert.equal(records.dead.repair, 'remove the empty directory');
    assert.equal(records.young.repair, null, 'a fresh one may be a create in progress');
    assert.equal(records.full.repair, null, 'a directory with files is never removed');

    const repaired = await cli(dir, ['doctor', '--json', '--repair']);
    assert.ok(
      repaired.json.repairs.includes('removed the empty directory dead'),
      JSON.stringify(repaired.json.repairs),
    );
    assert.equal(existsSync(path.join(dir, 'dead')), false);
    assert.ok(existsSync(path.join(dir, 'young')) && existsSync(path.join(dir, 'full', 'notes.txt')));
    assert.ok(existsSync(path.join(dir, 'a', 'state.json')));
  },
);
