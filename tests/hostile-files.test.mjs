// Hostile files in a store (it arrives in cloned repositories): FIFOs, symbolic links out of the
// store, store file names used as ids, deep nesting, huge records, invalid UTF-8. The store opens only
// regular files and directories it made, and reports every other one by its path.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fixture } from './helpers/hooks.mjs';
import { cleanEnv, cli, PRE_DELEGATE, runNode, SUBAGENT_STOP, tempDir } from './helpers/run.mjs';

/** Long enough for a slow machine, short enough that a hang fails the test instead of stalling it. */
const TIMEOUT_MS = 20_000;

/** Runs a built executable; a child still running after TIMEOUT_MS is killed and reported as hung. */
function run(script, args, { cwd, env = cleanEnv(), input = '' } = {}) {
  return runNode(script, args, { cwd, env, input, timeoutMs: TIMEOUT_MS });
}

/** The CLI on `store`: hostile files must never make it hang. */
const cliInTime = (store, args) => cli(store, args, { timeoutMs: TIMEOUT_MS });

function jsonOf(result) {
  return JSON.parse(result.stdout);
}

/** The ids of the sessions in a bundle's text (one JSON value per line; a session line is {"session": ...}). */
function bundledIds(text) {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((line) => line.session)
    .map((line) => line.session.agent_id);
}

/** A project dir with a store holding the sessions `ids` (created through the CLI). */
async function storeWith(t, ids) {
  const project = tempDir(t, 'agent-session-hostile-');
  mkdirSync(path.join(project, '.claude'));
  const store = path.join(project, '.claude', 'session');
  for (const id of ids) assert.equal((await cliInTime(store, ['create', '--id', id, '--agent', 'worker'])).code, 0);
  return { project, store, outside: mkdirOutside(project) };
}

/** A directory outside the store, standing for anything of the user's a planted link could reach. */
function mkdirOutside(project) {
  const dir = path.join(project, 'outside');
  mkdirSync(dir);
  return dir;
}

/** A record's text as the store writes it, with `extra` fields spliced in as raw JSON text. */
function recordText(id, extra = '') {
  const now = new Date().toISOString();
  return (
    `{"schema_version":1,"agent_id":"${id}","agent_name":"worker","purpose":null,` +
    `"created_at":"${now}","last_updated":"${now}","phase":"initializing"${extra}}\n`
  );
}

function deepArray(levels) {
  return `${'['.repeat(levels)}${']'.repeat(levels)}`;
}

function quarantined(store, id) {
  const dir = path.join(store, '.quarantine');
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.startsWith(`${id}-`)) : [];
}

test('hostile files: a FIFO named state.json never hangs get, update, list, doctor, export or cleanup', async (t) => {
  const { store } = await storeWith(t, ['good']);
  mkdirSync(path.join(store, 'piped'));
  const fifo = path.join(store, 'piped', 'state.json');
  execFileSync('mkfifo', [fifo]);

  for (const args of [
    ['get', 'piped'],
    ['update', 'piped', '--phase', 'investigating'],
  ]) {
    const result = await cliInTime(store, args);
    assert.equal(result.code, 4, `${args[0]}: ${result.stderr}`);
    assert.match(result.stderr, /is a FIFO, not a regular file/);
    assert.ok(result.stderr.includes(fifo), `${args[0]} names the path: ${result.stderr}`);
  }
  const list = await cliInTime(store, ['list', '--json']);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(
    jsonOf(list).sessions.map((r) => r.agent_id),
    ['good'],
  );
  assert.ok(
    jsonOf(list).problems.some((p) => p.id === 'piped' && /FIFO/.test(p.message)),
    list.stdout,
  );

  const doctor = await cliInTime(store, ['doctor', '--json']);
  assert.equal(doctor.code, 1, doctor.stderr);
  const finding = jsonOf(doctor).findings.find((f) => f.subject === 'piped');
  assert.ok(
    finding && finding.severity === 'error' && /FIFO/.test(finding.message),
    JSON.stringify(jsonOf(doctor).findings),
  );

  const exported = await cliInTime(store, ['export', '--all']);
  assert.equal(exported.code, 0, exported.stderr);
  assert.deepEqual(bundledIds(exported.stdout), ['good']);
  assert.match(exported.stderr, /piped.*FIFO/);

  const cleanup = await cliInTime(store, ['cleanup', '--json']);
  assert.equal(cleanup.code, 0, cleanup.stderr);
  assert.deepEqual(
    jsonOf(cleanup).quarantined.map((q) => q.id),
    ['piped'],
  );
  const [moved] = quarantined(store, 'piped');
  assert.ok(moved, 'the FIFO record is in the quarantine');
  assert.ok(lstatSync(path.join(store, '.quarantine', moved, 'state.json')).isFIFO(), 'moved unchanged');
  assert.equal((await cliInTime(store, ['get', 'good'])).code, 0);
});

