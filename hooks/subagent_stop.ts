#!/usr/bin/env node
// Claude Code hook for the agent lifecycle: SubagentStart, SubagentStop and PostToolUse of the
// subagent tool (the exact spawn-to-agent join); also callable by orchestrators with the earlier
// tool's format. Fails open: it never blocks a stop (no exit 2, no `decision: block`), prints
// nothing to Claude Code, and logs problems as one line each in <store>/.hooks.log.
// `--sweep` runs the periodic tidy-up in the foreground; normally it is started detached from here.
import type { LifecycleOutcome } from '../tools/claude/lifecycle.js';

// Bundled as CommonJS (no top-level await): the library and its built-in modules load only in main().
async function main(): Promise<void> {
  if (process.argv.includes('--sweep')) {
    const { HookRun, runSweep, writeAllSync } = await import('../tools/claude/sweep-run.js');
    const run = new HookRun('sweep', process.env, process.cwd());
    const report = await runSweep(run).catch(async (err) => {
      await run.problem(err);
      return null;
    });
    if (report) writeAllSync(1, `${JSON.stringify(report)}\n`);
    if (run.diagnostics.length > 0) writeAllSync(2, `${run.diagnostics.join('\n')}\n`);
  } else if (process.env.AGENT_SESSION_DISABLE !== '1') {
    // The kill switch is checked before the library is even evaluated (it is imported lazily).
    const { HookRun, readStdin, runLifecycle, claimSweepFor, writeAllSync } = await import('../tools/claude/lifecycle.js');
    const run = new HookRun('subagent_stop', process.env, process.cwd());
    const outcome = await readStdin(() => process.stdin)
      .then((stdin) => runLifecycle(run, stdin))
      .catch(async (err) => {
        await run.problem(err);
        return null;
      });
    const output = outcome && toProtocol(outcome);
    if (output) writeAllSync(1, `${JSON.stringify(output)}\n`);
    // After answering, and only when this hook touched the store: at most once per interval.
    if (outcome && (outcome.kind === 'applied' || outcome.kind === 'buffered') && (await claimSweepFor(run))) await startDetachedSweep();
    if (run.diagnostics.length > 0) writeAllSync(2, `${run.diagnostics.join('\n')}\n`);
  }
}

// Fail open even if the library cannot load: exit 0, no output.
main().catch(() => {
  process.exitCode = 0;
});

/** Claude Code gets nothing from this hook; an orchestrator using the earlier format gets its answer. */
function toProtocol(outcome: LifecycleOutcome): object | null {
  switch (outcome.kind) {
    case 'none':
    case 'applied':
    case 'buffered':
    case 'ignored':
      return null;
    case 'legacy':
      return outcome.answer;
    default:
      return unreachable(outcome);
  }
}

/** The sweep scans the store, so it must not delay Claude Code: a detached child nobody waits for. */
async function startDetachedSweep(): Promise<void> {
  const script = process.argv[1];
  if (!script) return;
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [script, '--sweep'], { detached: true, stdio: 'ignore', env: process.env, cwd: process.cwd() });
  child.on('error', () => undefined);
  child.unref();
}

function unreachable(outcome: never): never {
  throw new Error(`unhandled outcome ${JSON.stringify(outcome)}`);
}
