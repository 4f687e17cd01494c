import { formatDistanceStrict } from 'date-fns/formatDistanceStrict';
import { escapeControls } from '../errors.js';
import { cutToWidth, displayWidth, type Palette } from './colour.js';
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

/** How `styledTable` colours and fits a table on a terminal. */
export interface TableStyle {
  palette: Palette;
  /** The terminal's width: the last column is cut to what is left of it. */
  width: number;
  /** Colours one cell of a row (row 0 is the first row after the header); plain text in, text out. */
  paint?(row: number, col: number, text: string): string;
}

/** The narrowest the last column (a purpose) is cut to, however little room the others leave. */
const MIN_LAST_COLUMN = 12;

/**
 * `table` for a terminal: widths by display width (colour codes and wide characters counted right), the header
 * in bold, each cell coloured by `paint`, the last column cut to the width with an ellipsis, and a line that is
 * still wider than the terminal (columns wider than it leaves room for) cut where the terminal ends. Escapes like
 * `table`.
 */
export function styledTable(header: string[], rows: string[][], style: TableStyle): string[] {
  const all = [header, ...rows.map((row) => row.map(escapeControls))];
  const last = header.length - 1;
  const widths = header.map(() => 0);
  for (const row of all)
    for (let col = 0; col < last; col++) widths[col] = Math.max(widths[col]!, displayWidth(row[col] ?? ''));
  const room = Math.max(style.width - widths.slice(0, last).reduce((sum, w) => sum + w + 2, 0), MIN_LAST_COLUMN);
  return all.map((row, i) => {
    const cells: string[] = [];
    let used = 0;
    for (const [col, cell] of row.entries()) {
      const left = style.width - used - (col > 0 ? 2 : 0);
      if (left <= 0) break;
      let text = col === last ? cutToWidth(cell, room) : cell;
      const cut = displayWidth(text) > left;
      if (cut) text = cutToWidth(text, left);
      const painted = i === 0 ? style.palette.bold(text) : (style.paint?.(i - 1, col, text) ?? text);
      const padded =
        col === last || cut ? painted : painted + ' '.repeat(Math.max(widths[col]! - displayWidth(text), 0));
      cells.push(padded);
      used +=
        (col > 0 ? 2 : 0) + (col === last || cut ? displayWidth(text) : Math.max(widths[col]!, displayWidth(text)));
      if (cut) break;
    }
    return cells.join('  ').trimEnd();
  });
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