test(
  'hostile files: store file names are not valid session ids, ' + 'and a directory with one is never a session',
  async (t) => {
    const { store } = await storeWith(t, []);
    for (const id of ['audit.jsonl', 'audit.1.jsonl', 'Audit.2.JSONL']) {
      const created = await cliInTime(store, ['create', '--id', id, '--agent', 'worker']);
      assert.equal(created.code, 2, `${id}: ${created.stderr}`);
      assert.match(created.stderr, /reserved/);
    }
    assert.equal((await cliInTime(store, ['create', '--id', 'real', '--agent', 'worker'])).code, 0);
    const audit = await cliInTime(store, ['audit', '--json']);
    assert.equal(audit.code, 0, audit.stderr);
    assert.ok(readFileSync(path.join(store, 'audit.jsonl'), 'utf8').includes('"real"'), 'the audit trail still works');

    // A store from before the rule: a session directory named like a rotated audit file.
    mkdirSync(path.join(store, 'audit.3.jsonl'));
    writeFileSync(path.join(store, 'audit.3.jsonl', 'state.json'), recordText('audit.3.jsonl'));
    const list = await cliInTime(store, ['list', '--json']);
    assert.deepEqual(
      jsonOf(list).sessions.map((r) => r.agent_id),
      ['real'],
    );
    assert.deepEqual(jsonOf(list).problems, []);
    const cleanup = await cliInTime(store, ['cleanup', '--json']);
    assert.equal(cleanup.code, 0, cleanup.stderr);
    assert.deepEqual(jsonOf(cleanup).quarantined, []);
    assert.ok(existsSync(path.join(store, 'audit.3.jsonl', 'state.json')), 'left where it is');
  },
);

test(
  'writes outside the store through symlinks: none, ' +
    'no write goes outside the store through a symlinked audit.jsonl, .hooks.log or .trash',
  async (t) => {
    const { project, store, outside } = await storeWith(t, ['kept', 'doomed']);
    const target = path.join(outside, 'notes.txt');
    writeFileSync(target, 'mine\n');

    unlinkSync(path.join(store, 'audit.jsonl'));
    symlinkSync(target, path.join(store, 'audit.jsonl'));
    assert.equal((await cliInTime(store, ['update', 'kept', '--phase', 'investigating'])).code, 0);
    assert.equal(readFileSync(target, 'utf8'), 'mine\n', 'the audit append did not follow the link');
    const audit = await cliInTime(store, ['audit']);
    assert.equal(audit.code, 4, audit.stderr);
    assert.ok(
      audit.stderr.includes(path.join(store, 'audit.jsonl')) && /symbolic link/.test(audit.stderr),
      audit.stderr,
    );
    assert.ok(!audit.stderr.includes('mine'), 'nothing of the target is quoted');

    symlinkSync(target, path.join(store, '.hooks.log'));
    const hooked = await run(PRE_DELEGATE, [], {
      cwd: project,
      env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: project }),
      input: 'not json',
    });
    assert.equal(hooked.signal, null);
    assert.equal(hooked.code, 0, 'the hook fails open');
    assert.equal(hooked.stdout, '');
    assert.equal(readFileSync(target, 'utf8'), 'mine\n', 'the hook log did not follow the link');

    symlinkSync(outside, path.join(store, '.trash'));
    assert.equal((await cliInTime(store, ['finalize', 'doomed', 'completed'])).code, 0);
    const deleted = await cliInTime(store, ['delete', 'doomed']);
    assert.equal(deleted.code, 4, deleted.stderr);
    assert.ok(
      deleted.stderr.includes(path.join(store, '.trash')) && /symbolic link/.test(deleted.stderr),
      deleted.stderr,
    );
    assert.ok(existsSync(path.join(store, 'doomed', 'state.json')), 'the session stays in the store');
    assert.deepEqual(readdirSync(outside), ['notes.txt'], 'nothing moved outside the store');

    const doctor = await cliInTime(store, ['doctor', '--json']);
    assert.equal(doctor.code, 1, doctor.stderr);
    const subjects = jsonOf(doctor)
      .findings.filter((f) => f.severity === 'error')
      .map((f) => f.subject);
    for (const name of ['audit.jsonl', '.hooks.log', '.trash'])
      assert.ok(subjects.includes(path.join(store, name)), `doctor reports ${name}: ${subjects.join(', ')}`);
  },
);

