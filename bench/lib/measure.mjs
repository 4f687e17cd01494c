// Timing helpers shared by the bench modules. Every figure is a median of repeated runs; targets are
// ratios of two medians taken in the same run, with the two sides interleaved so noise hits both.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const GNU_TIME = '/usr/bin/time';
const RSS_PRELOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'report-rss.cjs');

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median wall time (ms) of an async function, after `warmup` untimed calls. `arg` is the call index. */
export async function timeAsync(fn, { runs, warmup = 5 }) {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn(i);
    times.push(performance.now() - start);
  }
  return median(times);
}

/**
 * Runs each named job in turn, `runs` rounds (after one untimed warm-up round), and returns the
 * median per name. A job is `(round) => number` (or a promise of one) giving one measurement.
 */
export async function interleave(jobs, options) {
  const samples = await interleaveSamples(jobs, options);
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

/** Like interleave, but every round's measurements: `samples[name][round]`, for paired comparisons. */
export async function interleaveSamples(jobs, { runs, warmup = 1 }) {
  const names = Object.keys(jobs);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = -warmup; round < runs; round++) {
    // Alternate the order too, so neither side always runs right after the other's cache effects.
    const order = round % 2 ? [...names].reverse() : names;
    for (const name of order) {
      const value = await jobs[name](round);
      if (round >= 0) samples[name].push(value);
    }
  }
  return samples;
}

/**
 * How per-session cost grows from `small` to `large` sessions: (t(large) - t(empty)) / large over
 * (t(small) - t(empty)) / small, each difference taken within one round (the same moment of the
 * machine), then the median over rounds. 1.0 is linear.
 */
export function pairedGrowth(empty, small, large, smallSize, largeSize) {
  const perSession = (values, size) => values.map((v, i) => ((v - empty[i]) / size) * 1000);
  const a = perSession(small, smallSize);
  const b = perSession(large, largeSize);
  return { small: median(a), large: median(b), growth: median(b.map((v, i) => v / a[i])) };
}

/** Spawns `node args…` to completion; throws unless it exits as expected. Returns {ms, stdout}. */
export function runProcess(args, { env = process.env, input, expectCode = 0, cwd } = {}) {
  const start = performance.now();
  const result = spawnSync(process.execPath, args, {
    env,
    cwd,
    input: input ?? '',
    maxBuffer: 512 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const ms = performance.now() - start;
  check(result, args, expectCode);
  return { ms, stdout: result.stdout.toString('utf8'), stderr: result.stderr.toString('utf8') };
}

/**
 * Peak resident memory (KiB) of `node args…`, as the kernel accounts it for the child at exit
 * (wait4's ru_maxrss). With GNU time that is read by /usr/bin/time -f %M around an unmodified node;
 * without it, a preload (added to every measured command alike) writes process.resourceUsage().maxRSS.
 */
export function peakRss(args, { env = process.env, input, expectCode = 0, cwd } = {}) {
  if (rssMethod() === 'gnu-time') {
    const result = spawnSync(GNU_TIME, ['-f', 'maxrss=%M', process.execPath, ...args], {
      env,
      cwd,
      input: input ?? '',
      maxBuffer: 512 * 1024 * 1024,
    });
    check(result, args, expectCode);
    const match = /maxrss=(\d+)\s*$/.exec(result.stderr.toString('utf8'));
    if (!match) throw new Error(`no maxrss from ${GNU_TIME}: ${result.stderr}`);
    return Number(match[1]);
  }
  const result = spawnSync(process.execPath, ['--require', RSS_PRELOAD, ...args], {
    env: { ...env, BENCH_RSS_FD: '3' },
    cwd,
    input: input ?? '',
    maxBuffer: 512 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  check(result, args, expectCode);
  return Number(result.output[3].toString('utf8').trim());
}

/**
 * Runs `node args…` to completion and returns its wall time and its peak resident memory (KiB), both
 * from one run: {ms, rss, stdout}. With GNU time the process runs under /usr/bin/time (a fork and an exec
 * more, for every side of a comparison alike); without it, the preload reports the peak.
 */
export function runMeasured(args, { env = process.env, input, expectCode = 0, cwd } = {}) {
  const gnu = rssMethod() === 'gnu-time';
  const start = performance.now();
  const result = gnu
    ? spawnSync(GNU_TIME, ['-f', 'maxrss=%M', process.execPath, ...args], {
        env,
        cwd,
        input: input ?? '',
        maxBuffer: 1024 * 1024 * 1024,
      })
    : spawnSync(process.execPath, ['--require', RSS_PRELOAD, ...args], {
        env: { ...env, BENCH_RSS_FD: '3' },
        cwd,
        input: input ?? '',
        maxBuffer: 1024 * 1024 * 1024,
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      });
  const ms = performance.now() - start;
  check(result, args, expectCode);
  const rss = gnu
    ? Number(/maxrss=(\d+)\s*$/.exec(result.stderr.toString('utf8'))?.[1] ?? NaN)
    : Number(result.output[3].toString('utf8').trim());
  return { ms, rss, stdout: result.stdout.toString('utf8') };
}

let method;
export function rssMethod() {
  method ??= existsSync(GNU_TIME) && spawnSync(GNU_TIME, ['-f', '%M', 'true']).status === 0 ? 'gnu-time' : 'preload';
  return method;
}

function check(result, args, expectCode) {
  if (result.error) throw result.error;
  if (expectCode !== undefined && result.status !== expectCode) {
    throw new Error(
      `node ${args.join(' ').slice(0, 200)} exited ${result.status ?? result.signal}: ` +
        result.stderr.toString('utf8').slice(0, 500),
    );
  }
}

export function target(label, ratio, limit) {
  return { label, ratio: round(ratio, 3), limit, pass: ratio <= limit };
}

export function round(value, digits = 2) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
