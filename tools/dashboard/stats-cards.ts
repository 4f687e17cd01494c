import type { StatsReport } from '../stats/stats.js';

/** One card of the page: a figure and the line under it, as text (the page escapes and lays them out). */
export interface StatsCard {
  title: string;
  value: string;
  detail: string;
}

/** The cards of one period, from the stats contract's totals; null (no stats) gives none. */
export function statsCards(report: StatsReport | null): StatsCard[] | null {
  if (!report) return null;
  const t = report.totals;
  const s = t.sessions;
  const trash = report.trash;
  const finish = t.durations_ms?.to_finish ?? null;
  const tokens = t.tokens.input + t.tokens.output + t.tokens.cache_read + t.tokens.cache_write;
  return [
    {
      title: 'sessions',
      value: n(s.started),
      detail:
        `${n(s.running)} running, ${n(s.paused)} paused, ${n(s.completed)} completed, ` +
        `${n(s.failed)} failed, ${n(s.abandoned)} abandoned`,
    },
    {
      title: 'success',
      value: percent(t.rates.success),
      detail: `failure ${percent(t.rates.failure)}, abandonment ${percent(t.rates.abandonment)}`,
    },
    {
      title: 'resumes',
      value: percent(t.resumes.rate),
      detail:
        `${n(t.resumes.same_agent)} same agent, ${n(t.resumes.new_agent)} new agent, ` +
        `${n(t.resumes.other)} cli, ${n(t.resumes.expired)} expired of ${n(t.resumes.paused)} paused`,
    },
    {
      title: 'time to finish',
      value: duration(finish?.median ?? null),
      detail: `median; p90 ${duration(finish?.p90 ?? null)}`,
    },
    {
      title: 'errors',
      value: n(t.errors),
      detail: `trash: ${count(trash.entries, 'entry', 'entries')}, ${count(trash.bytes, 'byte', 'bytes')}`,
    },
    {
      title: 'tokens',
      value: n(tokens),
      detail:
        `in ${n(t.tokens.input)}, out ${n(t.tokens.output)}, ` +
        `cache read ${n(t.tokens.cache_read)}, cache write ${n(t.tokens.cache_write)}`,
    },
  ];
}

function percent(rate: number | null): string {
  return rate === null ? '-' : `${Math.round(rate * 100)}%`;
}

function duration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

function count(value: number, one: string, many: string): string {
  return `${n(value)} ${value === 1 ? one : many}`;
}

/** Figures as the CLI writes them (`11,530`). */
function n(value: number): string {
  return value.toLocaleString('en-US');
}
