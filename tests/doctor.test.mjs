// doctor: each check finds its problem; --repair fixes what it can without losing anything, and a
// second run is clean; exit codes 0 (healthy or repaired), 1 (problems remain), 4 (could not run).
import assert from 'node:assert/strict';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { CLI, cleanEnv, cli, loadLibrary, tempDir } from './helpers/run.mjs';
import { writeFinished } from './helpers/trees.mjs';

const HOUR_AGO = new Date(Date.now() - 3_600_000);

async function doctor(dir, repair = false) {
  const result = await cli(dir, ['doctor', '--json', ...(repair ? ['--repair'] : [])]);
  assert.ok(result.code === 0 || result.code === 1, `doctor failed to run: ${result.code} ${result.stderr}`);
  return { code: result.code, report: JSON.parse(result.stdout) };
}

/** root → child → grandchild, all final (so that delete does not refuse them). */
async function seed(dir) {
  const { Sessions } = await loadLibrary();
  const sessions = Sessions.open({ dir });
  const root = await sessions.create({ agentName: 'planner' });
  const child = await sessions.create({ agentName: 'worker', parent: root.agent_id });
  const grandchild = await sessions.create({ agentName: 'helper', parent: child.agent_id });
  for (const s of [grandchild, child, root]) await sessions.finalize(s.agent_id, 'completed');
  return { sessions, ids: [root.agent_id, child.agent_id, grandchild.agent_id] };
}

function snapshot(dir, ids) {
  return Object.fromEntries(ids.map((id) => [id, readFileSync(path.join(dir, id, 'state.json'), 'utf8')]));
}

function errors(report, check) {
  return report.findings.filter((f) => f.severity === 'error' && (check === undefined || f.check === check));
}

test('a healthy store: exit 0 and no findings', async (t) => {
  const dir = tempDir(t);
  await seed(dir);
  const { code, report } = await doctor(dir);
  assert.equal(code, 0);
  assert.equal(report.healthy, true);
  assert.deepEqual(report.findings, []);
  assert.equal(report.checked.sessions, 3);
  assert.equal(report.checked.audit_entries, 6);
});

test(
  'corrupt records, strays, stale locks, ' + 'a broken index and bad audit lines are found, then repaired without loss',
  async (t) => {
    const dir = tempDir(t);
    const { sessions, ids } = await seed(dir);
    const corrupt = '{"agent_id": "broken", "phase": ';
    mkdirSync(path.join(dir, 'broken'));
    writeFileSync(path.join(dir, 'broken', 'state.json'), corrupt);
    const temp = path.join(dir, '.tmp', `${ids[1]}.state.json.4242.1.abcdef.tmp`);
    writeFileSync(temp, '{"half": ');
    utimesSync(temp, HOUR_AGO, HOUR_AGO);
    const lock = path.join(dir, '.locks', `${ids[0]}.lock`);
    mkdirSync(lock, { recursive: true });
    utimesSync(lock, HOUR_AGO, HOUR_AGO);
    const removing = path.join(dir, '.removing', 'leftover');
    mkdirSync(removing, { recursive: true });
    utimesSync(removing, HOUR_AGO, HOUR_AGO);
    // The index forgets the grandchild under its parent (tools/store/children-index.ts layout).
    rmSync(path.join(dir, '.index', 'children', ids[1], ids[2]));
    const auditFile = path.join(dir, 'audit.jsonl');
    const lines = readFileSync(auditFile, 'utf8').split('\n').filter(Boolean);
    const edited = lines[0].replace('"planner"', '"plotter"');
    writeFileSync(auditFile, `${[edited, ...lines.slice(1)].join('\n')}\n`);
    appendFileSync(auditFile, '{"v":1,"time":"2026-');
    const before = snapshot(dir, ids);

    const found = await doctor(dir);
    assert.equal(found.code, 1);
    assert.equal(found.report.healthy, false);
    const subjects = (check) => errors(found.report, check).map((f) => f.subject);
    assert.deepEqual(subjects('record'), ['broken']);
    assert.deepEqual(subjects('index'), [ids[2]]);
    assert.deepEqual(subjects('temp'), [temp]);
    assert.deepEqual(subjects('lock'), [lock]);
    assert.deepEqual(subjects('removing'), [removing]);
    assert.deepEqual(subjects('audit'), ['audit.jsonl:1', `audit.jsonl:${lines.length + 1}`]);
    assert.ok(existsSync(temp) && existsSync(lock), 'without --repair nothing changes');

    const repaired = await doctor(dir, true);
    assert.equal(repaired.code, 0, JSON.stringify(repaired.report.remaining));
    assert.equal(repaired.report.repairs.length, 6, repaired.report.repairs.join('\n'));
    assert.deepEqual(repaired.report.remaining, []);

    const again = await doctor(dir);
    assert.equal(again.code, 0);
    assert.deepEqual(errors(again.report), []);
    // Nothing lost: the sessions are unchanged, the corrupt record and the bad lines are kept aside.
    assert.deepEqual(snapshot(dir, ids), before);
    const quarantine = readdirSync(path.join(dir, '.quarantine'));
    const kept = quarantine.find((n) => n.startsWith('broken-'));
    assert.equal(readFileSync(path.join(dir, '.quarantine', kept, 'state.json'), 'utf8'), corrupt);
    const audit = quarantine.find((n) => n.startsWith('.audit-'));
    assert.deepEqual(
      readFileSync(path.join(dir, '.quarantine', audit), 'utf8')
        .split('\n')
        .filter(Boolean),
      [edited, '{"v":1,"time":"2026-'],
    );
    assert.ok(!existsSync(temp) && !existsSync(lock) && !existsSync(removing));
    const children = await cli(dir, ['children', ids[1], '--json']);
    assert.equal(children.code, 0, children.stderr);
    assert.match(children.stdout, new RegExp(ids[2]));

    // The torn line was ended: the next change is recorded on a whole line of its own.
    await sessions.create({ agentName: 'after' });
    const trail = await cli(dir, ['audit', '--json', '--action', 'create']);
    const { entries, problems, acknowledged } = JSON.parse(trail.stdout);
    assert.deepEqual(problems, []);
    assert.equal(acknowledged, 2);
    assert.equal(entries.at(-1).details.agent_name, 'after');
  },
);

