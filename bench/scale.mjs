// The bulk commands at 10,000 and 100,000 sessions (trees of depth 4), each as a whole process against
// its floor, interleaved in the same rounds: export --all, import, delete of a 1,000-session subtree,
// restore of it, cleanup of everything, doctor, list, tree and audit. The floors of the first five are
// bench/floors/<cmd>.mjs (plain node:fs doing the same durable file work); those of the read commands
// are lib/read-parse*.mjs (reading and parsing the same files). A command whose floor is missing is skipped.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadAuditFormatter, loadSerializer, writeStoreAsync } from './lib/fixtures.mjs';
import { median, round, runMeasured, target } from './lib/measure.mjs';

export const name = 'scale';
export const title = 'Bulk commands at 10,000 and 100,000 sessions against their floors (whole processes)';

const LIB = new URL('./lib/', import.meta.url).pathname;
const FLOORS = new URL('./floors/', import.meta.url).pathname;
export const DEFAULT_SIZES = [10_000, 100_000];
/** The subtree that delete and restore work on: 1 + 9 + 90 + 900 sessions. */
const SUBTREE = 1000;
const HOUR = 3_600_000;

/** Each read command and its floor; `check` looks at one output, untimed, so the timing measures real work. */
const READS = {
  list: {
    args: (store) => ['list', '--json', '--dir', store],
    floor: (store) => [`${LIB}read-parse.mjs`, store],
    check: (out, size) => JSON.parse(out).sessions.length === size,
  },
  tree: {
    args: (store) => ['tree', '--json', '--dir', store],
    floor: (store) => [`${LIB}read-parse.mjs`, store],
    check: (out, size) => JSON.parse(out).sessions.length === size,
  },
  doctor: {
    args: (store) => ['doctor', '--json', '--dir', store],
    floor: (store) => [`${LIB}read-parse-doctor.mjs`, store],
    check: (out, size) => {
      const report = JSON.parse(out);
      return report.healthy && report.checked.sessions === size && report.checked.audit_entries > 0;
    },
  },
  audit: {
    args: (store) => ['audit', '--json', '--dir', store],
    floor: (store) => [`${LIB}read-parse-audit.mjs`, store],
    check: (out) => JSON.parse(out).entries.length > 0,
  },
};
/** The target ratio to the floor of each command. */
const LIMITS = { export: 2, import: 2, cleanup: 3, delete: 3, restore: 3, list: 2, tree: 2, doctor: 2, audit: 2 };
const ORDER = Object.keys(LIMITS);
/** Peak resident memory at 100,000 sessions, for every command. */
const RSS_LIMIT_MB = 400;
/** The 100,000-session time of a command over its 10,000-session time. */
const GROWTH_LIMIT = 11;

