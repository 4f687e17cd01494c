// export / import: checksummed bundles, refusals (tampered, newer, collisions), --rename, --overwrite,
// and all-or-nothing imports (validation failures and a failure in the middle of the commit).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { faults } from './helpers/faults.mjs';
import { killWhen } from './helpers/kill.mjs';
import { CLI, cleanEnv, cli, loadLibrary, tempDir } from './helpers/run.mjs';
import { build, treeSpec } from './helpers/trees.mjs';

/** A store with a tree root → child → grandchild, plus an unrelated session. */
async function seed(dir) {
  const { Sessions } = await loadLibrary();
  const sessions = Sessions.open({ dir });
  const root = await sessions.create({ agentName: 'planner', purpose: 'ship it' });
  const child = await sessions.create({ agentName: 'worker', parent: root.agent_id });
  const grandchild = await sessions.create({ agentName: 'helper', parent: child.agent_id, metadata: { n: 1 } });
  await sessions.update(grandchild.agent_id, { phase: 'approval' });
  const other = await sessions.create({ agentName: 'other' });
  return { sessions, ids: [root.agent_id, child.agent_id, grandchild.agent_id], other: other.agent_id };
}

/** The seeded tree exported from the store `from` to `file`, and an empty store `to` beside it. */
async function exportedTree(t) {
  const tmp = tempDir(t);
  const from = path.join(tmp, 'from');
  const seeded = await seed(from);
  const file = path.join(tmp, 'bundle.json');
  assert.equal((await cli(from, ['export', seeded.ids[0], '-o', file])).code, 0);
  return { ...seeded, tmp, from, to: path.join(tmp, 'to'), file };
}

function state(dir, id) {
  return readFileSync(path.join(dir, id, 'state.json'), 'utf8');
}

/** The ids of session directories in a store. */
function sessionDirs(dir) {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => !n.startsWith('.') && !n.endsWith('.jsonl'))
        .sort()
    : [];
}

/** A bundle (format version 2: JSON Lines) as {format_version, exported_at, roots, sessions, audit, checksum}. */
function parseBundle(text) {
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  return {
    format_version: lines[0].format_version,
    exported_at: lines[0].exported_at,
    roots: lines.find((l) => l.roots).roots,
    sessions: lines.filter((l) => l.session).map((l) => l.session),
    audit: lines.filter((l) => l.audit).map((l) => l.audit),
    checksum: lines.at(-1).checksum,
  };
}

/** The text of a version 2 bundle holding `bundle`'s content, with a checksum that matches it. */
function reseal(bundle, { formatVersion = 2 } = {}) {
  const { sessions, audit, roots } = bundle;
  const header = { format: 'agent-session-bundle', format_version: formatVersion, exported_at: bundle.exported_at };
  const body = [
    JSON.stringify({ ...header, session_count: sessions.length }),
    ...sessions.map((s) => `{"session":${JSON.stringify(s)}}`),
    ...audit.map((e) => `{"audit":${JSON.stringify(e)}}`),
    JSON.stringify({ roots, session_count: sessions.length, audit_count: audit.length }),
  ]
    .map((line) => `${line}\n`)
    .join('');
  return `${body}${JSON.stringify({ checksum: `sha256:${createHash('sha256').update(body).digest('hex')}` })}\n`;
}

/** A version 1 bundle (one JSON document, as earlier versions wrote) of `bundle`'s content. */
function resealV1(bundle, formatVersion = 1) {
  const body = {
    format: 'agent-session-bundle',
    format_version: formatVersion,
    exported_at: bundle.exported_at,
    roots: bundle.roots,
    sessions: bundle.sessions,
    audit: bundle.audit,
  };
  return { ...body, checksum: `sha256:${createHash('sha256').update(JSON.stringify(body)).digest('hex')}` };
}

