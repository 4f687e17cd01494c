import { randomHex } from './random.js';
import { SessionError } from './errors.js';
import { formatTimestamp } from './time.js';

const ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
/**
 * Names the store keeps at its top level without a leading dot (the audit trail, tools/store/audit-log.ts).
 * Case-insensitive: on macOS `Audit.jsonl` is the same file.
 */
const RESERVED = /^audit(\.\d+)?\.jsonl$/i;

export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && ID_PATTERN.test(id) && !RESERVED.test(id);
}

/** Ids become directory names, so they are checked wherever they enter. */
export function assertValidId(id: unknown, what = 'session id'): asserts id is string {
  if (isValidId(id)) return;
  const shown = typeof id === 'string' ? JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id) : typeof id;
  if (typeof id === 'string' && RESERVED.test(id)) {
    throw new SessionError(
      'EINVALID',
      `invalid ${what} ${shown}: the name is reserved by the store (its audit trail); choose another`,
      { details: { id } },
    );
  }
  throw new SessionError(
    'EINVALID',
    `invalid ${what} ${shown}: use 1-128 characters of A-Z a-z 0-9 . _ - not starting with "."`,
    { details: { id } },
  );
}

/** `agent-YYYYMMDD-HHMMSS-<8 hex>`, in UTC. */
export function generateId(now: Date, random: () => string = () => randomHex(8)): string {
  const iso = formatTimestamp(now.getTime()); // 2026-11-22T14:15:00.000Z
  const day = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}`;
  const stamp = `${day}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
  return `agent-${stamp}-${random()}`;
}
