// The screen of `watch` as lines: a snapshot of the store, the clock, the terminal's size and the palette in,
// at most `height` lines of at most `width` columns out. No terminal here: tests call it with any size.
import { escapeControls } from '../errors.js';
import { cutToWidth, displayWidth, padToWidth, type Palette } from '../cli/colour.js';
import type { FinishedRow, OpenRow, WatchSnapshot } from './watch-model.js';

export interface WatchView {
  snapshot: WatchSnapshot;
  now: number;
  width: number;
  height: number;
  palette: Palette;
  /** Only the sessions waiting for approval (the `a` key). */
  approvalOnly: boolean;
  /** The store's directory, for the title. */
  store: string;
}

/** The widest the agent column gets, however deep the tree or long an agent type. */
const MAX_NAME = 28;
const PHASE_WIDTH = 'investigating'.length;
const OUTCOME_WIDTH = 'abandoned'.length + 2;
/** Finished sessions kept on screen even when the open ones would fill it. */
const MIN_FINISHED = 3;
const SEP = ' \u00b7 ';
const GLYPH: Record<string, string> = { completed: '\u2713', failed: '\u2717', abandoned: '-' };

export function layoutWatch(view: WatchView): string[] {
  const { snapshot, palette, approvalOnly } = view;
  const width = Math.max(view.width, 20);
  const height = Math.max(view.height, 6);
  // Only what waits for approval: a flat list (their parents are not shown, so no tree lines).
  const open = approvalOnly
    ? snapshot.open.filter((r) => r.phase === 'approval').map((r) => ({ ...r, depth: 0 }))
    : snapshot.open;
  const glyph = branchGlyphs(open);
  const nameText = (r: OpenRow) => `${'  '.repeat(Math.max(r.depth - 1, 0))}${glyph.get(r) ?? ''}${esc(r.agent)}`;
  const finished = approvalOnly ? [] : snapshot.finished;
  const nameWidth = Math.min(
    // Measured on the rows that can be on screen: a store can have thousands open.
    Math.max(
      5,
      ...open.slice(0, height).map((r) => displayWidth(nameText(r))),
      ...finished.slice(0, height).map((r) => displayWidth(esc(r.agent))),
    ),
    MAX_NAME,
    // On a narrow terminal the agent column gives way first, so that phase and age stay whole.
    Math.max(width - PHASE_WIDTH - 4 - 16, 6),
  );
  const lines = [title(view, width), summary(view, width), ''];
  lines.push(palette.bold(approvalOnly ? 'Waiting for approval' : 'Running and paused'));
  const finishedRoom = finished.length > 0 ? 2 + Math.min(MIN_FINISHED, finished.length) : 0;
  const openRoom = Math.max(height - lines.length - finishedRoom, 1);
  if (open.length === 0)
    lines.push(palette.dim(approvalOnly ? '  nothing waits for approval' : '  nothing running or paused'));
  lines.push(
    ...bounded(open, openRoom, (r) => openLine(r, view, cutToWidth(nameText(r), nameWidth), nameWidth, width), palette),
  );
  const left = height - lines.length - 2;
  if (finished.length > 0 && left > 0) {
    lines.push('', palette.bold('Finished'));
    lines.push(...bounded(finished, left, (r) => finishedLine(r, view, nameWidth, width), palette));
  }
  return lines.slice(0, height).map((line) => (displayWidth(line) > width ? cutToWidth(plainText(line), width) : line));
}

