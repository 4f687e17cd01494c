// The status line's command (dist/hooks/statusline.js) as a whole process, on the payload the real
// Claude Code sends, with a store of 10,000 sessions, against the hooks' floor (lib/hook-floor.cjs)
// and pre_delegate in the same interleaved rounds: Claude Code runs it as often as its screen changes,
// so it may cost no more than a hook.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSerializer, writeStore } from './lib/fixtures.mjs';
import { interleaveSamples, median, round, runProcess, target } from './lib/measure.mjs';

export const name = 'statusline';
export const title = 'The status line command as a process (store of 10,000 sessions)';

const FLOOR = new URL('./lib/hook-floor.cjs', import.meta.url).pathname;
const STORE_SIZE = 10_000;
const CONVERSATION = 'bench-statusline';
/** The conversation's delegations, as the real hooks leave them: waiting for approval, paused, running. */
const ENDS = ['approval', 'approval', 'approval', 'approval', 'planning', 'planning', 'planning', null, null, null];

export async function run({ dist, tmp, quick, env, root }) {
  const script = path.join(dist, 'hooks', 'statusline.js');
  const preDelegate = path.join(dist, 'hooks', 'pre_delegate.js');
  const subagentStop = path.join(dist, 'hooks', 'subagent_stop.js');
  const missing = [script, preDelegate, subagentStop].filter((f) => !existsSync(f));
  if (missing.length) return { skipped: `no ${missing.map((f) => path.relative(root, f)).join(', ')} in the build` };
  const read = (...parts) => JSON.parse(readFileSync(path.join(root, 'tests', 'fixtures', ...parts), 'utf8'));
  const payloads = {
    statusline: read('statusline', 'payload.json'),
    pre: read('claude', 'pretooluse-task.json'),
    start: read('claude', 'subagentstart.json'),
    stop: read('claude', 'subagentstop.json'),
  };

  const project = path.join(tmp, 'project');
  const store = path.join(project, '.claude', 'session');
  writeStore(await loadSerializer(dist), store, STORE_SIZE, { shape: 'trees', index: true });
  const transcript = path.join(project, 'transcript.jsonl');
  writeFileSync(transcript, '{}\n');
  // No background sweep: the sweep's list of paused sessions is written below.
  const hookEnv = { ...env, CLAUDE_PROJECT_DIR: project, CLAUDECODE: '1', AGENT_SESSION_SWEEP_INTERVAL_MINUTES: '1e6' };
  const hook = (file, payload) =>
    runProcess([file], { env: hookEnv, cwd: project, input: JSON.stringify({ ...payload, cwd: project }) });

  // One conversation of ten delegations through the real hooks (untimed), each of its own agent type.
  ENDS.forEach((end, i) => {
    const common = { session_id: CONVERSATION, transcript_path: transcript };
    const type = `bench-type-${i}`;
    const input = { ...payloads.pre.tool_input, subagent_type: type };
    hook(preDelegate, { ...payloads.pre, ...common, tool_use_id: `toolu_bench_${i}`, tool_input: input });
    const agent = { ...common, agent_id: `a${i.toString(16).padStart(16, '0')}`, agent_type: type };
    hook(subagentStop, { ...payloads.start, ...agent });
    if (end)
      hook(subagentStop, { ...payloads.stop, ...agent, last_assistant_message: `Where I am.\nsession-phase: ${end}` });
  });
  // The periodic sweep's report, listing as many paused sessions as it ever does (50 of 120): each one
  // costs a stat, and a read if its record changed since the sweep.
  const listed = readdirSync(store)
    .filter((n) => n.startsWith('agent-'))
    .slice(0, 50)
    .map((id) => ({ id, conversation: null, expires_at: new Date(Date.now() + 86_400_000).toISOString() }));
  writeFileSync(
    path.join(store, '.claude-code', 'last-sweep.json'),
    `${JSON.stringify({ paused: { as_of: new Date().toISOString(), total: 120, sessions: listed } })}\n`,
  );
  syncDisks();

  const statusInput = JSON.stringify({
    ...payloads.statusline,
    session_id: CONVERSATION,
    cwd: project,
    workspace: { ...payloads.statusline.workspace, current_dir: project, project_dir: project },
  });
  const line = runProcess([script], { env: hookEnv, cwd: project, input: statusInput }).stdout;
  const expected = '\u23f8 4 waiting for approval \u00b7 \u23f8 3 paused \u00b7 \u25b6 3 running';
  if (!line.startsWith(expected)) throw new Error(`the status line is not what the conversation holds: ${line}`);

  let n = 0;
  const floorStore = path.join(tmp, 'floor-store');
  const timed = (args, input) => () => runProcess(args(), { env: hookEnv, cwd: project, input: input() }).ms;
  const jobs = {
    bare: timed(
      () => ['-e', ''],
      () => statusInput,
    ),
    statusline: timed(
      () => [script],
      () => statusInput,
    ),
    cli: timed(
      () => [path.join(dist, 'bin', 'agent-session.js'), 'statusline'],
      () => statusInput,
    ),
    floor: timed(
      () => [FLOOR, floorStore],
      () => JSON.stringify({ ...payloads.pre, session_id: `bench-floor-${++n}`, tool_use_id: `toolu_floor_${n}` }),
    ),
    pre: timed(
      () => [preDelegate],
      () =>
        JSON.stringify({
          ...payloads.pre,
          cwd: project,
          transcript_path: transcript,
          session_id: `bench-pre-${++n}`,
          tool_use_id: `toolu_pre_${n}`,
        }),
    ),
  };
  const samples = await interleaveSamples(jobs, { runs: quick ? 7 : 41, warmup: 2 });
  const time = Object.fromEntries(Object.entries(samples).map(([job, values]) => [job, median(values)]));
  return {
    figures: [
      { label: "node -e '' (median)", value: round(time.bare, 1), unit: 'ms' },
      {
        label: 'statusline: dist/hooks/statusline.js, what install writes (median)',
        value: round(time.statusline, 1),
        unit: 'ms',
      },
      { label: 'agent-session statusline, through the CLI (median)', value: round(time.cli, 1), unit: 'ms' },
      { label: 'floor: lib/hook-floor.cjs, as in the hooks module (median)', value: round(time.floor, 1), unit: 'ms' },
      { label: 'pre_delegate creating a session, same rounds (median)', value: round(time.pre, 1), unit: 'ms' },
      { label: "statusline / node -e ''", value: round(time.statusline / time.bare, 3), unit: '×' },
    ],
    targets: [
      target('statusline time / floor', time.statusline / time.floor, 1.2),
      target('statusline time / pre_delegate time', time.statusline / time.pre, 1),
    ],
    notes: [
      `store: ${STORE_SIZE} sessions; the conversation: ${ENDS.length} delegations through the real hooks`,
      '(4 waiting for approval, 3 paused, 3 running); the sweep report lists 50 of 120 paused sessions (a stat each);',
      `the line: ${line.trim()}`,
    ],
  };
}

/** Flushes every dirty page to disk (sync(1)), as the hooks module does, before anything is timed. */
function syncDisks() {
  const result = spawnSync('sync', [], { stdio: 'ignore' });
  if (result.error || result.status !== 0)
    throw new Error(`sync failed: ${result.error?.message ?? `exit ${result.status}`}`);
}
