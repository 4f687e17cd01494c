// The two hooks as whole processes, on real payloads, with a store of 10,000 sessions,
// against `node -e ''` and against the floor (lib/hook-floor.cjs): median wall time and peak memory,
// hook and baseline runs interleaved. With --variant, other builds' hooks run in the same rounds.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSerializer, writeStore } from './lib/fixtures.mjs';
import {
  interleave,
  interleaveSamples,
  median,
  peakRss,
  round,
  rssMethod,
  runProcess,
  target,
} from './lib/measure.mjs';

export const name = 'hooks';
export const title = 'Hooks as whole processes (store of 10,000 sessions)';

const FLOOR = new URL('./lib/hook-floor.cjs', import.meta.url).pathname;
const STORE_SIZE = 10_000;

export async function run({ dist, tmp, quick, env, root, variants = [] }) {
  const builds = [{ name: '', dist }, ...variants];
  const missing = builds
    .flatMap((build) => [hookFile(build.dist, 'pre_delegate'), hookFile(build.dist, 'subagent_stop')])
    .filter((f) => !existsSync(f))
    .map((f) => path.relative(root, f));
  if (missing.length) return { skipped: `no ${missing.join(', ')} in the build` };
  const payloads = loadPayloads(root);
  if (!payloads) return { skipped: 'no PreToolUse/SubagentStart/SubagentStop fixtures in tests/fixtures/claude' };

  // A project whose store (<project>/.claude/session) holds 10,000 sessions, as Claude Code runs hooks:
  // cwd and CLAUDE_PROJECT_DIR.
  const project = path.join(tmp, 'project');
  const store = path.join(project, '.claude', 'session');
  writeStore(await loadSerializer(dist), store, STORE_SIZE, { shape: 'trees', index: true });
  // The 10,000 sessions just written are still being written back to disk; every fsync a hook makes
  // would wait behind them. A user's store is settled: so is this one before anything is timed.
  syncDisks();
  const transcript = path.join(project, 'transcript.jsonl');
  writeFileSync(transcript, '{}\n');
  const hookEnv = { ...env, CLAUDE_PROJECT_DIR: project, CLAUDECODE: '1' };
  const hook = (script, payload) => ({
    args: [script],
    options: { env: hookEnv, cwd: project, input: JSON.stringify(payload) },
  });
  const fill = (payload, fields) => ({ ...payload, cwd: project, transcript_path: transcript, ...fields });

  // Every build's hooks work on the same store, each run on its own sessions.
  let delegations = 0;
  let flows = 0;
  const hooksOf = (build) => {
    const preDelegate = hookFile(build.dist, 'pre_delegate');
    const subagentStop = hookFile(build.dist, 'subagent_stop');
    // pre_delegate: each run is a new delegation (its own tool_use_id). Each in its own Claude Code
    // session: delegations piling up in one session would make later runs read more candidates.
    const pre = () => {
      const n = ++delegations;
      return hook(
        preDelegate,
        fill(payloads.pre, { session_id: `bench-pre-${n}`, tool_use_id: `toolu_bench_pre_${n}` }),
      );
    };
    // subagent_stop: each run stops an agent whose delegation and start went through the hooks first (untimed).
    const stop = () => {
      const n = ++flows;
      const agentId = `a${n.toString(16).padStart(16, '0')}`;
      const sessionId = `bench-stop-${n}`;
      const spawn = hook(
        preDelegate,
        fill(payloads.pre, { session_id: sessionId, tool_use_id: `toolu_bench_stop_${n}` }),
      );
      runProcess(spawn.args, spawn.options);
      const start = hook(subagentStop, fill(payloads.start, { session_id: sessionId, agent_id: agentId }));
      runProcess(start.args, start.options);
      return hook(subagentStop, fill(payloads.stop, { session_id: sessionId, agent_id: agentId }));
    };
    return { pre, stop };
  };
  const bare = () => ({ args: ['-e', ''], options: { env, cwd: project, input: JSON.stringify(payloads.pre) } });
  // The floor: a minimal script making pre_delegate's durable file changes (lib/hook-floor.cjs).
  const floorStore = path.join(tmp, 'floor-store');
  const floor = () => ({
    args: [FLOOR, floorStore],
    options: {
      env,
      cwd: project,
      input: JSON.stringify(
        fill(payloads.pre, {
          session_id: `bench-floor-${++delegations}`,
          tool_use_id: `toolu_bench_floor_${delegations}`,
        }),
      ),
    },
  });
  // pre_delegate with its kill switch on: the launcher loads the bundle with its code cache, and the hook
  // returns before any work. Its time over `node -e ''` is what loading the hook's code costs, which no
  // work done faster can win back: the floor plus that cost is the least a hook of this bundle can take.
  const loadOnly = () => {
    const { args, options } = hook(hookFile(dist, 'pre_delegate'), fill(payloads.pre, { session_id: 'bench-load' }));
    return { args, options: { ...options, env: { ...hookEnv, AGENT_SESSION_DISABLE: '1' } } };
  };
  const hooks = builds.map((build) => ({ ...build, ...hooksOf(build) }));
  for (const build of hooks) verify({ ...build, hookEnv, project });

  // 41 rounds: on a shared machine a median of 21 still moved by ±10 % from run to run.
  const runs = quick ? 7 : 41;
  const timed = (make) => (round) => {
    const { args, options } = make(round);
    return runProcess(args, options).ms;
  };
  const jobs = { bare: timed(bare), floor: timed(floor), load: timed(loadOnly) };
  for (const { name, pre, stop } of hooks) {
    jobs[`pre${name && `@${name}`}`] = timed(pre);
    jobs[`stop${name && `@${name}`}`] = timed(stop);
  }
  const samples = await interleaveSamples(jobs, { runs, warmup: 2 });
  const time = Object.fromEntries(Object.entries(samples).map(([job, values]) => [job, median(values)]));
  const [main] = hooks;
  const measured = (make) => (round) => {
    const { args, options } = make(round);
    return peakRss(args, options);
  };
  const rss = await interleave(
    { pre: measured(main.pre), stop: measured(main.stop), bare: measured(bare) },
    { runs: quick ? 5 : 11 },
  );

  return {
    figures: [
      { label: "node -e '' (median)", value: round(time.bare, 1), unit: 'ms' },
      { label: 'pre_delegate, PreToolUse(Agent) creating a session (median)', value: round(time.pre, 1), unit: 'ms' },
      { label: 'subagent_stop, SubagentStop finalizing a session (median)', value: round(time.stop, 1), unit: 'ms' },
      {
        label: 'floor: minimal script making the same durable changes as pre_delegate (median)',
        value: round(time.floor, 1),
        unit: 'ms',
      },
      { label: "floor / node -e ''", value: round(time.floor / time.bare, 3), unit: '×' },
      {
        label: 'pre_delegate loaded, no work done (AGENT_SESSION_DISABLE=1) (median)',
        value: round(time.load, 1),
        unit: 'ms',
      },
      {
        label: "least ratio to the floor with this bundle: (floor + load - node -e '') / floor",
        value: round((time.floor + time.load - time.bare) / time.floor, 3),
        unit: '×',
      },
      ...variantFigures(hooks.slice(1), samples),
      { label: `node -e '' peak RSS (median, ${rssMethod()})`, value: rss.bare, unit: 'KiB' },
      { label: 'pre_delegate peak RSS (median)', value: rss.pre, unit: 'KiB' },
      { label: 'subagent_stop peak RSS (median)', value: rss.stop, unit: 'KiB' },
    ],
    targets: [
      target("pre_delegate time / node -e ''", time.pre / time.bare, 1.15),
      target("subagent_stop time / node -e ''", time.stop / time.bare, 1.15),
      target('pre_delegate time / floor', time.pre / time.floor, 1.08),
      target('subagent_stop time / floor', time.stop / time.floor, 1.08),
      target("pre_delegate peak RSS / node -e ''", rss.pre / rss.bare, 1.25),
      target("subagent_stop peak RSS / node -e ''", rss.stop / rss.bare, 1.25),
    ],
    notes: [
      `store: ${STORE_SIZE} sessions; each pre_delegate run is the first delegation of its Claude Code session;`,
      'floor: bench/lib/hook-floor.cjs (fs calls only: two locks, two fsynced atomic writes, one audit append),',
      'the least any durable hook does;',
      'each subagent_stop run follows its own delegation and SubagentStart (untimed), ' +
        `in its own Claude Code session (${flows} flows)`,
      ...hooks.slice(1).map(({ name, dist: other }) => `variant ${name}: ${path.relative(root, other)}`),
    ],
  };
}