test('export then import round-trips a subtree byte for byte, with its audit entries', async (t) => {
  const tmp = tempDir(t);
  const from = path.join(tmp, 'from');
  const to = path.join(tmp, 'to');
  const { ids, other } = await seed(from);
  const file = path.join(tmp, 'bundle.json');
  const exported = await cli(from, ['export', ids[0], '-o', file, '--json']);
  assert.equal(exported.code, 0, exported.stderr);
  assert.equal(JSON.parse(exported.stdout).sessions, 3);

  const bundle = parseBundle(readFileSync(file, 'utf8'));
  assert.equal(bundle.format_version, 2);
  assert.match(bundle.checksum, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(
    bundle.sessions.map((s) => s.agent_id),
    ids,
  );
  assert.ok(bundle.audit.every((e) => e.ids.some((id) => ids.includes(id))));
  assert.deepEqual(
    bundle.audit.map((e) => e.action),
    ['create', 'create', 'create', 'update'],
  );

  const imported = await cli(to, ['import', file, '--json']);
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(JSON.parse(imported.stdout).imported, ids);
  assert.deepEqual(sessionDirs(to), [...ids].sort());
  for (const id of ids) assert.equal(state(to, id), state(from, id));
  assert.ok(!sessionDirs(to).includes(other));

  const trail = JSON.parse((await cli(to, ['audit', '--json'])).stdout);
  assert.deepEqual(trail.problems, []);
  assert.deepEqual(
    trail.entries.map((e) => e.action),
    ['create', 'create', 'create', 'update', 'import'],
  );
  assert.deepEqual(trail.entries.slice(0, 4), bundle.audit);
});

test('export --all covers the store; stdout carries the bundle without -o or with -o -', async (t) => {
  const tmp = tempDir(t);
  const from = path.join(tmp, 'from');
  const { ids, other } = await seed(from);
  const result = await cli(from, ['export', '--all']);
  assert.equal(result.code, 0, result.stderr);
  const bundle = parseBundle(result.stdout);
  assert.deepEqual(new Set(bundle.roots), new Set([ids[0], other]));
  assert.deepEqual(bundle.sessions.map((s) => s.agent_id).sort(), [...ids, other].sort());
  // -o - is stdout too, not a file named "-".
  const dashed = await cli(from, ['export', '--all', '-o', '-']);
  assert.equal(dashed.code, 0, dashed.stderr);
  assert.deepEqual(parseBundle(dashed.stdout).sessions, bundle.sessions);
  assert.equal(existsSync(path.join(tmp, '-')), false);
  assert.equal((await cli(from, ['export'])).code, 2);
  assert.equal((await cli(from, ['export', 'no-such-session'])).code, 1);
});

test('export -o never replaces a directory or a FIFO; import of a pipe says to save it to a file', async (t) => {
  const { tmp, from, to, file } = await exportedTree(t);
  const fifo = path.join(tmp, 'fifo');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const dir = path.join(tmp, 'dir');
  mkdirSync(dir);
  const link = path.join(tmp, 'link-to-fifo');
  symlinkSync(fifo, link);
  const before = readdirSync(tmp).sort();
  for (const target of [fifo, dir, link]) {
    const result = await cli(from, ['export', '--all', '-o', target]);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr,
      `agent-session: ${target} is not a regular file: export writes the bundle to a regular file, which it ` +
        'replaces whole\n',
    );
  }
  assert.ok(lstatSync(fifo).isFIFO() && lstatSync(dir).isDirectory() && lstatSync(link).isSymbolicLink());
  // A FIFO with no writer: refused before it is opened (opening would wait for a writer).
  const noWriter = await cli(to, ['import', fifo]);
  assert.equal(noWriter.code, 2, noWriter.stderr);
  assert.deepEqual(readdirSync(tmp).sort(), before, 'no temp file left beside them');
  // A shell pipe as the bundle: import reads its start first, which a pipe cannot give twice.
  const piped = spawnSync(
    'bash',
    ['-c', 'cat "$1" | "$2" "$3" --dir "$4" import /dev/stdin', 'sh', file, process.execPath, CLI, to],
    {
      encoding: 'utf8',
      env: cleanEnv(),
    },
  );
  assert.equal(piped.status, 2, piped.stderr);
  assert.equal(
    piped.stderr,
    'agent-session: /dev/stdin is not a regular file: ' +
      'import reads a bundle from a regular file: save it to one first\n',
  );
  assert.deepEqual(sessionDirs(to), []);
});

