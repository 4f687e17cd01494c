// The periodic sweep as its own bundle (dist/hooks/bundles/sweep.cjs): subagent_stop starts it
// detached, or runs it in the foreground with `--sweep`. It is the only hook code that cleans up, so
// the cleanup machinery (trees, trash, plans) stays out of the bundles Claude Code waits for.
import { runSweep } from '../events/periodic-sweep.js';
import { writeAllSync } from '../../stdio.js';
import { HookRun } from './hook-process.js';

async function main(): Promise<void> {
  const run = new HookRun('sweep', process.env, process.cwd());
  const report = await Promise.resolve()
    .then(() => runSweep(run.context()))
    .catch(async (err) => {
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
