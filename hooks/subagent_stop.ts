#!/usr/bin/env node
// Claude Code hook for the agent lifecycle: SubagentStart, SubagentStop and PostToolUse of the
// subagent tool (the exact spawn-to-agent join); also callable by orchestrators with the earlier
// tool's format. Fails open: it never blocks a stop (no exit 2, no `decision: block`), prints
// nothing to Claude Code, and logs problems as one line each in <store>/.hooks.log.
// `--sweep` runs the periodic tidy-up (bundles/sweep.cjs) in the foreground; normally it is started
// detached from here.
import type { LifecycleOutcome } from '../tools/claude/lifecycle.js';

// The sweep's bundle (tools/claude/sweep-main.ts): the cleanup code is not part of this one.
const SWEEP_BUNDLE = `${__dirname}/sweep.cjs`;

// Bundled as CommonJS (no top-level await): the library and its built-in modules load only in main().
async function main(): Promise<void> {
  if (process.argv.includes('--sweep')) {
    // Its own bundle, next to this one (this bundle runs with __dirname set to bundles/). Run by a
    // person or a cron job, not by Claude Code: a missing bundle is an error, not a silent success.
    try {
      require(SWEEP_BUNDLE);
    } catch (err) {
      process.stderr.write(
        `agent-session: cannot load the sweep ${SWEEP_BUNDLE} (${String((err as Error).message).split('\n')[0]}); reinstall the package\n`,
      );
      process.exitCode = 4;
    }
  } else if (process.env.AGENT_SESSION_DISABLE !== '1') {
    // The kill switch is checked before the library is even evaluated (it is imported lazily).
    const { HookRun, readStdin, runLifecycle, claimSweepFor, writeAllSync } =
      await import('../tools/claude/lifecycle.js');
    const run = new HookRun('subagent_stop', process.env, process.cwd());
    const outcome = await readStdin(() => process.stdin)
      .then((stdin) => runLifecycle(run, stdin))
      .catch(async (err) => {
        await run.problem(err);
        return null;
      });
    const output = outcome && toProtocol(outcome);
    const written = [output ? writeAllSync(1, `${JSON.stringify(output)}\n`) : true];
    // After answering, and only when this hook touched the store: at most once per interval.
    if (outcome && (outcome.kind === 'applied' || outcome.kind === 'buffered') && (await claimSweepFor(run))) {
      // Nobody reads the detached child's stderr: a missing bundle is logged here, in the hook log.
      if (await sweepBundleExists()) await startDetachedSweep();
      else
        await run.problem(
          new Error(`cannot start the periodic sweep: ${SWEEP_BUNDLE} is missing; reinstall agent-session`),
        );
    }
    if (run.diagnostics.length > 0) written.push(writeAllSync(2, `${run.diagnostics.join('\n')}\n`));
    // Done (the sweep, if any, is already a process of its own), and everything is written: exit
    // without Node's teardown of the heap (about a millisecond).
    if (written.every(Boolean)) process.exit(0);
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

async function sweepBundleExists(): Promise<boolean> {
  const { statSync } = await import('node:fs');
  try {
    return statSync(SWEEP_BUNDLE).isFile();
  } catch {
    return false;
  }
}

/** The sweep scans the store, so it must not delay Claude Code: a detached child nobody waits for. */
async function startDetachedSweep(): Promise<void> {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [SWEEP_BUNDLE], {
    detached: true,
    stdio: 'ignore',
    env: process.env,
    cwd: process.cwd(),
  });
  child.on('error', () => undefined);
  child.unref();
}

function unreachable(outcome: never): never {
  throw new Error(`unhandled outcome ${JSON.stringify(outcome)}`);
}
