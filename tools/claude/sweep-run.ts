import { claimSweep, writeSweepReport } from '../store/sweep-stamp.js';
import type { HookRun } from './runtime.js';
import { sweep, type SweepReport } from './sweep.js';

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

export async function runSweep(run: HookRun): Promise<SweepReport> {
  const { sessions, index } = run.context();
  const report = await sweep(sessions, index);
  await writeSweepReport(sessions.store.dir, { finished_at: new Date(sessions.now()).toISOString(), ...report });
  return report;
}

export { HookRun, writeAllSync } from './runtime.js';
