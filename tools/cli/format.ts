import { formatDistanceStrict } from 'date-fns/formatDistanceStrict';
import { escapeControls } from '../errors.js';
import { parseTimestamp } from '../time.js';

/** "12 minutes ago" (or "in 2 minutes" for a clock ahead of ours). */
export function relativeTime(timestamp: string | undefined, now: number): string {
  const at = parseTimestamp(timestamp);
  if (at === undefined) return 'unknown';
  if (Math.abs(now - at) < 1000) return 'just now';
  return formatDistanceStrict(at, now, { addSuffix: true });
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(header: string[], rows: string[][]): string[] {
  // A line break or tab in a purpose or agent name would break the table's rows and columns.
  const all = [header, ...rows.map((row) => row.map(escapeControls))];
  const widths = header.map((_, col) => Math.max(...all.map((row) => (row[col] ?? '').length)));
  return all.map((row) =>
    row
      .map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** A byte count for people: `79582 bytes (78 KiB)`, exact first so that scripts reading text still can. */
export function bytesText(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (bytes < 1024) return `${bytes} bytes`;
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) [value, unit] = [value / 1024, unit + 1];
  return `${bytes} bytes (${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]})`;
}
