#!/usr/bin/env node
// Claude Code hook for the agent lifecycle: SubagentStart, SubagentStop and PostToolUse of the
// subagent tool (the exact spawn-to-agent join); also callable by orchestrators with the legacy
// format. Fails open: it never blocks a stop (no exit 2, no `decision: block`), prints nothing to
// Claude Code, and logs problems as one line each in <store>/.hooks.log.
// `--sweep` runs the periodic tidy-up (bundles/sweep.cjs) in the foreground; normally it is started
// detached from here.

// The sweep's bundle (tools/claude/run/sweep-main.ts), next to this one (this bundle runs with
// __dirname set to bundles/): the cleanup code is not part of this one.
const SWEEP_BUNDLE = `${__dirname}/sweep.cjs`;

// Bundled as CommonJS (no top-level await): the library and its built-in modules load only in main().
async function main(): Promise<void> {
  if (process.argv.includes('--sweep')) {
    // Run by a person or a cron job, not by Claude Code: a missing bundle is an error, not a silent success.
    try {
      require(SWEEP_BUNDLE);
    } catch (err) {
      const why = String((err as Error).message).split('\n')[0];
      process.stderr.write(`agent-session: cannot load the sweep ${SWEEP_BUNDLE} (${why}); reinstall the package\n`);
      process.exitCode = 4;
    }
    return;
  }
  if (process.env.AGENT_SESSION_DISABLE === '1') return;
  // The kill switch is checked before the library is even evaluated (it is imported lazily).
  const { runHook, subagentStop } = await import('../tools/claude/run/subagent-stop-hook.js');
  // Done (the sweep, if any, is already a process of its own), and everything is written: exit
  // without Node's teardown of the heap (about a millisecond).
  if (await runHook(subagentStop(SWEEP_BUNDLE))) process.exit(0);
}

// Fail open even if the library cannot load: exit 0, no output.
main().catch(() => {
  process.exitCode = 0;
});
