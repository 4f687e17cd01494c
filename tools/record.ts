import { SessionError } from './errors.js';
import { isValidId } from './ids.js';
import { JsonTooDeepError, parseJson } from './json.js';
import { isPlainObject, type JsonObject } from './merge-patch.js';
import { isOutcome, isPhase, type Outcome, type Phase } from './phases.js';
import { parseTimestamp } from './time.js';

/**
 * Version 0 is the record of the `agent_session.py` state files of gaia-ops v3.5.1 (no `schema_version`); it is
 * upgraded on its next write.
 */
export const SCHEMA_VERSION = 1;

export interface HistoryEntry {
  from_phase: Phase | null;
  to_phase: Phase;
  timestamp: string;
  [event: string]: unknown;
}

interface LastError {
  message: string;
  timestamp: string;
}

export interface SessionRecord {
  schema_version: number;
  agent_id: string;
  agent_name: string;
  purpose: string | null;
  created_at: string;
  last_updated: string;
  phase: Phase;
  metadata: JsonObject;
  resume_ready: boolean;
  history: HistoryEntry[];
  error_count: number;
  last_error: LastError | null;
  parent_session_id: string | null;
  finalized_at?: string;
  outcome?: Outcome;
  summary?: string | null;
  duration_seconds?: number;
  /** Claude Code's ids for this session, written by the hooks. */
  claude?: JsonObject;
  [later: string]: unknown;
}

const KEY_ORDER = [
  'schema_version',
  'agent_id',
  'agent_name',
  'purpose',
  'created_at',
  'last_updated',
  'phase',
  'metadata',
  'resume_ready',
  'history',
  'error_count',
  'last_error',
  'parent_session_id',
  'finalized_at',
  'outcome',
  'summary',
  'duration_seconds',
  'claude',
];

/** Pretty JSON with a trailing newline; known keys first in schema order, later keys sorted. */
export function serializeRecord(record: SessionRecord): string {
  const ordered: Record<string, unknown> = {};
  const extra = Object.keys(record)
    .filter((key) => !KEY_ORDER.includes(key))
    .sort();
  for (const key of [...KEY_ORDER, ...extra]) {
    if (record[key] !== undefined) ordered[key] = record[key];
  }
  ordered.schema_version = SCHEMA_VERSION;
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** Parses and checks a `state.json`; throws ECORRUPT naming the first bad field, EVERSION for newer records. */
export function parseRecord(text: string, id: string): SessionRecord {
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch (err) {
    if (err instanceof JsonTooDeepError) throw corrupt(id, `it is ${err.message}`, err);
    throw corrupt(id, `it is not valid JSON (${(err as Error).message})`, err);
  }
  if (!isPlainObject(raw)) throw corrupt(id, 'it is not a JSON object');
  const version = raw.schema_version ?? 0;
  if (!Number.isInteger(version) || (version as number) < 0) throw corrupt(id, 'schema_version is not a whole number');
  if ((version as number) > SCHEMA_VERSION) {
    throw new SessionError(
      'EVERSION',
      `session ${id} has schema_version ${version}, newer than this agent-session understands ` +
        `(${SCHEMA_VERSION}); upgrade agent-session`,
      { details: { id, schema_version: version } },
    );
  }
  const problem = findProblem(raw, id);
  if (problem) throw corrupt(id, problem);
  return withDefaults(raw, version as number);
}

/**
 * Fills in the freshly parsed object itself: no copy per record (list and cleanup parse thousands); same key
 * order as a spread.
 */
function withDefaults(raw: JsonObject, version: number): SessionRecord {
  const record = raw as Record<string, unknown>;
  record.schema_version = version;
  record.purpose = raw.purpose ?? null;
  record.metadata = raw.metadata ?? {};
  record.resume_ready = raw.resume_ready ?? false;
  record.history = raw.history ?? [];
  record.error_count = raw.error_count ?? 0;
  record.last_error = raw.last_error ?? null;
  record.parent_session_id = raw.parent_session_id ?? null;
  return record as SessionRecord;
}

function findProblem(raw: JsonObject, id: string): string | undefined {
  if (raw.agent_id !== id) return `agent_id ${JSON.stringify(raw.agent_id)} does not match its directory`;
  if (typeof raw.agent_name !== 'string') return 'agent_name is not a string';
  if (raw.purpose != null && typeof raw.purpose !== 'string') return 'purpose is not a string';
  for (const key of ['created_at', 'last_updated'] as const) {
    if (parseTimestamp(raw[key]) === undefined) return `${key} is not an ISO 8601 timestamp with a time zone`;
  }
  if (!isPhase(raw.phase)) return `phase ${JSON.stringify(raw.phase)} is not a known phase`;
  if (raw.metadata != null && !isPlainObject(raw.metadata)) return 'metadata is not an object';
  if (raw.resume_ready != null && typeof raw.resume_ready !== 'boolean') return 'resume_ready is not a boolean';
  if (raw.history != null && !validHistory(raw.history)) return 'history is not a list of phase changes';
  if (raw.error_count != null && !(Number.isInteger(raw.error_count) && (raw.error_count as number) >= 0)) {
    return 'error_count is not a whole number';
  }
  if (raw.last_error != null && !(isPlainObject(raw.last_error) && typeof raw.last_error.message === 'string')) {
    return 'last_error is not {message, timestamp}';
  }
  if (raw.parent_session_id != null && !isValidId(raw.parent_session_id)) return 'parent_session_id is not a valid id';
  if (raw.finalized_at != null && parseTimestamp(raw.finalized_at) === undefined) {
    return 'finalized_at is not an ISO 8601 timestamp with a time zone';
  }
  if (raw.outcome != null && !isOutcome(raw.outcome)) return `outcome ${JSON.stringify(raw.outcome)} is not an outcome`;
  if (raw.claude != null && !isPlainObject(raw.claude)) return 'claude is not an object';
  return undefined;
}

function validHistory(history: unknown): boolean {
  return Array.isArray(history) && history.every((entry) => isPlainObject(entry) && isPhase(entry.to_phase));
}

function corrupt(id: string, why: string, cause?: unknown): SessionError {
  return new SessionError('ECORRUPT', `session ${id} is corrupt: ${why}`, { cause, details: { id } });
}

/**
 * Oldest first, then by id: the order of siblings everywhere (tree, delete, cleanup). Plain
 * code-point comparison: timestamps are ISO strings of one format, and it is several times faster
 * than localeCompare over thousands of sessions.
 */
export function compareCreation(aCreatedAt: string, aId: string, bCreatedAt: string, bId: string): number {
  if (aCreatedAt !== bCreatedAt) return aCreatedAt < bCreatedAt ? -1 : 1;
  return aId < bId ? -1 : aId > bId ? 1 : 0;
}
