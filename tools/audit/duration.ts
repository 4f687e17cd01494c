import { SessionError } from '../errors.js';
import { parseTimestamp } from '../time.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d+(?:\.\d+)?)\s*([smhdw])$/;

/** `30m`, `2h`, `7d` (also `s`, `w`) in milliseconds; EINVALID otherwise. */
export function parseDuration(text: string): number {
  const match = DURATION.exec(text.trim());
  if (!match)
    throw new SessionError(
      'EINVALID',
      `invalid duration ${JSON.stringify(text)}: use a number and a unit, like 30m, 2h or 7d`,
    );
  return Number(match[1]) * UNITS[match[2]!]!;
}

/** A `since` given as epoch ms, an ISO 8601 timestamp, or a duration back from `now`. */
export function resolveSince(since: number | string | undefined, now: number): number | undefined {
  if (since === undefined || typeof since === 'number') return since;
  return parseTimestamp(since) ?? now - parseDuration(since);
}
