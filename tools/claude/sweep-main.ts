// The periodic tidy-up as its own bundle (dist/hooks/bundles/sweep.cjs): subagent_stop starts it
// detached, or runs it in the foreground with `--sweep`. It is the only hook code that cleans up, so
// the cleanup machinery (trees, trash, plans) stays out of the bundles Claude Code waits for.
import { HookRun, writeAllSync } from './runtime.js';
import { runSweep } from './sweep.js';

async function main(): Promise<void> {
  const run = new HookRun('sweep', process.env, process.cwd());
  const report = await runSweep(run).catch(async (err) => {
    await run.problem(err);
    return null;
  });
  if (report) writeAllSync(1, `${JSON.stringify(report)}\n`);
  if (run.diagnostics.length > 0) writeAllSync(2, `${run.diagnostics.join('\n')}\n`);
}

// Fails open like the hooks: exit 0, the problem in the hook log.
main().catch(() => {
  process.exitCode = 0;
});