test('orphans are warnings; a parent cycle is an error that --repair cannot fix (exit 1)', async (t) => {
  const dir = tempDir(t);
  const { ids } = await seed(dir);
  const { Sessions } = await loadLibrary();
  const sessions = Sessions.open({ dir });
  const gone = await sessions.create({ agentName: 'gone' });
  const orphan = await sessions.create({ agentName: 'x', parent: gone.agent_id });
  rmSync(path.join(dir, gone.agent_id), { recursive: true });
  const orphanOnly = await doctor(dir);
  assert.equal(orphanOnly.code, 0);
  assert.deepEqual(
    orphanOnly.report.findings.filter((f) => f.check === 'parent').map((f) => [f.severity, f.subject]),
    [['warning', orphan.agent_id]],
  );

  const rootFile = path.join(dir, ids[0], 'state.json');
  writeFileSync(
    rootFile,
    JSON.stringify({ ...JSON.parse(readFileSync(rootFile, 'utf8')), parent_session_id: ids[2] }, null, 2),
  );
  const cycle = await doctor(dir, true);
  assert.equal(cycle.code, 1);
  assert.deepEqual(
    errors(cycle.report, 'parent')
      .map((f) => f.subject)
      .sort(),
    [...ids].sort(),
  );
  assert.ok(cycle.report.remaining.some((f) => f.check === 'parent'));
});