test(
  'hostile files: deeply nested JSON is ECORRUPT in records and refused in hook stdin, ' + 'never a stack overflow',
  async (t) => {
    const { project, store } = await storeWith(t, ['good']);
    mkdirSync(path.join(store, 'deep'));
    writeFileSync(
      path.join(store, 'deep', 'state.json'),
      recordText('deep', `,"metadata":{"x":${deepArray(100_000)}}`),
    );

    for (const args of [
      ['get', 'deep'],
      ['update', 'deep', '--phase', 'investigating'],
      ['export', 'deep'],
    ]) {
      const result = await cliInTime(store, args);
      assert.equal(result.code, 4, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /session deep is corrupt: it is nested deeper than \d+ levels/);
    }
    const exported = await cliInTime(store, ['export', '--all']);
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(bundledIds(exported.stdout), ['good']);
    const doctor = await cliInTime(store, ['doctor', '--json']);
    assert.equal(doctor.code, 1, doctor.stderr);
    assert.ok(jsonOf(doctor).findings.some((f) => f.subject === 'deep' && f.severity === 'error'));
    const cleanup = await cliInTime(store, ['cleanup', '--json']);
    assert.equal(cleanup.code, 0, cleanup.stderr);
    assert.deepEqual(
      jsonOf(cleanup).quarantined.map((q) => q.id),
      ['deep'],
    );

    const payload = JSON.stringify({
      ...fixture('pretooluse-task'),
      tool_input: { ...fixture('pretooluse-task').tool_input, extra: 0 },
    }).replace('"extra":0', `"extra":${deepArray(100_000)}`);
    const hooked = await run(PRE_DELEGATE, [], {
      cwd: project,
      env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: project }),
      input: payload,
    });
    assert.equal(hooked.code, 0, 'the hook fails open');
    assert.equal(hooked.stdout, '');
    assert.deepEqual(
      readdirSync(store).filter((name) => !name.startsWith('.') && name !== 'audit.jsonl'),
      ['good'],
      'no session created',
    );
    assert.match(
      readFileSync(path.join(store, '.hooks.log'), 'utf8'),
      /pre_delegate .*EINVALID: stdin is nested deeper than \d+ levels/,
    );
  },
);

