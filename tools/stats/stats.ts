// `agent-session stats`: how the sessions started in a period fared, grouped by agent type, day or outcome.
// One pass over the records, then the agents' transcripts through the token cache, then the trash's size.
import { SessionError } from '../errors.js';
import type { SessionContext } from '../session-context.js';
import type { StoreProblem } from '../store/store.js';
import type { TokenSums } from '../store/transcript-cache.js';
import { formatTimestamp } from '../time.js';
import { listTrash } from '../trees/restore.js';
import { GroupTally, type Group } from './groups.js';
import { sessionFacts, type AgentTranscript, type SessionFacts } from './session-facts.js';
import { sessionTokens, type TranscriptCounts } from './tokens.js';
import { checkOptions, type OptionKeys } from '../options.js';

export const STATS_VERSION = 1;
export const STATS_GROUPINGS = ['agent', 'day', 'outcome'] as const;
export type StatsGrouping = (typeof STATS_GROUPINGS)[number];

export interface StatsOptions {
  /** Sessions created at or after this instant (default: all). */
  since?: Date;
  /** Sessions created at or before this instant (default: now). */
  until?: Date;
  by?: StatsGrouping;
  now?: Date;
}

export interface StatsReport {
  version: typeof STATS_VERSION;
  period: { since: string | null; until: string };
  by: StatsGrouping;
  totals: Group;
  groups: Array<{ key: string } & Group>;
  trash: { entries: number; bytes: number; sessions: number };
  transcripts: TranscriptCounts;
  /** Records that could not be read (as `list` reports them); they are in no figure. */
  problems: StoreProblem[];
}

/** The order of the groups of `--by outcome`. */
const STATES = ['completed', 'failed', 'abandoned', 'running', 'paused'];

const STATS_KEYS: OptionKeys<StatsOptions> = { since: true, until: true, by: true, now: true };

export async function computeStats(context: SessionContext, options: StatsOptions = {}): Promise<StatsReport> {
  checkOptions(options, STATS_KEYS, 'computeStats');
  const by = options.by ?? 'agent';
  if (!(STATS_GROUPINGS as readonly string[]).includes(by))
    throw new SessionError('EINVALID', `cannot group by ${JSON.stringify(by)}: use ${STATS_GROUPINGS.join(', ')}`);
  const now = options.now?.getTime() ?? context.now();
  const since = checkDate(options.since, 'since');
  const until = checkDate(options.until, 'until') ?? now;
  if (since !== undefined && since > until)
    throw new SessionError('EINVALID', `the period starts (${iso(since)}) after it ends (${iso(until)})`);

  const rules = context.rules;
  const inPeriod: SessionFacts[] = [];
  const parents = new Map<string, string | null>();
  const transcripts = new Map<string, AgentTranscript[]>();
  const problems = context.store.scanEach((record) => {
    const facts = sessionFacts(record, now, rules);
    parents.set(facts.id, facts.parent);
    if (facts.transcripts.length > 0) transcripts.set(facts.id, facts.transcripts);
    if (facts.created >= (since ?? -Infinity) && facts.created <= until) {
      facts.transcripts = [];
      inPeriod.push(facts);
    }
  });

  const keyOf = (f: SessionFacts) =>
    by === 'agent' ? f.agent : by === 'day' ? formatTimestamp(f.created).slice(0, 10) : f.state;
  const groupOf = new Map(inPeriod.map((f) => [f.id, keyOf(f)]));
  // Each session with the groups it or its ancestors belong to: its tokens count for each once.
  const counted = new Map<string, Set<string>>();
  for (const id of transcripts.keys()) {
    const keys = ancestorGroups(id, parents, groupOf);
    if (keys.size > 0) counted.set(id, keys);
  }
  const wanted = new Map([...counted.keys()].map((id) => [id, transcripts.get(id)!]));
  const known = { paths: new Set<string>(), agents: new Set<string>() };
  for (const agents of transcripts.values())
    for (const { agent, paths } of agents) {
      for (const path of paths) known.paths.add(path);
      if (agent !== null) known.agents.add(agent);
    }
  const tokens = await sessionTokens(context.store.dir, wanted, known);

  const totals = new GroupTally();
  const tallies = new Map<string, GroupTally>();
  for (const facts of inPeriod) {
    const key = groupOf.get(facts.id)!;
    const tally = tallies.get(key) ?? new GroupTally();
    tallies.set(key, tally);
    const own = tokens.bySession.get(facts.id);
    tally.add(facts, own);
    totals.add(facts, own);
  }
  for (const [id, sums] of tokens.bySession) {
    totals.addDescendantTokens(sums);
    for (const key of counted.get(id) ?? []) tallies.get(key)!.addDescendantTokens(sums);
  }

  const trash = await trashSize(context);
  return {
    version: STATS_VERSION,
    period: { since: since === undefined ? null : iso(since), until: iso(until) },
    by,
    totals: totals.result(),
    groups: orderGroups(
      by,
      [...tallies].map(([key, tally]) => ({ key, ...tally.result() })),
    ),
    trash,
    transcripts: tokens.transcripts,
    problems,
  };
}

/**
 * One session's own tokens, from its agents' transcripts through the token cache (as `stats` counts them),
 * or null when it has no transcript with usage in it, or no longer exists.
 */
export async function sessionTokenSums(context: SessionContext, id: string): Promise<TokenSums | null> {
  const record = await context.store.read(id);
  if (record === undefined) return null;
  const facts = sessionFacts(record, context.now(), context.rules);
  if (facts.transcripts.length === 0) return null;
  const { bySession } = await sessionTokens(context.store.dir, new Map([[id, facts.transcripts]]));
  return bySession.get(id) ?? null;
}

/** The groups of the session and of its ancestors that are in the period (a parent cycle ends the walk). */
function ancestorGroups(id: string, parents: Map<string, string | null>, groupOf: Map<string, string>): Set<string> {
  const keys = new Set<string>();
  const seen = new Set<string>();
  for (let at: string | null | undefined = id; at && !seen.has(at); at = parents.get(at)) {
    seen.add(at);
    const key = groupOf.get(at);
    if (key !== undefined) keys.add(key);
  }
  return keys;
}

function orderGroups(by: StatsGrouping, groups: StatsReport['groups']): StatsReport['groups'] {
  if (by === 'outcome') return groups.sort((a, b) => STATES.indexOf(a.key) - STATES.indexOf(b.key));
  if (by === 'day') return groups.sort((a, b) => (a.key < b.key ? -1 : 1));
  // By agent: the busiest first, then by name.
  return groups.sort((a, b) => b.sessions.started - a.sessions.started || (a.key < b.key ? -1 : 1));
}

async function trashSize(context: SessionContext): Promise<StatsReport['trash']> {
  const listing = await listTrash(context);
  const size = { entries: listing.entries.length, bytes: 0, sessions: 0 };
  for (const entry of listing.entries) {
    size.bytes += entry.bytes;
    size.sessions += entry.present;
  }
  return size;
}

function checkDate(date: Date | undefined, name: string): number | undefined {
  if (date === undefined) return undefined;
  const ms = date instanceof Date ? date.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new SessionError('EINVALID', `${name} is not a valid date`);
  return ms;
}

function iso(ms: number): string {
  return formatTimestamp(ms);
}
