import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { isPhase, PHASES, type Phase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';
import { decideResume, type ResumeRules } from './resume.js';

export interface ListFilter {
  activeOnly?: boolean;
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

/** EINVALID for a filter that cannot match anything by mistake: an unknown phase, a malformed id, a bad limit. */
export function checkFilter(filter: ListFilter): void {
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
): SessionSummary[] {
  const kept = records.filter(
    (r) =>
      (filter.agentName === undefined || r.agent_name === filter.agentName) &&
      (filter.phase === undefined || r.phase === filter.phase) &&
      (filter.parent === undefined || r.parent_session_id === filter.parent) &&
      (!filter.activeOnly || decideResume(r, now, rules).resume),
  );
  const sorted = kept
    .map((record) => ({ record, at: parseTimestamp(record.last_updated) ?? 0 }))
    .sort((a, b) => b.at - a.at || a.record.agent_id.localeCompare(b.record.agent_id))
    .map(({ record }) => summarize(record));
  return filter.limit === undefined ? sorted : sorted.slice(0, filter.limit);
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