test(
  'hostile files: huge records, invalid UTF-8, ' + 'symlinked records and killed exports get clear answers',
  async (t) => {
    const { project, store, outside } = await storeWith(t, ['good']);
    mkdirSync(path.join(store, 'huge'));
    writeFileSync(
      path.join(store, 'huge', 'state.json'),
      recordText('huge', `,"purpose":"${'x'.repeat(40 * 1024 * 1024)}"`),
    );
    const started = Date.now();
    const update = await cliInTime(store, ['update', 'huge', '--phase', 'investigating']);
    assert.equal(update.code, 4, update.stderr);
    assert.match(update.stderr, /over the 16 MiB limit/);
    assert.doesNotMatch(update.stderr, /ELOCKED|not refreshed/);
    assert.ok(Date.now() - started < 10_000, 'refused without parsing it');

    mkdirSync(path.join(store, 'latin1'));
    const bad = Buffer.concat([
      Buffer.from(recordText('latin1', ',"summary_note":"caf').trimEnd().slice(0, -1)),
      Buffer.from([0xe9]),
      Buffer.from('"}\n'),
    ]);
    writeFileSync(path.join(store, 'latin1', 'state.json'), bad);
    for (const args of [
      ['get', 'latin1'],
      ['update', 'latin1', '--phase', 'investigating'],
    ]) {
      const result = await cliInTime(store, args);
      assert.equal(result.code, 4, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /not valid UTF-8/);
    }
    assert.deepEqual(readFileSync(path.join(store, 'latin1', 'state.json')), bad, 'never rewritten');

    const passwd = path.join(outside, 'passwd');
    writeFileSync(passwd, 'root:x:0:0:root:/root:/bin/bash\n');
    mkdirSync(path.join(store, 'linked'));
    symlinkSync(passwd, path.join(store, 'linked', 'state.json'));
    const linked = await cliInTime(store, ['get', 'linked']);
    assert.equal(linked.code, 4, linked.stderr);
    assert.match(linked.stderr, /is a symbolic link, not a regular file/);
    assert.doesNotMatch(linked.stderr, /root:x/);

    // What an export killed mid-write leaves: a temp file of a process that is gone (12 hex digits: an older
    // version's name).
    const bundle = path.join(project, 'out.bundle');
    const deadPid = 99_999_999;
    const stale = `${bundle}.${deadPid}.1.0123456789ab.tmp`;
    const live = `${bundle}.${process.pid}.7.0123456789ab.tmp`;
    const foreign = `${bundle}.backup.tmp`;
    for (const file of [stale, live, foreign]) writeFileSync(file, '{"partial":');
    const old = new Date(Date.now() - 5 * 60_000);
    for (const file of [stale, foreign]) utimesSync(file, old, old);
    const exported = await cliInTime(store, ['export', 'good', '-o', bundle]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(bundledIds(readFileSync(bundle, 'utf8')), ['good']);
    assert.ok(!existsSync(stale), "the dead export's temp file is removed");
    assert.ok(existsSync(live) && existsSync(foreign), "a live writer's temp file and files of other names stay");
  },
);

test(
  'writes outside the store through symlinks: ' +
    'none through a symlinked .locks, .index, .tmp or .claude-code either',
  async (t) => {
    for (const area of ['.locks', '.index', '.index/children', '.tmp', '.claude-code']) {
      const { project, store, outside } = await storeWith(t, ['kept']);
      const before = readdirSync(outside);
      rmSync(path.join(store, area), { recursive: true, force: true });
      symlinkSync(outside, path.join(store, area));
      const refused =
        area === '.claude-code'
          ? null
          : await cliInTime(store, ['create', '--agent', 'w', '--id', 'child', '--parent', 'kept']);
      if (refused) {
        assert.equal(refused.code, 4, `${area}: ${refused.stderr}`);
        assert.ok(
          refused.stderr.includes(path.join(store, area)) && /symbolic link/.test(refused.stderr),
          `${area}: ${refused.stderr}`,
        );
        assert.ok(!existsSync(path.join(store, 'child', 'state.json')), `${area}: nothing was created`);
      } else {
        // The hooks write their Claude Code index there: they fail open and write nothing through the link.
        const payload = fixture('pretooluse-task', { cwd: project });
        const hooked = await run(PRE_DELEGATE, [], {
          cwd: project,
          env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: project }),
          input: JSON.stringify(payload),
        });
        assert.equal(hooked.code, 0, 'the hook fails open');
        const swept = await run(SUBAGENT_STOP, ['--sweep'], {
          cwd: project,
          env: cleanEnv({ AGENT_SESSION_DIR: store }),
        });
        assert.equal(swept.signal, null);
      }
      assert.deepEqual(readdirSync(outside), before, `${area}: nothing was written outside the store`);
      const doctor = await cliInTime(store, ['doctor', '--json']);
      assert.equal(doctor.code, 1, `${area}: ${doctor.stderr}`);
    }
  },
);

