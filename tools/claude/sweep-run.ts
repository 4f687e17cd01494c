import { claimSweep } from '../store/sweep-stamp.js';
import type { HookRun } from './runtime.js';

/** Whether this hook process should start the sweep now (never throws: a failed claim is no sweep). */
export async function claimSweepFor(run: HookRun): Promise<boolean> {
  try {
    const { sessions } = run.context();
    const minutes = sessions.settings.sweepIntervalMinutes;
    if (minutes <= 0) return false;
    const claimed = await claimSweep(sessions.store.dir, sessions.now(), minutes * 60_000);
    if (claimed) run.note('starting the periodic sweep (detached)');
    return claimed;
  } catch (err) {
    await run.problem(err);
    return false;
  }
}
