// Zone required: the earlier tool wrote `+00:00`, and a bare local time must not pass as UTC.
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;
/** The form the store writes (toISOString). */
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
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
