import { randomHex } from './random.js';
import { SessionError } from './errors.js';
import { formatTimestamp } from './time.js';

const ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id);
}

/** Ids become directory names, so they are checked wherever they enter. */
export function assertValidId(id: unknown, what = 'session id'): asserts id is string {
  if (isValidId(id)) return;
  const shown = typeof id === 'string' ? JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id) : typeof id;
  throw new SessionError(
    'EINVALID',
    `invalid ${what} ${shown}: use 1-128 characters of A-Z a-z 0-9 . _ - not starting with "."`,
    { details: { id } },
  );
}

/** `agent-YYYYMMDD-HHMMSS-<8 hex>`, in UTC. */
export function generateId(now: Date, random: () => string = () => randomHex(8)): string {
  const iso = formatTimestamp(now.getTime()); // 2026-11-22T14:15:00.000Z
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
  return `agent-${stamp}-${random()}`;
}
