// Cleanup (--dry-run and real) and tree over stores of trees of depth 4 at 1,000 and 10,000
// sessions, and delete of 1,000- and 4,000-session subtrees; all as whole CLI processes.
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadSerializer, writeStore } from './lib/fixtures.mjs';
import { interleave, interleaveSamples, median, pairedGrowth, round, runProcess, target } from './lib/measure.mjs';

export const name = 'cleanup';
export const title = 'Cleanup, tree and delete over trees of depth 4 (whole processes)';

const BARE = new URL('./lib/read-parse.mjs', import.meta.url).pathname;
const BARE_LIST = new URL('./lib/read-parse-list.mjs', import.meta.url).pathname;
const SIZES = [1000, 10_000];

export async function run({ dist, cli, tmp, quick, env }) {
  const missing = await whatIsMissing(dist, cli, env);
  if (missing) return { skipped: missing };
  const lib = await import(pathToFileURL(path.join(dist, 'tools', 'index.js')).href);
  const serialize = await loadSerializer(dist);
  const notes = [];
  const make = async (dir, parts) => {
    for (const part of parts) writeStore(serialize, dir, part.count, { shape: 'trees', index: true, ...part });
    notes.push(...(await checkIndex(lib, dir)));
  };
  const cli$ = (args, options) => runProcess([cli, ...args], { env, ...options });
  const figures = [];
  const targets = [];

  const dirs = { 0: path.join(tmp, 'empty') };
  mkdirSync(dirs[0]);
  const dryReports = {};
  for (const size of SIZES) {
    dirs[size] = path.join(tmp, `trees-${size}`);
    await make(dirs[size], [{ count: size, prefix: 's' }]);
    dryReports[size] = JSON.parse(cli$(['cleanup', '--dry-run', '--json', '--dir', dirs[size]]).stdout);
    const rows = JSON.parse(cli$(['tree', '--json', '--dir', dirs[size]]).stdout).sessions;
    if (dryReports[size].scanned !== size || rows.length !== size)
      throw new Error(`store of ${size}: dry run scanned ${dryReports[size].scanned}, tree showed ${rows.length}`);
  }
  // Every size in the same rounds, so a burst of load on the machine hits every figure alike.
  const jobs = {};
  for (const size of [0, ...SIZES]) {
    jobs[`dry${size}`] = () => cli$(['cleanup', '--dry-run', '--json', '--dir', dirs[size]]).ms;
    jobs[`tree${size}`] = () => cli$(['tree', '--json', '--dir', dirs[size]]).ms;
    jobs[`bare${size}`] = () => runProcess([BARE, dirs[size]], { env }).ms;
  }
  jobs.list10000 = () => runProcess([BARE_LIST, dirs[10_000]], { env }).ms;
  const samples = await interleaveSamples(jobs, { runs: quick ? 3 : 9 });
  const m = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, median(values)]));
  const growth = {
    dry: pairedGrowth(samples.dry0, samples.dry1000, samples.dry10000, 1000, 10_000),
    tree: pairedGrowth(samples.tree0, samples.tree1000, samples.tree10000, 1000, 10_000),
  };
  figures.push(
    { label: 'cleanup --dry-run, empty store (start-up)', value: round(m.dry0, 1), unit: 'ms' },
    { label: 'tree, empty store (start-up)', value: round(m.tree0, 1), unit: 'ms' },
  );

  const perSession = { real: {} };
  for (const size of SIZES) {
    const dir = dirs[size];
    const dryReport = dryReports[size];
    figures.push(
      { label: `bare read+parse, ${size} sessions`, value: round(m[`bare${size}`], 1), unit: 'ms' },
      {
        label: `cleanup --dry-run, ${size} sessions (${dryReport.purged.length} to purge)`,
        value: round(m[`dry${size}`], 1),
        unit: 'ms',
      },
      { label: `cleanup --dry-run / bare at ${size}`, value: round(m[`dry${size}`] / m[`bare${size}`], 3), unit: '×' },
      { label: `tree --json, ${size} sessions`, value: round(m[`tree${size}`], 1), unit: 'ms' },
    );
    if (size === 10_000) {
      figures.push(
        {
          label: 'bare read+parse + readdir of every session dir, 10000 sessions',
          value: round(m.list10000, 1),
          unit: 'ms',
        },
        {
          label: 'cleanup --dry-run / (bare read+parse + readdir) at 10000',
          value: round(m.dry10000 / m.list10000, 3),
          unit: '×',
        },
      );
      targets.push(target('cleanup --dry-run / bare read+parse at 10,000 sessions', m.dry10000 / m.bare10000, 2));
    }

    // Real cleanup changes the store: each run gets a fresh copy (the copy is not timed). At 10,000 it
    // purges thousands of subtrees into the trash (tens of seconds): one run there keeps the bench short.
    const realRuns = quick || size >= 10_000 ? 1 : 3;
    const times = [];
    let purged;
    for (let i = 0; i < realRuns; i++) {
      const copy = `${dir}-copy`;
      copyStore(dir, copy);
      const result = cli$(['cleanup', '--json', '--dir', copy]);
      times.push(result.ms);
      purged = JSON.parse(result.stdout).purged.length;
      rmSync(copy, { recursive: true, force: true });
    }
    // A few sessions cross the 24 h cutoff between the dry run and the real runs: counts may differ slightly.
    if (Math.abs(purged - dryReport.purged.length) > size / 100)
      notes.push(`real cleanup at ${size} purged ${purged}, the dry run said ${dryReport.purged.length}`);
    perSession.real[size] = median(times) / purged;
    figures.push(
      {
        label: `cleanup (real, to the trash), ${size} sessions, ${purged} purged${realRuns === 1 ? ' (1 run)' : ''}`,
        value: round(median(times), 1),
        unit: 'ms',
      },
      {
        label: `cleanup (real) per purged session at ${size}`,
        value: round(perSession.real[size] * 1000, 1),
        unit: 'µs',
      },
    );
    rmSync(dir, { recursive: true, force: true });
  }
  for (const [key, what] of [
    ['dry', 'cleanup --dry-run'],
    ['tree', 'tree'],
  ]) {
    const g = growth[key];
    figures.push({
      label: `${what} per-session cost at 1,000 / 10,000 (minus start-up)`,
      value: `${round(g.small, 1)} / ${round(g.large, 1)}`,
      unit: 'µs',
    });
    targets.push(target(`${what}: per-session cost 10,000 / 1,000 (linear growth)`, g.growth, 1.3));
  }
  // Real cleanup runs one after another (each on its own copy), so this ratio is less robust.
  targets.push(
    target(
      'cleanup (real): per purged session 10,000 / 1,000 (linear growth)',
      perSession.real[10_000] / perSession.real[1000],
      1.3,
    ),
  );

  // Delete: a 1,000-session tree (1 + 9 + 90 + 900, finished hours ago) in a store of 10,000, and a
  // 4,000-session one (1 + 9 + 180 + 3,810): holding thousands of locks must not cost per lock per step.
  const recentDone = (i) => ({ phase: 'completed', ageHours: 2 + (i % 1000) / 100 });
  const deleteMs = {};
  for (const [size, branching] of [
    [1000, [9, 10, 10]],
    [4000, [9, 20, 22]],
  ]) {
    const dir = path.join(tmp, `delete-${size}`);
    await make(dir, [
      { count: 10_000 - size, prefix: 's' },
      { count: size, prefix: 'd', branching, kind: recentDone },
    ]);
    const root = JSON.parse(cli$(['tree', '--json', '--dir', dir]).stdout).sessions.find(
      (r) => r.depth === 0 && r.agent_id.includes('-d'),
    )?.agent_id;
    const preview = JSON.parse(cli$(['delete', root, '--dry-run', '--json', '--dir', dir]).stdout);
    if (preview.total !== size || preview.blocked.length > 0)
      throw new Error(`delete preview: ${preview.total} sessions, ${preview.blocked.length} blocked`);
    if (size === 1000) {
      const dryDelete = (
        await interleave(
          { dry: () => cli$(['delete', root, '--dry-run', '--json', '--dir', dir]).ms },
          { runs: quick ? 3 : 7 },
        )
      ).dry;
      figures.push({
        label: 'delete --dry-run of a 1,000-session subtree (store of 10,000)',
        value: round(dryDelete, 1),
        unit: 'ms',
      });
    }
    const deleteTimes = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      const copy = `${dir}-copy`;
      copyStore(dir, copy);
      const { ms, stdout } = cli$(['delete', root, '--json', '--dir', copy]);
      const removed = JSON.parse(stdout).total;
      if (removed !== size) throw new Error(`delete removed ${removed} sessions, not ${size}`);
      deleteTimes.push(ms);
      rmSync(copy, { recursive: true, force: true });
    }
    deleteMs[size] = median(deleteTimes);
    figures.push({
      label: `delete of a ${size.toLocaleString('en')}-session subtree, to the trash (store of 10,000)`,
      value: round(deleteMs[size], 1),
      unit: 'ms',
    });
    rmSync(dir, { recursive: true, force: true });
  }
  // Whole processes, start-up included (about a tenth of the 1,000 delete), which flatters the smaller.
  targets.push(
    target(
      'delete: per session of a 4,000 subtree / of a 1,000 subtree (linear growth)',
      deleteMs[4000] / 4000 / (deleteMs[1000] / 1000),
      1.3,
    ),
  );
  return { figures, targets, notes };
}

