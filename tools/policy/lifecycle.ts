import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { isPlainObject, mergePatch, type Json, type JsonObject } from '../merge-patch.js';
import { isFinalPhase, isOutcome, isPhase, isResumablePhase, PHASES, type Outcome, type Phase } from '../phases.js';
import { SCHEMA_VERSION, type HistoryEntry, type SessionRecord } from '../record.js';
import { formatTimestamp, parseTimestamp } from '../time.js';

interface NewSession {
  id: string;
  agentName: string;
  purpose?: string | null;
  metadata?: JsonObject;
  parent?: string | null;
}

export interface UpdateRequest {
  phase?: Phase;
  metadata?: JsonObject;
  error?: string;
  /** Extra fields for the history entry of a phase change (for example `event: 'resumed'`). */
  event?: Record<string, Json>;
}

export function newRecord(input: NewSession, now: number): SessionRecord {
  assertValidId(input.id);
  if (typeof input.agentName !== 'string' || input.agentName.trim() === '') {
    throw new SessionError('EINVALID', 'agent name must be a non-empty string');
  }
  if (input.purpose != null && typeof input.purpose !== 'string')
    throw new SessionError('EINVALID', 'purpose must be a string');
  if (input.metadata !== undefined && !isPlainObject(input.metadata)) {
    throw new SessionError('EINVALID', 'metadata must be a JSON object');
  }
  if (input.parent != null) assertValidId(input.parent, 'parent session id');
  const stamp = formatTimestamp(now);
  return {
    schema_version: SCHEMA_VERSION,
    agent_id: input.id,
    agent_name: input.agentName,
    purpose: input.purpose ?? null,
    created_at: stamp,
    last_updated: stamp,
    phase: 'initializing',
    metadata: input.metadata ? (mergePatch({}, input.metadata) as JsonObject) : {},
    resume_ready: false,
    history: [],
    error_count: 0,
    last_error: null,
    parent_session_id: input.parent ?? null,
  };
}

/** Checks the whole request before any of it applies, so an invalid request changes nothing. */
export function validateUpdate(request: UpdateRequest): void {
  if (request.phase !== undefined) {
    if (!isPhase(request.phase)) {
      const phases = PHASES.filter((p) => !isFinalPhase(p)).join(', ');
      throw new SessionError('EINVALID', `unknown phase ${JSON.stringify(request.phase)}: use ${phases}`);
    }
    if (isFinalPhase(request.phase)) {
      throw new SessionError('EINVALID', `phase ${request.phase} is final: use finalize to end a session`);
    }
  }
  if (request.metadata !== undefined && !isPlainObject(request.metadata)) {
    throw new SessionError('EINVALID', 'metadata must be a JSON object (a JSON Merge Patch)');
  }
  if (request.error !== undefined && (typeof request.error !== 'string' || request.error === '')) {
    throw new SessionError('EINVALID', 'error must be a non-empty string');
  }
}

export function applyUpdate(record: SessionRecord, request: UpdateRequest, now: number): SessionRecord {
  validateUpdate(request);
  assertNotFinal(record);
  const stamp = formatTimestamp(now);
  const next: SessionRecord = { ...record, last_updated: stamp };
  if (request.phase !== undefined) {
    if (request.phase !== record.phase) {
      next.history = [...record.history, historyEntry(record.phase, request.phase, stamp, request.event)];
    }
    next.phase = request.phase;
    next.resume_ready = isResumablePhase(request.phase);
  }
  if (request.metadata !== undefined) next.metadata = mergePatch(record.metadata, request.metadata) as JsonObject;
  if (request.error !== undefined) {
    next.error_count = record.error_count + 1;
    next.last_error = { message: request.error, timestamp: stamp };
  }
  return next;
}

interface FinalizeResult {
  record: SessionRecord;
  changed: boolean;
}

/** Idempotent for the same outcome (hooks may fire twice); a different outcome is EFINAL. */
export function validateFinalize(outcome: unknown, summary: unknown): asserts outcome is Outcome {
  if (!isOutcome(outcome)) {
    throw new SessionError(
      'EINVALID',
      `unknown outcome ${JSON.stringify(outcome)}: use completed, failed or abandoned`,
    );
  }
  if (summary != null && typeof summary !== 'string') throw new SessionError('EINVALID', 'summary must be a string');
}

export function applyFinalize(
  record: SessionRecord,
  outcome: Outcome,
  summary: string | null | undefined,
  now: number,
): FinalizeResult {
  validateFinalize(outcome, summary);
  if (isFinalPhase(record.phase) || record.finalized_at) {
    if (record.phase === outcome) return { record, changed: false };
    throw finalError(record, `cannot finalize it as ${outcome}`);
  }
  const stamp = formatTimestamp(now);
  const created = parseTimestamp(record.created_at) ?? now;
  const next: SessionRecord = {
    ...record,
    phase: outcome,
    last_updated: stamp,
    resume_ready: false,
    history: [...record.history, historyEntry(record.phase, outcome, stamp, { event: 'finalized' })],
    finalized_at: stamp,
    outcome,
    summary: summary ?? null,
    duration_seconds: Math.max(0, Math.round((now - created) / 10) / 100),
  };
  return { record: next, changed: true };
}

function assertNotFinal(record: SessionRecord): void {
  if (isFinalPhase(record.phase) || record.finalized_at) throw finalError(record, 'it cannot be updated');
}

function finalError(record: SessionRecord, what: string): SessionError {
  return new SessionError('EFINAL', `session ${record.agent_id} is already final (${record.phase}); ${what}`, {
    details: { id: record.agent_id, phase: record.phase },
  });
}

function historyEntry(from: Phase, to: Phase, timestamp: string, event?: Record<string, Json>): HistoryEntry {
  return { from_phase: from, to_phase: to, timestamp, ...event };
}
