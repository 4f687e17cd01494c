// Zone required: the `agent_session.py` state files of gaia-ops v3.5.1 hold `+00:00`, and a bare local
// time must not pass as UTC.
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
/** The form the store writes (toISOString). */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * `new Date(ms).toISOString()`, built from the UTC fields: in Node 20's V8, toISOString also looks up
 * the local time zone (which it does not print), and that first lookup costs each hook about 0.2 ms.
 */
export function formatTimestamp(ms: number): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  // Out of toISOString's four-digit years (and invalid dates): its own form, or its RangeError.
  if (!(year >= 0 && year <= 9999)) return d.toISOString();
  const day = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const clock = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return `${day}T${clock}.${pad(d.getUTCMilliseconds(), 3)}Z`;
}

function pad(n: number, digits: number): string {
  return String(n).padStart(digits, '0');
}

/** Epoch milliseconds, or undefined when the text is not an ISO 8601 timestamp with a zone. */
export function parseTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  // What the store writes: Date.parse takes it as is (list and cleanup parse tens of thousands).
  if (CANONICAL.test(value)) {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  const match = TIMESTAMP.exec(value);
  if (!match) return undefined;
  const [, base, fraction = '', zone] = match;
  const ms = Date.parse(`${base}.${fraction.padEnd(3, '0').slice(0, 3)}${zone}`);
  return Number.isNaN(ms) ? undefined : ms;
}