export async function run({ dist, cli, tmp, quick, env, sizes = DEFAULT_SIZES, commands = ORDER }) {
  const unknown = commands.filter((cmd) => !ORDER.includes(cmd));
  if (unknown.length > 0) throw new Error(`--commands: unknown ${unknown.join(', ')}; known: ${ORDER.join(', ')}`);
  const serialize = await loadSerializer(dist);
  const audit = await loadAuditFormatter(dist);
  const lib = await import(pathToFileURL(path.join(dist, 'tools', 'index.js')).href);
  const floorOf = (cmd) => path.join(FLOORS, `${cmd}.mjs`);
  const notes = [];
  const skipped = ['export', 'import', 'cleanup', 'delete', 'restore'].filter((cmd) => !existsSync(floorOf(cmd)));
  // The floor of restore undoes the floor's delete: without that one it has nothing to restore.
  if (!skipped.includes('restore') && skipped.includes('delete')) skipped.push('restore');
  for (const cmd of skipped) console.log(`  skipped: bench/floors/${cmd}.mjs missing`);
  const measured = ORDER.filter((cmd) => commands.includes(cmd) && !skipped.includes(cmd));

  const figures = [];
  const targets = [];
  /** medians[size][cmd] = {ours, floor, rssOurs, rssFloor} */
  const medians = {};
  for (const size of sizes) {
    const started = performance.now();
    const store = path.join(tmp, `store-${size}`);
    const { root } = await buildStore({ serialize, audit, lib, store, size, notes });
    const built = performance.now();
    const large = size >= 100_000;
    const readRuns = quick ? (large ? 1 : 3) : large ? 3 : 7;
    const bulkRuns = quick ? 1 : 3;
    const samples = Object.fromEntries(measured.map((cmd) => [cmd, { ours: [], floor: [], rss: [], rssFloor: [] }]));
    const record = (cmd, side, { ms, rss }) => {
      samples[cmd][side].push(ms);
      samples[cmd][side === 'ours' ? 'rss' : 'rssFloor'].push(rss);
    };
    const ours = (args) => runMeasured([cli, ...args], { env });
    const floor = (args) => runMeasured(args, { env });

    // Reads (and export, which only reads the store): interleaved rounds, one untimed warm-up round that
    // also checks each command's output.
    const readJobs = [];
    for (const cmd of measured.filter((c) => READS[c])) {
      const spec = READS[cmd];
      readJobs.push((round) => {
        const result = ours(spec.args(store));
        if (round < 0 && !spec.check(result.stdout, size)) throw new Error(`${cmd} at ${size}: unexpected output`);
        if (round >= 0) record(cmd, 'ours', result);
      });
      readJobs.push((round) => {
        const result = floor(spec.floor(store));
        if (round >= 0) record(cmd, 'floor', result);
      });
    }
    const bundle = path.join(tmp, 'bundle-ours');
    const floorBundle = path.join(tmp, 'bundle-floor');
    if (measured.includes('export')) {
      readJobs.push((round) => {
        rmSync(bundle, { force: true });
        const result = ours(['export', '--all', '--dir', store, '-o', bundle]);
        if (round >= 0) record('export', 'ours', result);
      });
      readJobs.push((round) => {
        rmSync(floorBundle, { force: true });
        const result = floor([floorOf('export'), store, floorBundle]);
        if (round >= 0) record('export', 'floor', result);
      });
    }
    for (let round = -1; round < readRuns; round++) {
      const order = round % 2 ? [...readJobs].reverse() : readJobs;
      for (const job of order) job(round);
    }
    rmSync(floorBundle, { force: true });

    // Import: into an empty store each run; the bundle is the one our export wrote (the format import reads).
    if (measured.includes('import')) {
      if (!existsSync(bundle)) runMeasured([cli, 'export', '--all', '--dir', store, '-o', bundle], { env });
      for (let i = 0; i < bulkRuns; i++) {
        const sides = [
          ['ours', () => ours(['import', bundle, '--dir', path.join(tmp, 'imported')])],
          ['floor', () => floor([floorOf('import'), bundle, path.join(tmp, 'imported')])],
        ];
        for (const [side, job] of i % 2 ? sides.reverse() : sides) {
          removeDir(path.join(tmp, 'imported'));
          mkdirSync(path.join(tmp, 'imported'));
          settle();
          record('import', side, job());
          removeDir(path.join(tmp, 'imported'));
        }
      }
    }
    rmSync(bundle, { force: true });

    // Delete, restore, cleanup: each side on its own fresh copy of the store (copied untimed), one after
    // the other on it: delete the subtree, restore it, then clean up everything (all of it old and finished).
    const chain = ['delete', 'restore', 'cleanup'].filter((cmd) => measured.includes(cmd));
    if (chain.length > 0) {
      const copy = path.join(tmp, 'copy');
      const steps = {
        ours: {
          delete: () => ours(['delete', root, '--dir', copy]),
          restore: () => ours(['restore', root, '--dir', copy]),
          cleanup: () => ours(['cleanup', '--hours', '1', '--dir', copy]),
        },
        floor: {
          delete: () => floor([floorOf('delete'), copy, root]),
          restore: () => floor([floorOf('restore'), copy, root]),
          cleanup: () => floor([floorOf('cleanup'), copy]),
        },
      };
      for (let i = 0; i < bulkRuns; i++) {
        const sides = ['ours', 'floor'];
        for (const side of i % 2 ? sides.reverse() : sides) {
          copyStore(store, copy);
          settle();
          // Our restore restores our delete, the floor's the floor's: restore runs only after its delete.
          const run = chain.includes('restore') ? [...new Set(['delete', ...chain])] : chain;
          for (const cmd of run) {
            const result = steps[side][cmd]();
            if (chain.includes(cmd)) record(cmd, side, result);
          }
          removeDir(copy);
        }
      }
    }
    // Nothing of this size is timed any more: the store goes while the next one is written (untimed) or
    // after the report (removing 100,000 session directories takes minutes).
    removeInBackground(store);

    medians[size] = {};
    for (const cmd of measured) {
      const s = samples[cmd];
      const m = {
        ours: median(s.ours),
        floor: median(s.floor),
        rss: Math.max(...s.rss) / 1024,
        rssFloor: Math.max(...s.rssFloor) / 1024,
      };
      medians[size][cmd] = m;
      const runs = s.ours.length;
      figures.push({
        label: `${cmd} at ${size}: ours / floor (${runs} run${runs === 1 ? '' : 's'})`,
        value: `${round(m.ours / 1000, 2)} / ${round(m.floor / 1000, 2)}`,
        unit: 's',
      });
      figures.push({
        label: `${cmd} at ${size}: peak RSS ours / floor`,
        value: `${Math.round(m.rss)} / ${Math.round(m.rssFloor)}`,
        unit: 'MB',
      });
      targets.push(target(`${cmd} / its floor at ${size}`, m.ours / m.floor, LIMITS[cmd]));
      if (large) {
        targets.push({
          label: `${cmd} peak RSS at ${size} (MB, target ≤ ${RSS_LIMIT_MB})`,
          ratio: round(m.rss / RSS_LIMIT_MB, 3),
          limit: 1,
          pass: m.rss <= RSS_LIMIT_MB,
        });
      }
    }
    figures.push({
      label: `store of ${size}: written / measured in`,
      value: `${Math.round((built - started) / 1000)} / ${Math.round((performance.now() - built) / 1000)}`,
      unit: 's',
    });
  }
  const [small, big] = [Math.min(...sizes), Math.max(...sizes)];
  if (small !== big) {
    for (const cmd of measured) {
      const ratio = medians[big][cmd].ours / medians[small][cmd].ours;
      targets.push(target(`${cmd}: time at ${big} / at ${small}`, ratio, GROWTH_LIMIT));
    }
  }
  const missing = skipped.map((cmd) => `bench/floors/${cmd}.mjs`);
  return { figures, targets, notes, ...(missing.length > 0 ? { floors_missing: missing } : {}) };
}