test('links in the index (a cloned store) are never gone through: nothing outside is removed or emptied', async (t) => {
  const root = tempDir(t);
  const store = path.join(root, 'store');
  const outside = path.join(root, 'outside');
  mkdirSync(path.join(outside, 'src'), { recursive: true });
  writeFileSync(path.join(outside, 'src', 'main.c'), 'int main() {}\n');
  writeFileSync(path.join(outside, 'notes'), 'secret=1\n');
  writeFileSync(path.join(outside, 'dotfile'), 'mine\n');
  const ok = async (args) => {
    const result = await cli(store, args);
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
    return result;
  };
  await ok(['create', '--agent', 'x', '--id', 'P']);
  await ok(['create', '--agent', 'x', '--id', 'src', '--parent', 'P']);
  await ok(['finalize', 'src', 'completed']);
  // P's child list and one ids marker made links to the outside.
  rmSync(path.join(store, '.index', 'children', 'P'), { recursive: true });
  symlinkSync(outside, path.join(store, '.index', 'children', 'P'));
  symlinkSync(path.join(outside, 'dotfile'), path.join(store, '.index', 'ids', 'newone'));

  const doctor = await cli(store, ['doctor', '--json']);
  assert.equal(doctor.code, 1);
  const links = JSON.parse(doctor.stdout).findings.filter((f) =>
    /is a symbolic link, not an index entry/.test(f.message),
  );
  assert.deepEqual(links.map((f) => f.subject).sort(), [
    path.join(store, '.index', 'children', 'P'),
    path.join(store, '.index', 'ids', 'newone'),
  ]);
  await ok(['delete', 'src', '--force-running']);
  const refused = await cli(store, ['create', '--agent', 'x', '--id', 'notes', '--parent', 'P']);
  assert.equal(refused.code, 4);
  assert.match(refused.stderr, /children\/P is a symbolic link, not a directory the store made/);
  await ok(['create', '--agent', 'x', '--id', 'newone']);
  const restore = await cli(store, ['restore', 'src']);
  assert.equal(restore.code, 4);
  assert.match(restore.stderr, /move it out of the store \(or delete it\)/);
  // Done as the message says, the restore works.
  unlinkSync(path.join(store, '.index', 'children', 'P'));
  await ok(['restore', 'src']);
  assert.equal(JSON.parse((await ok(['get', 'src', '--json'])).stdout).parent_session_id, 'P');
  assert.equal(readFileSync(path.join(outside, 'src', 'main.c'), 'utf8'), 'int main() {}\n');
  assert.equal(readFileSync(path.join(outside, 'notes'), 'utf8'), 'secret=1\n');
  assert.equal(readFileSync(path.join(outside, 'dotfile'), 'utf8'), 'mine\n');
  assert.deepEqual(readdirSync(outside).sort(), ['dotfile', 'notes', 'src']);
});

test("a link planted at the sweep's stamp (.claude-code/last-sweep) is replaced, never written through", async (t) => {
  const { project, store, outside } = await storeWith(t, ['good']);
  const env = cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: project });
  const hook = (script, name, changes) =>
    run(script, [], { cwd: project, env, input: JSON.stringify(fixture(name, { cwd: project, ...changes })) });
  assert.equal((await hook(PRE_DELEGATE, 'pretooluse-task', { session_id: 'sess-1' })).code, 0);
  const victim = path.join(outside, 'bashrc');
  writeFileSync(victim, 'export PATH=/mine\n');
  const stamp = path.join(store, '.claude-code', 'last-sweep');
  rmSync(stamp, { force: true });
  symlinkSync(victim, stamp);
  // The link's own time says the last sweep was two days ago: this stop claims the next one.
  const old = new Date(Date.now() - 2 * 86_400_000);
  lutimesSync(stamp, old, old);
  for (const name of ['subagentstart', 'subagentstop'])
    assert.equal((await hook(SUBAGENT_STOP, name, { session_id: 'sess-1' })).code, 0);
  assert.equal(readFileSync(victim, 'utf8'), 'export PATH=/mine\n');
  assert.ok(lstatSync(stamp).isFile(), 'the link replaced by a stamp of its own');
});
