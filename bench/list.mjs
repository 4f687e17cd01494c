// `agent-session list --json` as a whole process against a bare Node script that reads and
// parses the same files, at 1,000 and 10,000 sessions, and how the cost grows between the two.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadSerializer, writeStore } from './lib/fixtures.mjs';
import { interleaveSamples, median, pairedGrowth, round, runProcess, target } from './lib/measure.mjs';

export const name = 'list';
export const title = 'agent-session list --json (whole processes)';

const BARE = new URL('./lib/read-parse.mjs', import.meta.url).pathname;
const SIZES = [1000, 10_000];

export async function run({ dist, cli, tmp, quick, env }) {
  const serialize = await loadSerializer(dist);
  const dirs = { 0: path.join(tmp, 'empty') };
  mkdirSync(dirs[0]);
  for (const size of SIZES) {
    dirs[size] = path.join(tmp, `store-${size}`);
    writeStore(serialize, dirs[size], size);
    verify(cli, dirs[size], size, env);
  }
  // All sizes in the same rounds, so a burst of load on the machine hits every figure alike.
  const jobs = {};
  for (const size of [0, ...SIZES]) {
    jobs[`list${size}`] = () => runProcess([cli, 'list', '--json', '--dir', dirs[size]], { env }).ms;
    jobs[`bare${size}`] = () => runProcess([BARE, dirs[size]], { env }).ms;
  }
  const samples = await interleaveSamples(jobs, { runs: quick ? 5 : 15 });
  const m = Object.fromEntries(Object.entries(samples).map(([key, values]) => [key, median(values)]));
  const growth = pairedGrowth(samples.list0, samples.list1000, samples.list10000, 1000, 10_000);

  const figures = [
    { label: 'list --json, empty store (start-up)', value: round(m.list0, 1), unit: 'ms' },
    { label: 'bare read+parse, empty store (start-up)', value: round(m.bare0, 1), unit: 'ms' },
  ];
  const perSession = { 1000: growth.small, 10000: growth.large };
  for (const size of SIZES) {
    figures.push(
      { label: `list --json, ${size} sessions`, value: round(m[`list${size}`], 1), unit: 'ms' },
      { label: `bare read+parse, ${size} sessions`, value: round(m[`bare${size}`], 1), unit: 'ms' },
      { label: `list / bare at ${size}`, value: round(m[`list${size}`] / m[`bare${size}`], 3), unit: '×' },
      {
        label: `list per-session cost at ${size} (minus start-up, median of rounds)`,
        value: round(perSession[size], 2),
        unit: 'µs',
      },
    );
  }
  return {
    figures,
    targets: [
      target('list --json / bare read+parse at 10,000 sessions', m.list10000 / m.bare10000, 1.5),
      target('list per-session cost 10,000 / 1,000 (linear growth)', growth.growth, 1.3),
    ],
  };
}

/** Once, untimed: the listing is complete and valid, so the timing measures real work. */
function verify(cli, dir, size, env) {
  const { stdout } = runProcess([cli, 'list', '--json', '--dir', dir], { env });
  const { sessions, problems } = JSON.parse(stdout);
  if (sessions.length !== size || problems.length !== 0) {
    throw new Error(`list over ${dir}: ${sessions.length} sessions, ${problems.length} problems (expected ${size}, 0)`);
  }
}
