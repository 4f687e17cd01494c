import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { isFinalPhase, isPhase, isResumablePhase, PHASES, type Phase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';
import { claudeFields, sessionStatus, type ClaudeFields, type SessionStatus } from './paused.js';
import { decideResume, type ResumeDecision, type ResumeRules } from './resume.js';
import { checkOptions, type OptionKeys } from '../options.js';

export interface ListFilter {
  activeOnly?: boolean;
  /** Only sessions paused in a resumable phase, whether they would resume now or not. */
  paused?: boolean;
  agentName?: string;
  phase?: Phase;
  parent?: string;
  limit?: number;
}

export interface SessionSummary {
  agent_id: string;
  agent_name: string;
  purpose: string | null;
  phase: Phase;
  resume_ready: boolean;
  error_count: number;
  parent_session_id: string | null;
  created_at: string;
  last_updated: string;
  outcome: string | null;
}

/** A listed session: its summary, whether it would resume now (and why not), and Claude Code's ids. */
export interface ListedSession extends SessionSummary {
  status: SessionStatus;
  resume: ResumeDecision;
  claude: ClaudeFields | null;
}

/** EINVALID for a filter that cannot match anything by mistake: an unknown phase, a malformed id, a bad limit. */
const FILTER_KEYS: OptionKeys<ListFilter> = {
  activeOnly: true,
  paused: true,
  agentName: true,
  phase: true,
  parent: true,
  limit: true,
};

export function checkFilter(filter: ListFilter, what = 'list'): void {
  checkOptions(filter, FILTER_KEYS, what);
  if (filter.phase !== undefined && !isPhase(filter.phase)) {
    throw new SessionError('EINVALID', `unknown phase ${JSON.stringify(filter.phase)}: use ${PHASES.join(', ')}`);
  }
  if (filter.parent !== undefined) assertValidId(filter.parent, 'parent session id');
  // No session has an empty agent name (create refuses one): an empty filter is a mistake.
  if (filter.agentName === '') throw new SessionError('EINVALID', 'the agent name to filter on is empty');
  if (filter.limit !== undefined && !(Number.isInteger(filter.limit) && filter.limit >= 1)) {
    throw new SessionError('EINVALID', 'limit must be a whole number >= 1');
  }
}

/** Filters, sorts newest first by instant (not by string), then limits. */
export function selectSessions(
  records: SessionRecord[],
  filter: ListFilter,
  now: number,
  rules: ResumeRules,
): ListedSession[] {
  const selection = sessionSelection(filter, now, rules);
  for (const record of records) selection.add(record);
  return selection.result();
}

/**
 * `selectSessions` one record at a time: `add` keeps what a listed session shows of a record, not the
 * record, so a scan of a large store never holds every record at once.
 */
export function sessionSelection(
  filter: ListFilter,
  now: number,
  rules: ResumeRules,
): { add(record: SessionRecord): void; result(): ListedSession[] } {
  const kept: { entry: ListedSession; at: number }[] = [];
  return {
    add: (r) => {
      if (
        (filter.agentName !== undefined && r.agent_name !== filter.agentName) ||
        (filter.phase !== undefined && r.phase !== filter.phase) ||
        (filter.parent !== undefined && r.parent_session_id !== filter.parent) ||
        (filter.paused && !(isResumablePhase(r.phase) && !isFinalPhase(r.phase) && !r.finalized_at))
      )
        return;
      const resume = decideResume(r, now, rules);
      if (filter.activeOnly && !resume.resume) return;
      // The summary made for it grows into the entry (no copy: a listing keeps 100,000 of them).
      const entry = summarize(r) as ListedSession;
      entry.status = sessionStatus(r, resume);
      entry.resume = resume;
      entry.claude = claudeFields(r);
      kept.push({ entry, at: parseTimestamp(r.last_updated) ?? 0 });
    },
    result: () => {
      kept.sort((a, b) => b.at - a.at || a.entry.agent_id.localeCompare(b.entry.agent_id));
      const limited = filter.limit === undefined ? kept : kept.slice(0, filter.limit);
      return limited.map(({ entry }) => entry);
    },
  };
}

export function summarize(r: SessionRecord): SessionSummary {
  return {
    agent_id: r.agent_id,
    agent_name: r.agent_name,
    purpose: r.purpose,
    phase: r.phase,
    resume_ready: r.resume_ready,
    error_count: r.error_count,
    parent_session_id: r.parent_session_id,
    created_at: r.created_at,
    last_updated: r.last_updated,
    outcome: r.outcome ?? null,
  };
}
