// What each Claude Code event does to a session record: a spawn joins it, an agent starts or stops,
// a resume decision is remembered. Pure: record and time in, the next record out.
import { parseStatusLine, truncate, truncateStart, withoutStatusLine } from './status-line.js';
import type { Json, JsonObject } from '../merge-patch.js';
import { isFinalPhase, isResumablePhase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { formatTimestamp, parseTimestamp } from '../time.js';
import type { DelegationRequest } from './delegation.js';
import { applyFinalize, applyUpdate } from './lifecycle.js';

/** Longest summary or last message kept from a subagent's final message. */
const MESSAGE_LIMIT = 2000;

export type StartChange = 'started' | 'resumed' | 'already_executing' | 'superseded' | 'final';
export type StopChange = 'paused' | 'kept_paused' | 'completed' | 'failed' | 'final';

/** The `claude` object of a session created for a delegation. */
export function claudeForDelegation(d: DelegationRequest): JsonObject {
  const claude: JsonObject = {
    session_id: d.claudeSession,
    tool_use_id: d.toolUseId,
    tool_use_ids: [d.toolUseId],
    agent_id: null,
    agent_ids: [],
    transcript_path: d.transcriptPath,
    agent_transcript_path: null,
    cwd: d.cwd,
  };
  if (d.caller) claude.caller_agent_id = d.caller;
  if (d.isolation) claude.isolation = d.isolation;
  return claude;
}

/**
 * A further spawn (the `brief` policy) joins an existing session. From another Claude Code session,
 * the earlier agent and its transcript stay in `agent_ids` only: SendMessage cannot reach them from
 * here, so no later delegation may be told to continue them.
 */
export function attachSpawn(record: SessionRecord, d: DelegationRequest): SessionRecord {
  const claude = record.claude ?? {};
  const spawns = Array.isArray(claude.tool_use_ids) ? claude.tool_use_ids : [];
  const moved: Record<string, Json> =
    claude.session_id !== d.claudeSession ? { agent_id: null, agent_transcript_path: null } : {};
  return withClaude(record, {
    session_id: d.claudeSession,
    tool_use_id: d.toolUseId,
    tool_use_ids: [...spawns, d.toolUseId],
    transcript_path: d.transcriptPath,
    cwd: d.cwd,
    isolation: d.isolation ?? null,
    ...moved,
  });
}

export function attachAgent(record: SessionRecord, agentId: string): SessionRecord {
  const claude = record.claude ?? {};
  const ids = Array.isArray(claude.agent_ids) ? claude.agent_ids : [];
  if (claude.agent_id === agentId && ids.includes(agentId)) return record;
  return withClaude(record, { agent_id: agentId, agent_ids: ids.includes(agentId) ? ids : [...ids, agentId] });
}

/**
 * SubagentStart, first or continued turn: the session is executing again. A start applied late
 * (`startedAt`: it waited for its spawn's binding) does not undo a phase the agent set afterwards
 * through the CLI during that turn.
 */
export function recordStart(
  record: SessionRecord,
  agentId: string,
  now: number,
  startedAt?: number,
  cwd?: string,
): { record: SessionRecord; change: StartChange } {
  if (isFinalPhase(record.phase) || record.finalized_at) return { record, change: 'final' };
  const attached = attachAgent(noteWorktree(record, cwd), agentId);
  if (record.phase === 'executing') return { record: attached, change: 'already_executing' };
  if (startedAt !== undefined && isResumablePhase(record.phase) && phaseChangedSince(record, startedAt)) {
    return { record: attached, change: 'superseded' };
  }
  const change = isResumablePhase(record.phase) ? 'resumed' : 'started';
  const event = { event: change, claude_agent_id: agentId };
  return { record: applyUpdate(attached, { phase: 'executing', event }, now), change };
}

interface StopFacts {
  agentId: string;
  message: string | null;
  agentTranscriptPath: string | null;
}

/** SubagentStop: the status line at the end of the last message decides what the session becomes. */
export function recordStop(
  record: SessionRecord,
  stop: StopFacts,
  now: number,
): { record: SessionRecord; change: StopChange } {
  if (isFinalPhase(record.phase) || record.finalized_at) return { record, change: 'final' };
  const message = stop.message ? withoutStatusLine(stop.message) : null;
  // A summary's head says what came of the work; a paused agent's question is at the end of its message.
  const text = message === null ? null : truncate(message, MESSAGE_LIMIT);
  const noted = withClaude(attachAgent(record, stop.agentId), {
    last_message: message === null ? null : truncateStart(message, MESSAGE_LIMIT),
    ...(stop.agentTranscriptPath ? { agent_transcript_path: stop.agentTranscriptPath } : {}),
  });
  const { phase } = parseStatusLine(stop.message);
  const event = { event: 'stopped', claude_agent_id: stop.agentId };
  switch (phase) {
    case 'approval':
    case 'investigating':
    case 'planning':
      return { record: applyUpdate(noted, { phase, event }, now), change: 'paused' };
    case 'failed':
      return { record: applyFinalize(noted, 'failed', text, now).record, change: 'failed' };
    case 'completed':
    case null:
      // Start moved the session to executing; a resumable phase now was set through the CLI this turn.
      if (phase === null && isResumablePhase(record.phase)) return { record: touch(noted, now), change: 'kept_paused' };
      return { record: applyFinalize(noted, 'completed', text, now).record, change: 'completed' };
  }
}

interface DecisionEntry {
  policy: string;
  decision: 'deny' | 'brief' | 'record';
  reason: string;
  tool_use_id: string;
  claude_session_id: string;
  /** The delegating subagent, for a nested delegation. */
  caller_agent_id?: string;
  /** Where the call's message starts in its transcript, or the transcript's end then (null: not readable). */
  transcript_offset: number | null;
}

/**
 * A resume decision goes into the history without a phase change. `last_updated` stays: recording
 * a decision must not extend the resume window.
 */
export function recordDecision(record: SessionRecord, decision: DecisionEntry, now: number): SessionRecord {
  const entry = {
    from_phase: record.phase,
    to_phase: record.phase,
    timestamp: formatTimestamp(now),
    event: 'resume_decision',
    ...decision,
  };
  return { ...record, history: [...record.history, entry] };
}

/**
 * An agent spawned with `isolation: "worktree"` starts in a git worktree Claude Code made for it
 * (`<project>/.claude/worktrees/agent-<id>`): SubagentStart's cwd, the only payload that names it for
 * foreground and background agents alike. The session owns that worktree; delete guards its work.
 */
function noteWorktree(record: SessionRecord, cwd: string | undefined): SessionRecord {
  const claude = record.claude ?? {};
  if (claude.isolation !== 'worktree' || !cwd?.startsWith('/') || cwd === claude.cwd) return record;
  const worktrees = Array.isArray(claude.worktrees) ? claude.worktrees : [];
  if (worktrees.includes(cwd)) return record;
  return withClaude(record, { worktrees: [...worktrees, cwd] });
}

function phaseChangedSince(record: SessionRecord, time: number): boolean {
  return record.history.some((h) => h.from_phase !== h.to_phase && (parseTimestamp(h.timestamp) ?? 0) > time);
}

function withClaude(record: SessionRecord, fields: Record<string, Json>): SessionRecord {
  return { ...record, claude: { ...(record.claude ?? {}), ...fields } };
}

function touch(record: SessionRecord, now: number): SessionRecord {
  return { ...record, last_updated: formatTimestamp(now) };
}
