// Issue 2: `agent-session list --json` as a whole process against a bare Node script that reads and
// parses the same files, at 1,000 and 10,000 sessions, and how the cost grows between the two.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadSerializer, writeStore } from './lib/fixtures.mjs';
import { interleave, round, runProcess, target } from './lib/measure.mjs';

export const name = 'list';
export const title = 'Issue 2: agent-session list --json (whole processes)';

const BARE = new URL('./lib/read-parse.mjs', import.meta.url).pathname;

export async function run({ dist, cli, tmp, quick, env }) {
  const serialize = await loadSerializer(dist);
  const sizes = [1000, 10_000];
  const empty = path.join(tmp, 'empty');
  mkdirSync(empty);
  const listIn = (dir) => () => runProcess([cli, 'list', '--json', '--dir', dir], { env }).ms;
  const bareIn = (dir) => () => runProcess([BARE, dir], { env }).ms;

  const fixed = await interleave({ list: listIn(empty), bare: bareIn(empty) }, { runs: quick ? 7 : 15 });
  const figures = [
    { label: 'list --json, empty store (start-up)', value: round(fixed.list, 1), unit: 'ms' },
    { label: 'bare read+parse, empty store (start-up)', value: round(fixed.bare, 1), unit: 'ms' },
  ];
  const perSession = {};
  const ratios = {};
  for (const size of sizes) {
    const dir = path.join(tmp, `store-${size}`);
    writeStore(serialize, dir, size);
    verify(cli, dir, size, env);
    const runs = quick ? 5 : size >= 10_000 ? 9 : 15;
    const m = await interleave({ list: listIn(dir), bare: bareIn(dir) }, { runs });
    perSession[size] = ((m.list - fixed.list) / size) * 1000;
    ratios[size] = m.list / m.bare;
    figures.push(
      { label: `list --json, ${size} sessions`, value: round(m.list, 1), unit: 'ms' },
      { label: `bare read+parse, ${size} sessions`, value: round(m.bare, 1), unit: 'ms' },
      { label: `list / bare at ${size}`, value: round(ratios[size], 3), unit: '×' },
      { label: `list per-session cost at ${size} (minus start-up)`, value: round(perSession[size], 2), unit: 'µs' },
    );
  }
  const growth = perSession[10_000] / perSession[1000];
  figures.push({ label: 'per-session cost 10,000 / 1,000 (1.0 = linear)', value: round(growth, 3), unit: '×' });
  return {
    figures,
    targets: [
      target('list --json / bare read+parse at 10,000 sessions', ratios[10_000], 1.5),
      target('per-session cost 10,000 / 1,000 (linear growth)', growth, 1.3),
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
