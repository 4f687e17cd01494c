import { claimSweep } from '../../store/sweep-stamp.js';
import type { HookContext } from './hook-context.js';

/** Whether this hook process should start the sweep now (a failed claim throws: the caller logs it). */
export async function claimSweepFor({ sessions }: HookContext): Promise<boolean> {
  const minutes = sessions.settings.sweepIntervalMinutes;
  if (minutes <= 0) return false;
  return claimSweep(sessions.store.dir, sessions.now(), minutes * 60_000);
}
