// `npm run bench`: runs each benchmark module against the build at AGENT_SESSION_DIST
// (default dist/), prints a report and writes the figures as JSON.
// Usage: node bench/run.mjs [--only store,list,hooks,cleanup,scale] [--out FILE] [--quick] [--check] [--tmp DIR]
//                          [--variant NAME=DIR ...] [--sizes 10000,100000] [--commands delete,restore]
//   --out    where the JSON goes (default bench/results.json)
//   --quick  fewer repetitions (a smoke run; figures are noisier)
//   --check  exit 1 when a target fails
//   --tmp    where the temporary stores go (default: the OS temp dir)
//   --variant  another build (node scripts/build.mjs --out DIR) whose hooks the hooks module times in
//              the same rounds as this build's, interleaved; repeatable
//   --sizes    the store sizes of the scale module (default 10000,100000)
//   --commands the scale module's commands to time (default all; delete runs, untimed, before restore)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rssMethod } from './lib/measure.mjs';

const MODULES = ['store', 'list', 'hooks', 'cleanup', 'scale', 'stats', 'dashboard', 'statusline'];
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    out: { type: 'string', default: path.join(root, 'bench', 'results.json') },
    quick: { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
    tmp: { type: 'string', default: tmpdir() },
    variant: { type: 'string', multiple: true, default: [] },
    sizes: { type: 'string' },
    commands: { type: 'string' },
  },
});
const sizes = opts.sizes?.split(',').map(Number);
if (sizes && !sizes.every((n) => Number.isInteger(n) && n > 1000)) {
  console.error(`bench: --sizes wants whole numbers above 1000, separated by commas; got ${opts.sizes}`);
  process.exit(2);
}
const dist = path.resolve(root, process.env.AGENT_SESSION_DIST ?? 'dist');
const selected = opts.only ? opts.only.split(',') : MODULES;
const variants = opts.variant.map((spec) => {
  const at = spec.indexOf('=');
  if (at <= 0) {
    console.error(`bench: --variant wants NAME=DIR, got ${spec}`);
    process.exit(2);
  }
  return { name: spec.slice(0, at), dist: path.resolve(root, spec.slice(at + 1)) };
});
const unknown = selected.filter((m) => !MODULES.includes(m));
if (unknown.length) {
  console.error(`bench: unknown module(s) ${unknown.join(', ')}; known: ${MODULES.join(', ')}`);
  process.exit(2);
}

const results = {
  date: new Date().toISOString(),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  cpus: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}`,
  dist,
  rss_method: rssMethod(),
  quick: opts.quick,
  modules: {},
};
console.log(
  `agent-session bench: ${results.node}, ${results.cpus}, ` +
    `build ${path.relative(root, dist) || '.'}${opts.quick ? ' (quick)' : ''}`,
);

const started = performance.now();
for (const name of selected) {
  const module = await import(`./${name}.mjs`);
  console.log(`\n${module.title}`);
  mkdirSync(opts.tmp, { recursive: true });
  const tmp = mkdtempSync(path.join(opts.tmp, `agent-session-bench-${name}-`));
  const moduleStart = performance.now();
  let result;
  try {
    result = await module.run({
      dist,
      cli: path.join(dist, 'bin', 'agent-session.js'),
      tmp,
      quick: opts.quick,
      env: cleanEnv(),
      root,
      variants,
      ...(sizes ? { sizes } : {}),
      ...(opts.commands ? { commands: opts.commands.split(',') } : {}),
    });
  } catch (err) {
    result = { error: err.stack ?? String(err) };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  result.seconds = Math.round((performance.now() - moduleStart) / 100) / 10;
  results.modules[name] = result;
  printModule(result);
}
results.seconds = Math.round((performance.now() - started) / 100) / 10;

const targets = Object.values(results.modules).flatMap((m) => m.targets ?? []);
const failed = targets.filter((t) => !t.pass);
const errors = Object.entries(results.modules).filter(([, m]) => m.error);
console.log(
  `\nTargets: ${targets.length - failed.length} of ${targets.length} pass` +
    `${failed.length ? ` (FAIL: ${failed.map((t) => t.label).join('; ')})` : ''}; ${results.seconds} s in all.`,
);
mkdirSync(path.dirname(path.resolve(opts.out)), { recursive: true });
writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`Figures written to ${path.relative(process.cwd(), path.resolve(opts.out))}`);
process.exitCode = errors.length ? 1 : opts.check && failed.length ? 1 : 0;

function printModule(result) {
  if (result.skipped) return console.log(`  skipped: ${result.skipped}`);
  if (result.error) return console.log(`  ERROR: ${result.error}`);
  const width = Math.max(...[...result.figures, ...result.targets].map((f) => f.label.length));
  for (const f of result.figures) console.log(`  ${f.label.padEnd(width)}  ${String(f.value).padStart(10)} ${f.unit}`);
  for (const t of result.targets) {
    console.log(
      `  ${t.label.padEnd(width)}  ${`${t.ratio}×`.padStart(10)}   target ≤ ${t.limit}×  ${t.pass ? 'PASS' : 'FAIL'}`,
    );
  }
  for (const note of result.notes ?? []) console.log(`  note: ${note}`);
  console.log(`  (${result.seconds} s)`);
}

/**
 * No inherited agent-session or Claude Code settings reach the measured processes, nor settings that
 * add fixed work to every Node start-up (extra CA certificates, NODE_OPTIONS): they would inflate
 * the `node -e ''` baseline and flatter every ratio against it.
 */
function cleanEnv() {
  const STARTUP_SETTINGS = new Set(['NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS']);
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('AGENT_SESSION_') && !key.startsWith('CLAUDE') && !STARTUP_SETTINGS.has(key),
    ),
  );
}