/**
 * A store of `size` sessions, every one finished hours ago (cleanup takes them all): trees of depth 4
 * (3 children per node) and one tree of 1,000 (1 + 9 + 90 + 900) for delete and restore; the children
 * index; and the audit trail their lives wrote, as much as the default settings keep (30 MiB).
 */
async function buildStore({ serialize, audit, lib, store, size, notes }) {
  rmSync(store, { recursive: true, force: true });
  const now = Date.now();
  const finished = (i) => ({ phase: i % 5 === 0 ? 'failed' : 'completed', ageHours: 2 + ((i * 7919) % 7000) / 100 });
  const [root] = await writeStoreAsync(serialize, store, SUBTREE, {
    now,
    shape: 'trees',
    index: true,
    branching: [9, 10, 10],
    kind: finished,
    prefix: 'd',
  });
  await writeStoreAsync(serialize, store, size - SUBTREE, { now, shape: 'trees', index: true, kind: finished, audit });
  const sessions = lib.Sessions.open({ dir: store, cwd: store, env: {} });
  const check = await lib.checkIndex(sessions);
  if (check.missing.length + check.stale.length + check.unindexed.length > 0) {
    await lib.rebuildIndex(sessions);
    notes.push(`the fixture's children index did not match the library's at ${size}: rebuilt with rebuildIndex`);
  }
  settle();
  return { root };
}

/** Written data reaches the disk before a timed run, so no run's fsyncs wait behind the fixture's write-back. */
function settle() {
  spawnSync('sync');
}

/** `rm -rf` (fewer system calls per directory than node's rmSync), rmSync where there is no `rm`. */
function removeDir(dir) {
  spawnSync('rm', ['-rf', dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** Renamed out of the way at once, removed by a detached `rm -rf` that outlives the bench if it must. */
function removeInBackground(dir) {
  if (!existsSync(dir)) return;
  const gone = `${dir}.removing-${process.pid}-${Date.now()}`;
  renameSync(dir, gone);
  spawn('rm', ['-rf', gone], { detached: true, stdio: 'ignore' }).unref();
}

function copyStore(from, to) {
  removeDir(to);
  const result = spawnSync('cp', ['-a', from, to]);
  if (result.status !== 0) cpSync(from, to, { recursive: true });
}