/** A line without its colour codes: what is cut when a line is still too wide for a very narrow terminal. */
function plainText(line: string): string {
  return line.replace(/\u001b\[[0-9;]*m/g, '');
}

/** Up to `room` lines for `rows`, the last of them "… N more" when they do not all fit. */
function bounded<T>(rows: T[], room: number, line: (row: T) => string, palette: Palette): string[] {
  if (rows.length <= room) return rows.map(line);
  const shown = Math.max(room - 1, 0);
  return [...rows.slice(0, shown).map(line), palette.dim(`  \u2026 ${rows.length - shown} more`)];
}

function title(view: WatchView, width: number): string {
  const keys = `q quit${SEP}a ${view.approvalOnly ? 'show all' : 'approval only'}`;
  const name = 'agent-session watch';
  const store = cutToWidth(esc(view.store), Math.max(width - name.length - keys.length - 4, 0));
  const left = `${view.palette.bold(name)}  ${view.palette.dim(store)}`;
  const gap = Math.max(width - displayWidth(left) - keys.length, 1);
  return displayWidth(left) + gap + keys.length <= width ? `${left}${' '.repeat(gap)}${view.palette.dim(keys)}` : left;
}

function summary(view: WatchView, width: number): string {
  const { counts } = view.snapshot;
  const { palette } = view;
  type Part = readonly [string, (text: string) => string];
  const parts: Part[] = [
    [`\u25b6 ${counts.running} running`, (text) => palette.phase('executing', text)],
    [`${counts.approval} waiting for approval`, (text) => palette.phase('approval', text)],
    ...(counts.paused > 0
      ? [[`${counts.paused} paused`, (text: string) => palette.phase('planning', text)] as Part]
      : []),
    [`${counts.finishedToday} finished today`, (text) => palette.outcome('completed', text)],
  ];
  const plain = parts.map(([text]) => text).join(SEP);
  // Too narrow for the whole line: the counts in order, cut, without colour.
  if (displayWidth(plain) > width) return cutToWidth(plain, width);
  return parts.map(([text, paint]) => paint(text)).join(SEP);
}

/**
 * The tree line before each child (rows in tree order, children after their parent): `├ ` when a later sibling
 * follows, `└ ` for the last one. One pass from the end, remembering at each depth whether a sibling is below.
 */
function branchGlyphs(rows: OpenRow[]): Map<OpenRow, string> {
  const glyphs = new Map<OpenRow, string>();
  const siblingBelow: boolean[] = [];
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    if (row.depth > 0) glyphs.set(row, siblingBelow[row.depth] ? '\u251c ' : '\u2514 ');
    siblingBelow[row.depth] = true;
    siblingBelow.length = row.depth + 1;
  }
  return glyphs;
}

function openLine(r: OpenRow, view: WatchView, name: string, nameWidth: number, width: number): string {
  const { palette, now } = view;
  const head = `${padToWidth(name, nameWidth)}  ${padToWidth(r.phase, PHASE_WIDTH)}  ${age(now - r.startedMs)}  `;
  const room = Math.max(width - displayWidth(head), 0);
  const purpose = esc(r.purpose ?? '');
  let rest = cutToWidth(purpose, room);
  let waits = '';
  if (r.paused) {
    const { sinceMs, waitsFor, note, question } = r.paused;
    const said = question ? `: "${esc(question)}"` : '';
    const text = `waits ${age(now - sinceMs).trim()} for ${waitsFor}${note ? ` (${note})` : ''}${said}`;
    // The purpose names the session, the wait says what to do: each gets half the room when both do not fit.
    rest = cutToWidth(purpose, Math.max(room - displayWidth(text) - SEP.length, Math.floor(room / 2)));
    const after = rest ? SEP : '';
    waits = after + cutToWidth(text, Math.max(room - displayWidth(rest) - after.length, 0));
  }
  const coloured =
    `${padToWidth(name, nameWidth)}  ${palette.phase(r.phase, padToWidth(r.phase, PHASE_WIDTH))}  ` +
    `${palette.dim(age(now - r.startedMs))}  `;
  return `${coloured}${rest}${waits ? palette.phase(r.phase, waits) : ''}`.trimEnd();
}

function finishedLine(r: FinishedRow, view: WatchView, nameWidth: number, width: number): string {
  const { palette, now } = view;
  const outcome = padToWidth(`${GLYPH[r.outcome] ?? ' '} ${r.outcome}`, OUTCOME_WIDTH);
  const name = padToWidth(cutToWidth(esc(r.agent), nameWidth), nameWidth);
  const when = `${age(now - r.finishedMs)} ago`;
  const room = Math.max(width - OUTCOME_WIDTH - nameWidth - when.length - 6, 0);
  const purpose = cutToWidth(esc(r.purpose ?? ''), room);
  return `${palette.outcome(r.outcome, outcome)}  ${name}  ${palette.dim(when)}  ${purpose}`.trimEnd();
}

/** A duration in four columns: "12s", " 5m", " 3h", "4d". */
export function age(ms: number): string {
  const s = Math.max(Math.floor(ms / 1000), 0);
  const text =
    s < 60
      ? `${s}s`
      : s < 3600
        ? `${Math.floor(s / 60)}m`
        : s < 172_800
          ? `${Math.floor(s / 3600)}h`
          : `${Math.floor(s / 86_400)}d`;
  return text.padStart(4);
}

function esc(text: string): string {
  return escapeControls(text);
}
