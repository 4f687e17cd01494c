// The figures of one group of sessions (an agent type, a day, an outcome, or all of them), added up one
// session at a time. Pure.
import { PHASES, type Phase } from '../phases.js';
import type { TokenSums } from '../store/transcript-cache.js';
import type { SessionFacts } from './session-facts.js';

export interface Spread {
  median: number | null;
  p90: number | null;
}

export interface Group {
  sessions: { started: number; running: number; paused: number; completed: number; failed: number; abandoned: number };
  /** Each of completed, failed, abandoned over the finished sessions; null when none finished. */
  rates: { success: number | null; failure: number | null; abandonment: number | null };
  /**
   * `paused`: sessions that were ever paused; `resumed`: those of them resumed at least once (`rate` is
   * resumed / paused); `same_agent`, `new_agent`, `other`: resumes by SendMessage, by a new agent given the
   * brief, and through the CLI; `expired`: sessions whose pause outlived its resume window.
   */
  resumes: {
    paused: number;
    resumed: number;
    same_agent: number;
    new_agent: number;
    other: number;
    expired: number;
    rate: number | null;
  };
  durations_ms: { to_finish: Spread; phases: Partial<Record<Phase, Spread>> };
  /** The group's own sessions. */
  tokens: TokenSums;
  /** The group's sessions and all their descendants, each counted once. */
  tokens_with_children: TokenSums;
  /** Errors recorded (`error_count`), and the sessions that have any. */
  errors: number;
  sessions_with_errors: number;
}

export function zeroTokens(): TokenSums {
  return { input: 0, output: 0, cache_read: 0, cache_write: 0 };
}

export function addTokens(into: TokenSums, add: TokenSums): void {
  // Safe integers however large the figures a transcript claims.
  const sum = (a: number, b: number) => Math.min(a + b, Number.MAX_SAFE_INTEGER);
  into.input = sum(into.input, add.input);
  into.output = sum(into.output, add.output);
  into.cache_read = sum(into.cache_read, add.cache_read);
  into.cache_write = sum(into.cache_write, add.cache_write);
}

/** Collects sessions, then gives the group's figures. */
export class GroupTally {
  private readonly group: Group;
  private readonly toFinish: number[] = [];
  private readonly phases = new Map<Phase, number[]>();

  constructor() {
    this.group = {
      sessions: { started: 0, running: 0, paused: 0, completed: 0, failed: 0, abandoned: 0 },
      rates: { success: null, failure: null, abandonment: null },
      resumes: { paused: 0, resumed: 0, same_agent: 0, new_agent: 0, other: 0, expired: 0, rate: null },
      durations_ms: { to_finish: { median: null, p90: null }, phases: {} },
      tokens: zeroTokens(),
      tokens_with_children: zeroTokens(),
      errors: 0,
      sessions_with_errors: 0,
    };
  }

  add(facts: SessionFacts, tokens: TokenSums | undefined): void {
    const { sessions, resumes } = this.group;
    sessions.started += 1;
    sessions[facts.state] += 1;
    if (facts.paused) resumes.paused += 1;
    const resumed = facts.sameAgent + facts.newAgent + facts.otherResumes;
    if (resumed > 0) resumes.resumed += 1;
    resumes.same_agent += facts.sameAgent;
    resumes.new_agent += facts.newAgent;
    resumes.other += facts.otherResumes;
    if (facts.expired) resumes.expired += 1;
    if (facts.toFinishMs !== null) this.toFinish.push(facts.toFinishMs);
    for (const [phase, ms] of Object.entries(facts.phaseMs) as [Phase, number][]) {
      const list = this.phases.get(phase) ?? [];
      list.push(ms);
      this.phases.set(phase, list);
    }
    if (tokens) addTokens(this.group.tokens, tokens);
    this.group.errors += facts.errors;
    if (facts.errors > 0) this.group.sessions_with_errors += 1;
  }

  addDescendantTokens(tokens: TokenSums): void {
    addTokens(this.group.tokens_with_children, tokens);
  }

  result(): Group {
    const { sessions, rates, resumes, durations_ms } = this.group;
    const finished = sessions.completed + sessions.failed + sessions.abandoned;
    rates.success = ratio(sessions.completed, finished);
    rates.failure = ratio(sessions.failed, finished);
    rates.abandonment = ratio(sessions.abandoned, finished);
    resumes.rate = ratio(resumes.resumed, resumes.paused);
    durations_ms.to_finish = spread(this.toFinish);
    for (const phase of PHASES) {
      const list = this.phases.get(phase);
      if (list) durations_ms.phases[phase] = spread(list);
    }
    return this.group;
  }
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

/** Median and 90th percentile by nearest rank: each is one of the values (the lower middle for an even count). */
export function spread(values: number[]): Spread {
  if (values.length === 0) return { median: null, p90: null };
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  return { median: rank(0.5), p90: rank(0.9) };
}
