// Orchestrators that call the hooks directly with the legacy stdin format (that of gaia-ops v3.5.1's
// `agent_session.py`), and get its answers, key for key.
import { SessionError } from '../../errors.js';
import type { JsonObject } from '../../merge-patch.js';
import type { HistoryEntry } from '../../record.js';
import type { Sessions } from '../../sessions.js';
import type { LegacyDelegate, LegacyFailureReason, LegacyStop } from '../payload.js';

/** The answer to a legacy delegation. */
export interface LegacyAnswer {
  should_resume: boolean;
  reason: 'no_existing_session' | 'session_resumable' | 'session_not_resumable' | LegacyFailureReason;
  agent_id: string | null;
  resume_metadata: {
    previous_phase: string;
    created_at: string;
    last_updated: string;
    history: HistoryEntry[];
    session_metadata: JsonObject;
  } | null;
  original_context: JsonObject | null;
  /** Why a session is not resumable (the store's detail), or what went wrong. */
  detail?: string;
}

export interface LegacyStopAnswer {
  agent_id: string | null;
  finalized: boolean;
  outcome: string | null;
  reason: 'finalized' | 'already_final' | 'not_found' | LegacyFailureReason;
  detail?: string;
}

/**
 * An orchestrator asks before delegating: resume the named session if it may, else start one.
 * A session that does not exist is created (under the given id when there is one).
 */
export async function legacyDelegate(sessions: Sessions, input: LegacyDelegate): Promise<LegacyAnswer> {
  const context: JsonObject = {
    agent_name: input.agentName,
    agent_id: input.agentId,
    task_id: input.taskId,
    task_description: input.taskDescription,
    metadata: input.metadata,
  };
  const existing = input.agentId ? await sessions.shouldResume(input.agentId) : undefined;
  if (!existing || existing.reason === 'not_found') {
    const metadata = { ...(input.metadata ?? {}), ...(input.taskId ? { task_id: input.taskId } : {}) };
    const id = input.agentId ?? undefined;
    const created = await sessions.create({ agentName: input.agentName, purpose: input.taskDescription, metadata, id });
    const answer = { agent_id: created.agent_id, resume_metadata: null, original_context: context };
    if (!existing) return { should_resume: false, reason: 'no_existing_session', ...answer };
    // agent_session.py answered an id it did not know as not resumable (no_existing_session meant no id at
    // all); the session is still created under that id, so the orchestrator's later stop finds it.
    return {
      should_resume: false,
      reason: 'session_not_resumable',
      ...answer,
      detail: `not_found: ${existing.detail}; a new session was created under this id`,
    };
  }
  const r = existing.session;
  const metadata = r && {
    previous_phase: r.phase,
    created_at: r.created_at,
    last_updated: r.last_updated,
    history: r.history,
    session_metadata: r.metadata,
  };
  const answer = { agent_id: input.agentId, resume_metadata: metadata, original_context: context };
  if (existing.resume) return { should_resume: true, reason: 'session_resumable', ...answer };
  return {
    should_resume: false,
    reason: 'session_not_resumable',
    ...answer,
    detail: `${existing.reason}: ${existing.detail}`,
  };
}

export function legacyFailure(reason: LegacyFailureReason, detail: string): LegacyAnswer {
  return { should_resume: false, reason, agent_id: null, resume_metadata: null, original_context: null, detail };
}

/** An orchestrator reports the end of an agent: exit code 0 is completed, anything else failed. */
export async function legacyStop(sessions: Sessions, input: LegacyStop): Promise<LegacyStopAnswer> {
  try {
    await sessions.finalize(input.agentId, input.outcome, input.summary);
    return { agent_id: input.agentId, finalized: true, outcome: input.outcome, reason: 'finalized' };
  } catch (err) {
    if (!(err instanceof SessionError)) throw err;
    if (err.code === 'ENOTFOUND')
      return { agent_id: input.agentId, finalized: false, outcome: null, reason: 'not_found', detail: err.message };
    if (err.code === 'EFINAL')
      return {
        agent_id: input.agentId,
        finalized: false,
        outcome: String(err.details.phase),
        reason: 'already_final',
        detail: err.message,
      };
    throw err;
  }
}

export function legacyStopFailure(reason: LegacyFailureReason, detail: string): LegacyStopAnswer {
  return { agent_id: null, finalized: false, outcome: null, reason, detail };
}