test('an interrupted delete in the trash is rolled back; a complete entry missing a session is reported', async (t) => {
  const dir = tempDir(t);
  const { ids } = await seed(dir);
  const before = snapshot(dir, ids);
  const deleted = await cli(dir, ['delete', ids[0], '--json']);
  assert.equal(deleted.code, 0, deleted.stderr);
  const [entry] = readdirSync(path.join(dir, '.trash'));
  const manifestFile = path.join(dir, '.trash', entry, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  // What a delete killed half-way leaves: an entry still `moving`. Its lock is left too, dated an
  // hour ahead (the clock was stepped back since): nobody holds it.
  writeFileSync(manifestFile, JSON.stringify({ ...manifest, status: 'moving' }));
  const entryLock = path.join(dir, '.locks', `.trash-${entry}.lock`);
  mkdirSync(entryLock);
  const hourAhead = new Date(Date.now() + 3_600_000);
  utimesSync(entryLock, hourAhead, hourAhead);
  const found = await doctor(dir);
  assert.equal(found.code, 1);
  assert.deepEqual(
    errors(found.report, 'trash').map((f) => f.subject),
    [`.trash/${entry}`],
  );
  const repaired = await doctor(dir, true);
  assert.equal(repaired.code, 0, JSON.stringify(repaired.report));
  assert.deepEqual(snapshot(dir, ids), before);

  assert.equal((await cli(dir, ['delete', ids[1], '--json'])).code, 0);
  const second = readdirSync(path.join(dir, '.trash')).find((e) => e.endsWith(ids[1]));
  rmSync(path.join(dir, '.trash', second, 'sessions', ids[2]), { recursive: true });
  const missing = await doctor(dir, true);
  assert.equal(missing.code, 1);
  assert.deepEqual(
    errors(missing.report, 'trash').map((f) => [f.subject, f.repair]),
    [[`.trash/${second}`, null]],
  );
});

test('an interrupted import is found and finished', async (t) => {
  const dir = tempDir(t);
  const { ids } = await seed(dir);
  const op = '20261122-000000-0badf00d';
  const record = JSON.parse(readFileSync(path.join(dir, ids[0], 'state.json'), 'utf8'));
  // Killed while committing: one session placed, the other still staged.
  mkdirSync(path.join(dir, '.importing', op, 'sessions', 'staged-one'), { recursive: true });
  writeFileSync(
    path.join(dir, '.importing', op, 'sessions', 'staged-one', 'state.json'),
    JSON.stringify({ ...record, agent_id: 'staged-one' }, null, 2),
  );
  mkdirSync(path.join(dir, 'placed-one'));
  writeFileSync(
    path.join(dir, 'placed-one', 'state.json'),
    JSON.stringify({ ...record, agent_id: 'placed-one' }, null, 2),
  );
  writeFileSync(
    path.join(dir, '.importing', op, 'manifest.json'),
    JSON.stringify({ op, ids: ['placed-one', 'staged-one'], replaced: [], status: 'committing' }),
  );
  const found = await doctor(dir);
  assert.equal(found.code, 1);
  assert.equal(errors(found.report, 'import').length, 1);
  const repaired = await doctor(dir, true);
  assert.equal(repaired.code, 0, JSON.stringify(repaired.report));
  assert.ok(existsSync(path.join(dir, 'placed-one', 'state.json')));
  assert.equal(JSON.parse(readFileSync(path.join(dir, 'staged-one', 'state.json'), 'utf8')).agent_id, 'staged-one');
  assert.ok(!existsSync(path.join(dir, '.importing', op)));
  const audit = readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(audit.find((e) => e.action === 'import' && e.details.op === op)?.ids, ['placed-one', 'staged-one']);
});

test('a store that cannot be read: exit 4', async (t) => {
  const file = path.join(tempDir(t), 'not-a-dir');
  writeFileSync(file, '');
  const result = await cli(file, ['doctor']);
  assert.equal(result.code, 4);
  assert.match(result.stderr, /^agent-session: /);
});

test(
  'a stale lock with the stale guard of its takeover, ' + 'and a lock dated in the future: found, then removed',
  async (t) => {
    const dir = tempDir(t);
    const { ids } = await seed(dir);
    const lock = path.join(dir, '.locks', `${ids[0]}.lock`);
    const guard = `${lock}.takeover`;
    const future = path.join(dir, '.locks', `${ids[1]}.lock`);
    mkdirSync(guard, { recursive: true });
    mkdirSync(lock);
    mkdirSync(future);
    for (const dated of [lock, guard]) utimesSync(dated, HOUR_AGO, HOUR_AGO);
    const hourAhead = new Date(Date.now() + 3_600_000);
    utimesSync(future, hourAhead, hourAhead);
    const found = await doctor(dir);
    assert.equal(found.code, 1);
    assert.deepEqual(
      errors(found.report, 'lock')
        .map((f) => f.subject)
        .sort(),
      [future, guard, lock].sort(),
    );
    const repaired = await doctor(dir, true);
    assert.equal(repaired.code, 0, JSON.stringify(repaired.report.remaining));
    // Taking the lock over removes its guard too: that one is reported removed, not "in use again".
    assert.deepEqual(
      repaired.report.repairs.slice().sort(),
      [`removed ${future}`, `removed ${guard}`, `removed ${lock}`].sort(),
    );
    assert.deepEqual(readdirSync(path.join(dir, '.locks')), []);
  },
);

test('a bad config is a finding (exit 1), not a reason to stop: the store is checked with the defaults', async (t) => {
  const dir = tempDir(t);
  await seed(dir);
  const config = path.join(tempDir(t), 'agent-session.json');
  writeFileSync(config, '{"resume_window_minutes": "2h"}\n');
  const env = { AGENT_SESSION_CONFIG: config };
  const result = await cli(dir, ['doctor', '--json'], { env });
  assert.equal(result.code, 1, result.stderr);
  const report = JSON.parse(result.stdout);
  assert.equal(report.healthy, false);
  assert.equal(report.checked.sessions, 3);
  assert.deepEqual(
    errors(report).map((f) => [f.check, f.subject]),
    [['config', config]],
  );
  assert.match(errors(report)[0].message, /resume_window_minutes/);
  const repaired = await cli(dir, ['doctor', '--repair', '--json'], { env });
  assert.equal(repaired.code, 1);
  assert.deepEqual(
    JSON.parse(repaired.stdout).remaining.map((f) => f.check),
    ['config'],
  );
  const text = await cli(dir, ['doctor'], { env });
  assert.match(text.stdout, /^ERROR +config +.*agent-session\.json: .*resume_window_minutes/m);
  assert.match(text.stdout, /Problems remain\.\n$/);
});

test('hook failures of the last day are warnings, one per code; older ones are left out', async (t) => {
  const dir = tempDir(t);
  await seed(dir);
  const at = (ms) => new Date(Date.now() - ms).toISOString();
  appendFileSync(
    path.join(dir, '.hooks.log'),
    [
      `${at(2 * 86_400_000)} pre_delegate PreToolUse pid=1 EIO: two days ago`,
      `${at(3_600_000)} pre_delegate PreToolUse pid=2 EINVALID: resume_window_minutes in x must be a number`,
      `${at(60_000)} subagent_stop SubagentStop pid=3 EINVALID: still wrong`,
      `${at(120_000)} subagent_stop SubagentStart pid=4 ELOCKED: session a is locked`,
      '',
    ].join('\n'),
  );
  const { code, report } = await doctor(dir);
  assert.equal(code, 0);
  assert.equal(report.healthy, true);
  const found = report.findings.filter((f) => f.check === 'hook-log');
  assert.deepEqual(
    found.map((f) => [f.severity, f.subject]),
    [
      ['warning', '.hooks.log'],
      ['warning', '.hooks.log'],
    ],
  );
  assert.match(found[0].message, /^2 hook run\(s\) failed open with EINVALID in the last day, the last at \S+ /);
  assert.match(found[0].message, /\(subagent_stop SubagentStop\): still wrong$/);
  assert.match(found[1].message, /^1 hook run\(s\) failed open with ELOCKED .*: session a is locked$/);
  const text = await cli(dir, ['doctor']);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /The store is healthy; 2 warning\(s\) above\.\n$/);
});