/** Which of the issue-4 pieces this build lacks, or undefined when all are there. */
async function whatIsMissing(dist, cli, env) {
  const help = runProcess([cli, '--help'], { env, expectCode: undefined }).stdout;
  const commands = ['cleanup', 'tree', 'delete'].filter((c) => !new RegExp(`agent-session ${c}\\b`).test(help));
  if (commands.length) return `the CLI has no ${commands.join(', ')} command(s)`;
  const lib = await import(pathToFileURL(path.join(dist, 'tools', 'index.js')).href);
  if (typeof lib.checkIndex !== 'function' || typeof lib.rebuildIndex !== 'function')
    return 'the library has no checkIndex/rebuildIndex';
  return undefined;
}

/** The fixture writes the children index itself; if the library disagrees, it rebuilds it. */
async function checkIndex(lib, dir) {
  const sessions = lib.Sessions.open({ dir, cwd: dir, env: {} });
  const check = await lib.checkIndex(sessions);
  if (check.missing.length + check.stale.length + check.unindexed.length === 0) return [];
  await lib.rebuildIndex(sessions);
  return [
    `the fixture's children index did not match the library's (${check.missing.length} missing, ` +
      `${check.stale.length} stale, ${check.unindexed.length} unindexed): rebuilt with rebuildIndex`,
  ];
}

function copyStore(from, to) {
  rmSync(to, { recursive: true, force: true });
  const result = spawnSync('cp', ['-a', from, to]);
  if (result.status !== 0) cpSync(from, to, { recursive: true });
}
