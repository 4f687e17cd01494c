import type { Argv as Yargs } from 'yargs';
import { parseDuration } from '../../audit/duration.js';
import { SessionError } from '../../errors.js';
import { computeStats, STATS_GROUPINGS, type StatsGrouping } from '../../stats/stats.js';
import { parseTimestamp } from '../../time.js';
import type { Argv } from '../command-context.js';
import { statsText } from '../stats-text.js';
import { openExisting } from '../store-origin.js';

interface Args {
  since?: string;
  until?: string;
  by?: string;
}

export const command = 'stats';
export const describe = 'How the sessions of a period fared: outcomes, resumes, durations, tokens';

export function builder(yargs: Yargs) {
  return yargs
    .option('since', {
      type: 'string',
      requiresArg: true,
      describe: 'Only sessions started since: 24h, 7d, 2w, a date (2026-11-01) or an ISO timestamp',
    })
    .option('until', {
      type: 'string',
      requiresArg: true,
      describe: 'Only sessions started until then (a date counts to its end; default: now)',
    })
    .option('by', { type: 'string', requiresArg: true, describe: 'Group by agent (the default), day or outcome' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  // Usage errors first, wherever the store is.
  const by = grouping(argv.by);
  const now = ctx.io.now?.() ?? Date.now();
  const since = argv.since === undefined ? undefined : pointInTime(argv.since, '--since', now, 'start');
  const until = argv.until === undefined ? undefined : pointInTime(argv.until, '--until', now, 'end');
  const sessions = openExisting(argv);
  const report = await computeStats(sessions, { since, until, by, now: new Date(now) });
  for (const p of report.problems) ctx.warn(`skipped ${p.id} (${p.code}): ${p.message}`);
  if (argv.json) return ctx.json(report);
  const { palette } = ctx.style;
  return palette.enabled ? ctx.outStyled(statsText(report, palette)) : ctx.outLines(statsText(report));
}

function grouping(text: string | undefined): StatsGrouping {
  if (text === undefined) return 'agent';
  if ((STATS_GROUPINGS as readonly string[]).includes(text)) return text as StatsGrouping;
  throw new SessionError('EINVALID', `--by must be one of ${STATS_GROUPINGS.join(', ')}, not ${JSON.stringify(text)}`);
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A date and a time of day without `Z` or an offset: which zone it means cannot be guessed. */
const NO_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?$/;
/** The first instant of the year 0: a duration reaching back beyond it is no period anyone means. */
const YEAR_0 = Date.parse('0000-01-01T00:00:00Z');

/**
 * A duration back from now (`7d`), a day (`2026-11-01`, UTC: its start for --since, its end for --until) or
 * an ISO 8601 timestamp with a zone.
 */
function pointInTime(text: string, flag: string, now: number, side: 'start' | 'end'): Date {
  const day = DAY.exec(text.trim());
  if (day) {
    const start = Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]));
    if (new Date(start).toISOString().slice(0, 10) === text.trim())
      return new Date(side === 'start' ? start : start + 86_400_000 - 1);
  }
  const at = parseTimestamp(text.trim());
  if (at !== undefined) return new Date(at);
  if (NO_ZONE.test(text.trim()))
    throw new SessionError(
      'EINVALID',
      `${flag} ${JSON.stringify(text)} has no zone: add Z (UTC) or an offset, as in 2026-11-01T10:00:00Z ` +
        'or 2026-11-01T10:00:00+01:00',
    );
  let back: number;
  try {
    back = parseDuration(text);
  } catch {
    throw new SessionError(
      'EINVALID',
      `${flag} takes a duration (24h, 7d, 2w), a date (2026-11-01) or an ISO timestamp, not ${JSON.stringify(text)}`,
    );
  }
  if (!(now - back >= YEAR_0))
    throw new SessionError(
      'EINVALID',
      `${flag} ${JSON.stringify(text)} reaches back before the year 0: use a shorter duration or a date`,
    );
  return new Date(now - back);
}