test('the temp file of an export killed mid-write is removed by a later export to that name once stale', async (t) => {
  const tmp = tempDir(t);
  const from = path.join(tmp, 'from');
  await build(from, treeSpec('exp', 3, 12));
  const out = path.join(tmp, 'out');
  mkdirSync(out);
  const file = path.join(out, 'bundle.json');
  const temps = () => readdirSync(out).filter((name) => name.endsWith('.tmp'));
  // Killed once its temp file is there (an export that finishes first is run again).
  let left = [];
  for (let attempt = 0; attempt < 10 && left.length === 0; attempt++) {
    const run = await killWhen(['--dir', from, 'export', '--all', '-o', file], () => temps().length > 0, 'SIGKILL');
    if (run.signal === 'SIGKILL') left = temps();
    else assert.equal(run.code, 0, run.stderr);
  }
  assert.equal(left.length, 1, 'no export was killed while writing its temp file');
  const [temp] = left;
  assert.match(temp, /^bundle\.json\.\d+\.\d+\.[0-9a-f]+\.tmp$/);
  const age = (file, ms) => utimesSync(file, new Date(Date.now() - ms), new Date(Date.now() - ms));
  // Its writer is gone, but it is under a minute old: it may be an export that has just started.
  assert.equal((await cli(from, ['export', '--all', '-o', file])).code, 0);
  assert.deepEqual(temps(), [temp]);
  // Two minutes old, its writer gone: removed. One as old whose writer runs (this process) is kept.
  age(path.join(out, temp), 120_000);
  const live = temp.replace(/^bundle\.json\.\d+\./, `bundle.json.${process.pid}.`);
  writeFileSync(path.join(out, live), readFileSync(path.join(out, temp)));
  age(path.join(out, live), 120_000);
  assert.equal((await cli(from, ['export', '--all', '-o', file])).code, 0);
  assert.deepEqual(temps(), [live], "the dead writer's temp file is removed, the live one's kept");
  // A temp file untouched for over an hour goes whoever wrote it; somebody's files of look-alike names stay.
  age(path.join(out, live), 2 * 3_600_000);
  const lookAlikes = ['bundle.json.2024.12.31.tmp', 'bundle.json.20250101.1.0.tmp', 'bundle.json.1.2.abc.tmp'];
  for (const name of lookAlikes) {
    writeFileSync(path.join(out, name), 'keep');
    age(path.join(out, name), 2 * 3_600_000);
  }
  assert.equal((await cli(from, ['export', '--all', '-o', file])).code, 0);
  assert.deepEqual(readdirSync(out).sort(), ['bundle.json', ...lookAlikes].sort());
});

/** The start of a long bundle name's temp files: its first 200 bytes (whole characters) and a hash of it. */
function tempBaseOf(name) {
  let kept = '';
  for (const char of name) {
    if (Buffer.byteLength(kept + char) > 200) break;
    kept += char;
  }
  return `${kept}.${createHash('sha256').update(name).digest('hex').slice(0, 12)}`;
}

