import { isSessionError } from '../errors.js';
import { readHookLog } from '../store/hook-log.js';
import { parseTimestamp } from '../time.js';
import type { Found } from './checks.js';

/** The hook log looks back this far: older failures were seen, or fixed since. */
export const HOOK_FAILURE_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * The hooks' failures of the last day (`.hooks.log`): one warning per error code, with the count and
 * the last message. The hooks fail open, so this is where a delegation that recorded nothing shows.
 */
export function checkHookFailures(storeDir: string, now: number): Found[] {
  const since = now - HOOK_FAILURE_WINDOW_MS;
  let log;
  try {
    log = readHookLog(storeDir);
  } catch (err) {
    // A link or FIFO at the log's name is the layout check's finding.
    if (isSessionError(err, 'ECORRUPT')) return [];
    throw err;
  }
  const recent = log.filter((e) => (parseTimestamp(e.time) ?? 0) >= since);
  const byCode = new Map<string, typeof recent>();
  for (const entry of recent) byCode.set(entry.code, [...(byCode.get(entry.code) ?? []), entry]);
  return [...byCode].map(([code, entries]) => {
    const last = entries[entries.length - 1]!;
    return {
      check: 'hook-log' as const,
      severity: 'warning' as const,
      subject: '.hooks.log',
      message:
        `${entries.length} hook run(s) failed open with ${code} in the last day, the last at ${last.time} ` +
        `(${last.hook} ${last.event}): ${last.message}`,
      repair: null,
    };
  });
}