test('a store that does not exist: an error finding (exit 1); with --repair a warning (exit 0)', async (t) => {
  const dir = path.join(tempDir(t), 'none');
  const { code, report } = await doctor(dir);
  assert.equal(code, 1);
  assert.deepEqual([report.healthy, report.store], [false, { dir, exists: false }]);
  assert.deepEqual(
    report.findings.map((f) => [f.check, f.severity, f.subject]),
    [['store', 'error', dir]],
  );
  const repaired = await doctor(dir, true);
  assert.equal(repaired.code, 0);
  assert.deepEqual(
    repaired.report.findings.map((f) => f.severity),
    ['warning'],
  );
  assert.equal(existsSync(dir), false);
});

test('on a terminal, doctor of a large store draws a progress bar on stderr; piped, nothing', async (t) => {
  const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
  if (script.status !== 0) return t.skip('no util-linux script(1) to provide a terminal');
  const dir = tempDir(t);
  writeFinished(dir, 600, HOUR_AGO.toISOString());
  const piped = await cli(dir, ['doctor', '--json']);
  assert.equal(piped.stderr, '');
  const out = path.join(tempDir(t), 'out.json');
  const command =
    `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} --dir ${JSON.stringify(dir)} ` +
    `doctor --json > ${JSON.stringify(out)}`;
  const tty = spawnSync('script', ['-q', '-e', '-c', command, '/dev/null'], {
    cwd: dir,
    encoding: 'utf8',
    env: cleanEnv(),
  });
  assert.match(tty.stdout, /doctor \[#+\] 600\/600/);
  // The report on stdout is whole and the same as when piped.
  assert.equal(readFileSync(out, 'utf8'), piped.stdout);
});
