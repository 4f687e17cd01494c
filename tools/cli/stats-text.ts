// `stats` as text: one aligned table per kind of figure, a row per group and one for the total. On a
// terminal (a palette that is enabled) the titles are bold and the outcomes coloured as everywhere else.
import { formatDuration } from 'date-fns/formatDuration';
import { intervalToDuration } from 'date-fns/intervalToDuration';
import type { FormatDistanceToken } from 'date-fns/locale';
import type { Phase } from '../phases.js';
import type { Group, Spread } from '../stats/groups.js';
import type { StatsReport } from '../stats/stats.js';
import type { Palette } from './colour.js';
import { bytesText, styledTable, table } from './format.js';

const KEY_HEADER = { agent: 'AGENT', day: 'DAY', outcome: 'OUTCOME' } as const;
/** Of the finished sessions: completed, failed, abandoned. */
const RATES = ['SUCCESS', 'FAILURE', 'ABANDONMENT'];
/**
 * The phases a session waits or works in, in the order the second durations table shows them; the wait for
 * approval, the one people ask about, has its column next to the time to finish in the first.
 */
const OTHER_PHASES: Phase[] = ['initializing', 'investigating', 'planning', 'executing', 'validating'];

/** The sessions table's columns that name a state, and the phase or outcome whose colour they take. */
const STATE_COLUMNS: Record<number, string> = {
  2: 'executing',
  3: 'approval',
  4: 'completed',
  5: 'failed',
  6: 'abandoned',
};

export function statsText(report: StatsReport, palette?: Palette): string[] {
  const bold = (text: string) => palette?.bold(text) ?? text;
  const byOutcome = report.by === 'outcome';
  // A group's key, coloured when it is an outcome; the figures of the state columns in that state's colour.
  const paintKey = (key: string) => (palette && byOutcome && key !== 'TOTAL' ? palette.phase(key, key) : key);
  const grid = (header: string[], cells: string[][], paint?: (col: number, text: string) => string) =>
    palette?.enabled
      ? styledTable(header, cells, {
          palette,
          width: Infinity,
          paint: (_row, col, text) => (col === 0 ? paintKey(text) : (paint?.(col, text) ?? text)),
        })
      : table(header, cells);
  const since = report.period.since ?? 'the first session';
  const head = bold(`Sessions started from ${since} to ${report.period.until}, by ${report.by}`);
  if (report.totals.sessions.started === 0) return [head, '', 'No sessions started in this period.', ...footer(report)];
  const rows: [string, Group][] = [...report.groups.map((g): [string, Group] => [g.key, g]), ['TOTAL', report.totals]];
  const key = KEY_HEADER[report.by];
  const approval = report.totals.durations_ms.phases.approval ? (['approval'] as Phase[]) : [];
  const phases = OTHER_PHASES.filter((p) => report.totals.durations_ms.phases[p]);
  const stateColour = (col: number, text: string) =>
    STATE_COLUMNS[col] && text !== '0' && palette ? palette.phase(STATE_COLUMNS[col], text) : text;
  return [
    head,
    '',
    ...grid(
      [key, 'STARTED', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'ABANDONED', ...RATES, 'ERRORS'],
      rows.map(([k, g]) => [
        k,
        ...[g.sessions.started, g.sessions.running, g.sessions.paused, g.sessions.completed, g.sessions.failed].map(n),
        n(g.sessions.abandoned),
        percent(g.rates.success),
        percent(g.rates.failure),
        percent(g.rates.abandonment),
        n(g.errors),
      ]),
      stateColour,
    ),
    '',
    bold('Resumes of paused sessions (same agent: SendMessage; new agent: the brief; cli: without an agent)'),
    ...grid(
      [key, 'PAUSED', 'RESUMED', 'RATE', 'SAME AGENT', 'NEW AGENT', 'CLI', 'EXPIRED'],
      rows.map(([k, { resumes: r }]) => [
        k,
        n(r.paused),
        n(r.resumed),
        percent(r.rate),
        n(r.same_agent),
        n(r.new_agent),
        n(r.other),
        n(r.expired),
      ]),
    ),
    '',
    bold('Durations, median / 90th percentile: to finish, and waiting for approval'),
    ...grid(
      [key, 'TO FINISH', ...approval.map((p) => p.toUpperCase())],
      rows.map(([k, g]) => [
        k,
        spreadText(g.durations_ms.to_finish),
        ...approval.map((p) => spreadText(g.durations_ms.phases[p])),
      ]),
    ),
    '',
    ...(phases.length === 0
      ? []
      : [
          bold('Time in the other phases, median / 90th percentile (the phases a session left)'),
          ...grid(
            [key, ...phases.map((p) => p.toUpperCase())],
            rows.map(([k, g]) => [k, ...phases.map((p) => spreadText(g.durations_ms.phases[p]))]),
          ),
          '',
        ]),
    bold("Tokens (from the agents' transcripts; with children: the sessions and all their descendants)"),
    ...grid(
      [key, 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'ALL', 'ALL WITH CHILDREN'],
      rows.map(([k, { tokens: t, tokens_with_children: w }]) => [
        k,
        n(t.input),
        n(t.output),
        n(t.cache_read),
        n(t.cache_write),
        n(t.input + t.output + t.cache_read + t.cache_write),
        n(w.input + w.output + w.cache_read + w.cache_write),
      ]),
    ),
    ...footer(report),
  ];
}

function footer(report: StatsReport): string[] {
  const { read, missing } = report.transcripts;
  const trash = report.trash;
  return [
    '',
    `Transcripts: ${n(read)} read${missing > 0 ? `, ${n(missing)} not found` : ''}`,
    `Trash: ${n(trash.entries)} ${trash.entries === 1 ? 'entry' : 'entries'}, ${bytesText(trash.bytes)}`,
  ];
}

function n(value: number): string {
  return value.toLocaleString('en-US');
}

function percent(rate: number | null): string {
  return rate === null ? '-' : `${Math.round(rate * 100)}%`;
}

function spreadText(spread: Spread | undefined): string {
  if (!spread || spread.median === null || spread.p90 === null) return '-';
  return `${durationText(spread.median)} / ${durationText(spread.p90)}`;
}

/** Each unit of a duration as a number and a letter or two, through date-fns's locale interface. */
const UNIT: Partial<Record<FormatDistanceToken, string>> = {
  xYears: 'y',
  xMonths: 'mo',
  xWeeks: 'w',
  xDays: 'd',
  xHours: 'h',
  xMinutes: 'm',
  xSeconds: 's',
};
const COMPACT = { formatDistance: (token: FormatDistanceToken, count: number) => `${count}${UNIT[token] ?? ''}` };

/** The two largest units, printed by date-fns compactly: "2h 5m", "6m 47s", "3d 4h", "40s". */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const duration = intervalToDuration({ start: 0, end: ms });
  const units = (['years', 'months', 'days', 'hours', 'minutes', 'seconds'] as const).filter((u) => duration[u]);
  return formatDuration(duration, { format: units.slice(0, 2), locale: COMPACT });
}