test('a bundle name of up to 255 bytes is written; its temp files, named apart, are the only ones swept', async (t) => {
  const tmp = tempDir(t);
  const from = path.join(tmp, 'from');
  await build(from, treeSpec('long', 2, 3));
  const out = path.join(tmp, 'out');
  mkdirSync(out);
  const age = (file, ms) => utimesSync(file, new Date(Date.now() - ms), new Date(Date.now() - ms));
  const q = 'q'.repeat(222);
  // 250 bytes; 246 bytes, whose first 200 end in the middle of a character; 255 bytes.
  const names = [`${'b'.repeat(245)}.json`, `a${'\u65e5'.repeat(80)}.json`, `${q}zzz.json${'z'.repeat(24)}`];
  // Files of the user's that look like temp files of those names cut short: never swept.
  const users = [`${'b'.repeat(222)}.99999.1.abcdef.tmp`, `${q}.99999.1.abcdef.tmp`];
  for (const name of users) {
    writeFileSync(path.join(out, name), 'the user');
    age(path.join(out, name), 2 * 3_600_000);
  }
  for (const name of names) {
    assert.ok(Buffer.byteLength(name) <= 255 && Buffer.byteLength(name) > 240);
    // A temp file an export of that name killed two hours ago left.
    const stale = `${tempBaseOf(name)}.${process.pid + 1}.1.abcdef.tmp`;
    writeFileSync(path.join(out, stale), 'partial');
    age(path.join(out, stale), 2 * 3_600_000);
    const run = await cli(from, ['export', '--all', '-o', path.join(out, name)]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(parseBundle(readFileSync(path.join(out, name), 'utf8')).sessions.length, 4);
  }
  assert.deepEqual(readdirSync(out).sort(), [...names, ...users].sort(), 'the stale temp files are swept, no other');
  for (const name of users) assert.equal(readFileSync(path.join(out, name), 'utf8'), 'the user');
  // A bundle whose own name has a temp file's form is not swept by its own export, which then fails.
  const own = path.join(out, `${q}.99999.1.abcdef.tmp`);
  const failed = await cli(from, ['export', '--all', '-o', own], {
    env: { AGENT_SESSION_TEST_FAULTS: 'fail:export-record:1:EIO' },
  });
  assert.equal(failed.code, 4, failed.stderr);
  assert.equal(readFileSync(own, 'utf8'), 'the user');
  // Over 255 bytes: refused before anything is written.
  const tooLong = await cli(from, ['export', '--all', '-o', path.join(out, 'z'.repeat(256))]);
  assert.equal(tooLong.code, 2, tooLong.stderr);
  assert.match(tooLong.stderr, /a file name is at most 255 bytes, not 256/);
  assert.deepEqual(readdirSync(out).sort(), [...names, ...users].sort());
});

test('export -o: .. followed as a shell does, the store refused, no temp file after a failed rename', async (t) => {
  const tmp = tempDir(t);
  const project = path.join(tmp, 'project');
  const store = path.join(project, '.claude', 'session');
  const { ids } = await seed(store);
  const elsewhere = path.join(tmp, 'elsewhere', 'sub');
  mkdirSync(elsewhere, { recursive: true });
  symlinkSync(elsewhere, path.join(project, 'link'));
  writeFileSync(path.join(project, 'notes.txt'), 'notes\n');
  const run = (output, env) => cli(store, ['export', '--all', '-o', output], { cwd: project, env });
  // link/.. is the parent of the link's target, as for `cat > link/../x`; resolve() would say ./x.
  assert.equal((await run('link/../beside.json')).code, 0);
  assert.equal(existsSync(path.join(tmp, 'elsewhere', 'beside.json')), true);
  assert.equal(existsSync(path.join(project, 'beside.json')), false);
  // notes.txt/.. is no directory at all.
  const through = await run('notes.txt/../x.json');
  assert.equal(through.code, 4, through.stderr);
  assert.match(through.stderr, /notes\.txt\/\.\. goes through a file that is not a directory \(ENOTDIR\)\n$/);
  const nowhere = await run('nodir/x.json');
  assert.equal(nowhere.code, 4, nowhere.stderr);
  assert.match(nowhere.stderr, /: \S+\/project\/nodir does not exist \(ENOENT\)\n$/);
  // Into the store: a record or the audit trail would be replaced by the bundle.
  const audit = readFileSync(path.join(store, 'audit.jsonl'), 'utf8');
  const record = state(store, ids[0]);
  for (const inside of [
    '.claude/session/audit.jsonl',
    `.claude/session/${ids[0]}/state.json`,
    'link/../../project/.claude/session/x.json',
  ]) {
    const refused = await run(inside);
    assert.equal(refused.code, 2, `${inside}: ${refused.stderr}`);
    assert.match(refused.stderr, /is inside the store .*: write the bundle elsewhere/);
  }
  assert.equal(readFileSync(path.join(store, 'audit.jsonl'), 'utf8'), audit);
  assert.equal(state(store, ids[0]), record);
  assert.deepEqual(readdirSync(project).sort(), ['.claude', 'link', 'notes.txt']);
  // A directory made at the bundle's path while the export writes: the rename fails, and its temp file goes.
  const f = faults(t, ['pause:export-record:1']);
  const target = path.join(project, 'bundle.json');
  const running = run(target, f.env);
  await f.reached('export-record', running);
  mkdirSync(path.join(target, 'inside'), { recursive: true });
  f.release('export-record');
  const blocked = await running;
  assert.equal(blocked.code, 4, blocked.stderr);
  assert.deepEqual(
    readdirSync(project).sort(),
    ['.claude', 'bundle.json', 'link', 'notes.txt'],
    'no temp file is left',
  );
});

test('the library refuses a bundle path that names a directory, as the CLI does', async (t) => {
  const tmp = tempDir(t);
  const { sessions } = await seed(path.join(tmp, 'store'));
  const { exportSessions } = await loadLibrary();
  writeFileSync(path.join(tmp, 'notes.txt'), 'notes\n');
  for (const file of [`${tmp}/notes.txt/.`, `${tmp}/notes.txt/..`, `${tmp}/out/`]) {
    await assert.rejects(exportSessions(sessions, { all: true, file }), (err) => {
      assert.equal(err.code, 'EINVALID');
      assert.match(err.message, /(names a directory|ends with a slash): name the bundle's file/);
      return true;
    });
  }
  await assert.rejects(exportSessions(sessions, { all: true, file: '' }), (err) => {
    assert.equal(err.code, 'EINVALID');
    assert.match(err.message, /^the bundle's path is empty: name its file$/);
    return true;
  });
  assert.equal(readFileSync(path.join(tmp, 'notes.txt'), 'utf8'), 'notes\n');
  assert.deepEqual(readdirSync(tmp).sort(), ['notes.txt', 'store']);
});

test('export refuses a subtree holding a record it cannot read, and writes no file', async (t) => {
  const tmp = tempDir(t);
  const from = path.join(tmp, 'from');
  const { ids } = await seed(from);
  writeFileSync(path.join(from, ids[2], 'state.json'), '{"torn": ');
  const file = path.join(tmp, 'bundle.json');
  const result = await cli(from, ['export', ids[0], '-o', file]);
  assert.equal(result.code, 4);
  assert.match(result.stderr, /^agent-session: /);
  assert.ok(!existsSync(file));
  const all = await cli(from, ['export', '--all', '-o', file, '--json']);
  assert.equal(all.code, 0, all.stderr);
  assert.deepEqual(
    JSON.parse(all.stdout).problems.map((p) => p.id),
    [ids[2]],
  );
  assert.match(all.stderr, /^agent-session: /);
});

test('a tampered bundle and a newer format are refused, and nothing is imported', async (t) => {
  const { Sessions, importSessions } = await loadLibrary();
  const { tmp, to, file } = await exportedTree(t);
  const text = readFileSync(file, 'utf8');

  const tampered = path.join(tmp, 'tampered.json');
  writeFileSync(tampered, text.replace('"ship it"', '"ship nothing"'));
  const refused = await cli(to, ['import', tampered]);
  assert.equal(refused.code, 4);
  assert.match(refused.stderr, /^agent-session: /);

  const truncated = path.join(tmp, 'truncated.json');
  writeFileSync(truncated, text.slice(0, text.length / 2));
  assert.equal((await cli(to, ['import', truncated])).code, 4);

  const empty = path.join(tmp, 'empty.json');
  writeFileSync(empty, '\n');
  const emptied = await cli(to, ['import', empty]);
  assert.deepEqual([emptied.code, emptied.stderr], [4, 'agent-session: bundle refused: the file is empty\n']);

  const missingEnd = path.join(tmp, 'no-checksum.json');
  writeFileSync(missingEnd, text.split('\n').slice(0, -2).join('\n'));
  assert.equal((await cli(to, ['import', missingEnd])).code, 4);

  const sessions = Sessions.open({ dir: to });
  const parsed = parseBundle(text);
  const newer = reseal(parsed, { formatVersion: 3 });
  await assert.rejects(importSessions(sessions, { text: newer }), { code: 'EVERSION' });
  await assert.rejects(importSessions(sessions, { bundle: resealV1(parsed, 3) }), { code: 'EVERSION' });
  parsed.sessions[1].schema_version = 99;
  await assert.rejects(importSessions(sessions, { text: reseal(parsed) }), { code: 'EVERSION' });
  await assert.rejects(importSessions(sessions, { bundle: resealV1(parsed) }), { code: 'EVERSION' });
  assert.deepEqual(sessionDirs(to), []);
});

test('collisions are refused; --rename gives new ids and rewrites parent links; --overwrite backs up', async (t) => {
  const { from, sessions, ids, file } = await exportedTree(t);
  // The store changes after the export: --overwrite must keep this version in its backup.
  await sessions.update(ids[2], { metadata: { n: 2 } });
  const changed = state(from, ids[2]);

  const collision = await cli(from, ['import', file]);
  assert.equal(collision.code, 3);
  assert.equal(state(from, ids[2]), changed);

  const renamed = JSON.parse((await cli(from, ['import', file, '--rename', '--json'])).stdout);
  const map = renamed.renamed;
  assert.deepEqual(Object.keys(map).sort(), [...ids].sort());
  const copies = ids.map((id) => JSON.parse(state(from, map[id])));
  assert.equal(copies[0].parent_session_id, null);
  assert.equal(copies[1].parent_session_id, map[ids[0]]);
  assert.equal(copies[2].parent_session_id, map[ids[1]]);
  assert.equal(copies[2].agent_id, map[ids[2]]);
  assert.equal(state(from, ids[2]), changed);

  const over = await cli(from, ['import', file, '--overwrite', '--json']);
  assert.equal(over.code, 0, over.stderr);
  const result = JSON.parse(over.stdout);
  assert.deepEqual(result.replaced, ids);
  assert.equal(JSON.parse(state(from, ids[2])).metadata.n, 1);
  assert.equal(readFileSync(path.join(result.backup, ids[2], 'state.json'), 'utf8'), changed);
  assert.equal((await cli(from, ['import', file, '--overwrite', '--rename'])).code, 2);
});

test('a bundle with one bad record imports nothing', async (t) => {
  const { tmp, to, file } = await exportedTree(t);
  const bundle = parseBundle(readFileSync(file, 'utf8'));
  bundle.sessions[2].phase = 'dancing';
  const bad = path.join(tmp, 'bad.json');
  writeFileSync(bad, reseal(bundle));
  const result = await cli(to, ['import', bad]);
  assert.equal(result.code, 4);
  assert.deepEqual(sessionDirs(to), []);
  assert.deepEqual(readdirSync(path.join(to, '.importing')), [], 'its staging is dropped');
});

test('a version 1 bundle (one JSON document) still imports, byte for byte, with its audit entries', async (t) => {
  const { tmp, from, to, ids, file } = await exportedTree(t);
  const bundle = parseBundle(readFileSync(file, 'utf8'));
  const old = path.join(tmp, 'v1.json');
  writeFileSync(old, `${JSON.stringify(resealV1(bundle), null, 2)}\n`);
  const result = await cli(to, ['import', old, '--json']);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout).imported, ids);
  for (const id of ids) assert.equal(state(to, id), state(from, id));
  const trail = JSON.parse((await cli(to, ['audit', '--json'])).stdout);
  assert.deepEqual(trail.entries.slice(0, bundle.audit.length), bundle.audit);
  const tampered = path.join(tmp, 'v1-tampered.json');
  writeFileSync(tampered, readFileSync(old, 'utf8').replace('"ship it"', '"ship nothing"'));
  assert.equal((await cli(path.join(tmp, 'other'), ['import', tampered])).code, 4);
});

test('a failure in the middle of the commit rolls every session back', async (t) => {
  const { to, ids, file } = await exportedTree(t);
  // A plain file where the children index (tools/store/children-index.ts) keeps the child's list:
  // indexing the grandchild fails after the root and the child were placed.
  mkdirSync(path.join(to, '.index', 'children'), { recursive: true });
  writeFileSync(path.join(to, '.index', 'children', ids[1]), 'in the way');
  const result = await cli(to, ['import', file]);
  assert.equal(result.code, 4, result.stderr);
  assert.ok(existsSync(path.join(to, '.index', 'ids', ids[1])), 'the commit had placed the child before failing');
  assert.deepEqual(sessionDirs(to), []);
  assert.deepEqual(readdirSync(path.join(to, '.importing')), []);
  assert.ok(!existsSync(path.join(to, 'audit.jsonl')), 'a failed import records nothing');
});

test('a failure after a first batch was placed and its locks let go of rolls every batch back', async (t) => {
  const tmp = tempDir(t);
  const from = path.join(tmp, 'from');
  // 91 sessions: more than one batch of the commit (64), deepest first.
  const spec = treeSpec('batched', 3, 9);
  await build(from, spec);
  const file = path.join(tmp, 'bundle.json');
  assert.equal((await cli(from, ['export', 'batched', '-o', file])).code, 0);
  const to = path.join(tmp, 'to');
  // The second batch fails as it starts to take its locks, after the first batch's sessions went live.
  const env = { AGENT_SESSION_TEST_FAULTS: 'fail:session-locks:2:ENOSPC' };
  const result = await cli(to, ['import', file], { env });
  assert.equal(result.code, 4, result.stderr);
  assert.deepEqual(sessionDirs(to), []);
  assert.deepEqual(readdirSync(path.join(to, '.importing')), []);
  assert.deepEqual(readdirSync(path.join(to, '.locks')), []);
  assert.ok(!existsSync(path.join(to, 'audit.jsonl')), 'a failed import records nothing');
  assert.equal((await cli(to, ['import', file])).code, 0);
  assert.deepEqual(sessionDirs(to), spec.map((s) => s.id).sort());
});

/** What an importer killed while committing leaves: ids[0] placed, ids[1] still staged, the manifest `committing`. */
function killedMidCommit(from, to, ids) {
  const op = '20261122-000000-deadbeef';
  const opDir = path.join(to, '.importing', op);
  mkdirSync(path.join(opDir, 'sessions', ids[1]), { recursive: true });
  writeFileSync(path.join(opDir, 'sessions', ids[1], 'state.json'), state(from, ids[1]));
  mkdirSync(path.join(to, ids[0]), { recursive: true });
  writeFileSync(path.join(to, ids[0], 'state.json'), state(from, ids[0]));
  writeFileSync(
    path.join(opDir, 'manifest.json'),
    JSON.stringify({ op, ids: ids.slice(0, 2), replaced: [], status: 'committing' }),
  );
  return { op, opDir };
}

test('an import interrupted mid-commit is finished by the next import, and its entry written', async (t) => {
  const { Sessions, importSessions } = await loadLibrary();
  const { tmp, from, to, ids, other } = await exportedTree(t);
  const { op, opDir } = killedMidCommit(from, to, ids);

  const otherFile = path.join(tmp, 'other.json');
  assert.equal((await cli(from, ['export', other, '-o', otherFile])).code, 0);
  const result = await importSessions(Sessions.open({ dir: to }), { file: otherFile });
  assert.deepEqual(result.recovered, [op]);
  assert.deepEqual(sessionDirs(to), [ids[0], ids[1], other].sort());
  assert.equal(state(to, ids[1]), state(from, ids[1]), 'the staged session placed byte for byte');
  assert.ok(!existsSync(opDir));
  const entries = readFileSync(path.join(to, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const finished = entries.find((e) => e.action === 'import' && e.details.op === op);
  assert.deepEqual(finished?.ids, ids.slice(0, 2));
  assert.equal(finished.details.recovered, true);
});

test('a session an interrupted import placed keeps what was written to it after the kill', async (t) => {
  const { from, to, ids } = await exportedTree(t);
  // Once the killed importer's locks are stale, others write to ids[0] and give it a child.
  const { opDir } = killedMidCommit(from, to, ids);
  const child = await cli(to, ['create', '--agent', 'late', '--parent', ids[0], '--json']);
  assert.equal(child.code, 0, child.stderr);
  const repaired = await cli(to, ['doctor', '--repair', '--json']);
  assert.ok([0, 1].includes(repaired.code), repaired.stderr);
  assert.ok(sessionDirs(to).includes(ids[0]), 'the parent an acknowledged child was created under is gone');
  assert.ok(sessionDirs(to).includes(child.json.agent_id));
  assert.ok(sessionDirs(to).includes(ids[1]));
  assert.ok(!existsSync(opDir));
});

/** The import under way in `dir`: its op, the status in its manifest and how many sessions are staged. */
function importUnderWay(dir) {
  try {
    const [op] = readdirSync(path.join(dir, '.importing'));
    if (!op) return undefined;
    const status = JSON.parse(readFileSync(path.join(dir, '.importing', op, 'manifest.json'), 'utf8')).status;
    const staged = path.join(dir, '.importing', op, 'sessions');
    return { op, status, staged: existsSync(staged) ? readdirSync(staged).length : 0 };
  } catch {
    return undefined; // not started, finished, or a file being renamed into place
  }
}

test(
  'imports killed at random moments leave, after recovery, all of the bundle or none of it',
  { timeout: 120_000 },
  async (t) => {
    const { Sessions, doctor } = await loadLibrary();
    const tmp = tempDir(t);
    const from = path.join(tmp, 'from');
    const sessions = Sessions.open({ dir: from });
    const root = await sessions.create({ agentName: 'root' });
    for (let i = 0; i < 20; i++) {
      const child = await sessions.create({ agentName: 'child', parent: root.agent_id });
      for (let j = 0; j < 4; j++) await sessions.create({ agentName: 'grandchild', parent: child.agent_id });
    }
    const ids = sessionDirs(from);
    const file = path.join(tmp, 'bundle.json');
    assert.equal((await cli(from, ['export', root.agent_id, '-o', file])).code, 0);
    const original = snapshotAll(from, ids);
    // How far an import has got: sessions staged, then sessions placed, then done; a kill is aimed at a
    // random point of staging, of placing, of either, and at the end.
    const n = ids.length;
    const progress = (s) => ({ staged: s.staged, committing: 2 * n - s.staged, done: 2 * n + 1 })[s.status] ?? 0;
    const between = (low, high) => low + Math.floor(Math.random() * (high - low));
    const targets = [between(1, n), between(n + 1, 2 * n), between(1, 2 * n), 2 * n + 1];
    for (const [i, target] of targets.entries()) {
      const to = path.join(tmp, `run${i}`);
      const what = `run ${i} (killed at ${target} of ${2 * n + 1})`;
      // Each kill is aimed with a pause (tools/store/fault-points.ts) at the record being staged or placed, or
      // after the manifest says done: a poll alone misses steps of a few milliseconds on a loaded machine.
      const [point, visit] =
        target <= n ? ['import-stage', target] : target <= 2 * n ? ['import-place', target - n] : ['import-done', 1];
      const f = faults(t, [`pause:${point}:${visit}`]);
      const reached = () => existsSync(path.join(f.env.AGENT_SESSION_TEST_FAULTS_DIR, `${point}.reached`));
      const run = await killWhen(['--dir', to, 'import', file], () => reached() && importUnderWay(to), 'SIGKILL', {
        env: f.env,
      });
      assert.equal(run.signal, 'SIGKILL', `${what}: the import ended by itself (${run.code}) ${run.stderr}`);
      // The kill landed during the import: its staging is still there, as far as it was seen or further.
      const left = importUnderWay(to);
      assert.equal(left?.op, run.seen.op, `${what}: no import was under way when it was killed`);
      assert.ok(progress(left) >= progress(run.seen), `${what}: went back from ${progress(run.seen)}`);
      const report = await doctor(Sessions.open({ dir: to }), { repair: true });
      assert.equal(report.healthy, true, JSON.stringify(report.remaining));
      const present = sessionDirs(to);
      // An import that had begun to commit is finished by the recovery; an earlier one is undone.
      if (left.status === 'done' || left.status === 'committing')
        assert.deepEqual(snapshotAll(to, present), original, `${what}: not all of it`);
      else assert.deepEqual(present, [], `${what}: a partial import survived`);
      assert.deepEqual(existsSync(path.join(to, '.importing')) ? readdirSync(path.join(to, '.importing')) : [], []);
    }
  },
);

function snapshotAll(dir, ids) {
  return Object.fromEntries(ids.map((id) => [id, state(dir, id)]));
}

test('export --all names the sessions removed while it ran, and exits 0 with the rest', async (t) => {
  const tmp = tempDir(t);
  const store = path.join(tmp, 'store');
  const { other } = await seed(store);
  const file = path.join(tmp, 'all.json');
  const f = faults(t, ['pause:export-record:1']);
  const running = cli(store, ['export', '--all', '-o', file, '--json'], { env: f.env });
  await f.reached('export-record', running);
  // Deleted while the export waits before its first record.
  const last = other;
  assert.equal((await cli(store, ['delete', last, '--force'])).code, 0);
  f.release('export-record');
  const result = await running;
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout).removed_meanwhile, [last]);
  assert.equal(JSON.parse(result.stdout).sessions, 3);
  assert.match(result.stderr, new RegExp(`1 session\\(s\\) were removed while the export ran .*: ${last}\\n`));
});