function hookFile(dist, name) {
  return path.join(dist, 'hooks', `${name}.js`);
}

/**
 * Each variant's medians, and what it costs against this build: the median over rounds of the
 * difference within a round (both measured moments apart), positive when the variant is slower.
 */
function variantFigures(variants, samples) {
  return variants.flatMap(({ name }) =>
    ['pre', 'stop'].flatMap((hook) => {
      const label = hook === 'pre' ? 'pre_delegate' : 'subagent_stop';
      const ours = samples[hook];
      const theirs = samples[`${hook}@${name}`];
      return [
        { label: `${label}, variant ${name} (median)`, value: round(median(theirs), 1), unit: 'ms' },
        {
          label: `${label}, variant ${name} minus this build (median of paired differences)`,
          value: round(median(theirs.map((v, i) => v - ours[i])), 2),
          unit: 'ms',
        },
      ];
    }),
  );
}

/** Flushes every dirty page to disk (sync(1)); without it, the first rounds time the write-back. */
function syncDisks() {
  const result = spawnSync('sync', [], { stdio: 'ignore' });
  if (result.error || result.status !== 0)
    throw new Error(`sync failed: ${result.error?.message ?? `exit ${result.status}`}`);
}

/** Real payloads, captured from Claude Code: the test fixtures. */
function loadPayloads(root) {
  const read = (file) => {
    const candidate = path.join(root, 'tests', 'fixtures', 'claude', file);
    return existsSync(candidate) ? JSON.parse(readFileSync(candidate, 'utf8')) : undefined;
  };
  const payloads = {
    pre: read('pretooluse-task.json'),
    start: read('subagentstart.json'),
    stop: read('subagentstop.json'),
  };
  return Object.values(payloads).every(Boolean) ? payloads : undefined;
}

/** Once, untimed: a delegation creates a session, and a stop after its start finalizes that session. */
function verify({ pre, stop, hookEnv, project, dist }) {
  const first = pre();
  const { stdout } = runProcess(first.args, first.options);
  // The footer added to the prompt names the new session.
  if (!/agent-\d{8}-\d{6}-[0-9a-f]{8}/.test(stdout))
    throw new Error(`pre_delegate did not create a session: ${stdout}`);
  const flow = stop();
  runProcess(flow.args, flow.options);
  const cli = path.join(dist, 'bin', 'agent-session.js');
  const listing = JSON.parse(
    runProcess([cli, 'list', '--json', '--phase', 'completed', '--agent', 'general-purpose', '--limit', '1'], {
      env: hookEnv,
      cwd: project,
    }).stdout,
  );
  const newest = listing.sessions[0];
  if (!newest || Date.now() - Date.parse(newest.last_updated) > 60_000)
    throw new Error('subagent_stop did not finalize the session its start had bound');
}
