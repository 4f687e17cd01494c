// Hook stdin, parsed once into what the handlers work with: a Claude Code event (checked field by
// field; ids become file names in the store) or the legacy format.
import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { isPlainObject, type JsonObject } from '../merge-patch.js';
import type { DelegationRequest } from '../policy/delegation.js';

/** What every Claude Code event tells us about where it happened. */
interface Origin {
  claudeSession: string;
  transcriptPath: string | null;
  cwd: string | null;
}

/** PreToolUse of the subagent tool: a delegation about to spawn an agent. */
export interface Delegation extends DelegationRequest {
  kind: 'delegate';
  /** The tool's input as given, the base of a rewritten one. */
  input: JsonObject;
}

/** PostToolUse of the subagent tool: the exact join of a spawn (tool_use_id) to its agent id. */
export interface Spawned extends Origin {
  kind: 'spawned';
  toolUseId: string;
  agentId: string;
}

export interface AgentStart extends Origin {
  kind: 'start';
  agentId: string;
  agentType: string;
}

export interface AgentStop extends Origin {
  kind: 'stop';
  agentId: string;
  agentType: string;
  message: string | null;
  agentTranscriptPath: string | null;
}

/** SessionStart: a conversation starts, resumes, or is cleared or compacted (`source`). */
export interface ConversationStart extends Origin {
  kind: 'session-start';
  source: string | null;
}

interface Ignored {
  kind: 'ignored';
  why: string;
}

/**
 * The legacy stdin format: that of gaia-ops v3.5.1's `agent_session.py`, used by
 * orchestrators calling the hooks directly. It has no `hook_event_name`.
 */
export interface LegacyDelegate {
  kind: 'legacy-delegate';
  agentName: string;
  agentId: string | null;
  taskId: string | null;
  taskDescription: string | null;
  metadata: JsonObject | null;
}

export interface LegacyStop {
  kind: 'legacy-stop';
  agentId: string;
  outcome: 'completed' | 'failed' | 'abandoned';
  summary: string | null;
}

export type PreDelegateInput = Delegation | Ignored | LegacyDelegate;
export type AgentEventInput = Spawned | AgentStart | AgentStop | ConversationStart | Ignored | LegacyStop;

/** Why a legacy caller gets no real answer: its stdin is not a JSON object, or handling it failed. */
export type LegacyFailureReason = 'invalid_json' | 'error';

/** The subagent tool is `Agent` since Claude Code 2.1.63 and was `Task` before. */
const SUBAGENT_TOOLS = ['Agent', 'Task'];
const DEFAULT_AGENT_TYPE = 'general-purpose';

/** A payload in the legacy format (see LegacyDelegate). */
export function isLegacy(raw: JsonObject): boolean {
  return !('hook_event_name' in raw);
}

/** Parses what `pre_delegate` reads: PreToolUse of the subagent tool, or the legacy format. */
export function parsePreDelegate(obj: JsonObject): PreDelegateInput {
  if (isLegacy(obj)) return parseLegacyDelegate(obj);
  const event = str(obj, 'hook_event_name');
  if (event !== 'PreToolUse') return { kind: 'ignored', why: `event ${event} is not handled by pre_delegate` };
  const tool = str(obj, 'tool_name');
  if (!SUBAGENT_TOOLS.includes(tool)) return { kind: 'ignored', why: `tool ${tool} is not the subagent tool` };
  const input = object(obj.tool_input, 'tool_input');
  const caller = optStr(obj, 'agent_id');
  if (caller !== null) assertValidId(caller, 'caller agent_id');
  return {
    kind: 'delegate',
    ...origin(obj),
    toolUseId: id(obj, 'tool_use_id'),
    input,
    agentType: optStr(input, 'subagent_type') || DEFAULT_AGENT_TYPE,
    description: optStr(input, 'description') ?? '',
    prompt: str(input, 'prompt'),
    caller,
    isolation: optStr(input, 'isolation'),
  };
}

/**
 * Parses what `subagent_stop` reads: SubagentStart, SubagentStop, PostToolUse(Agent), SessionStart, or the
 * legacy format.
 */
export function parseAgentEvent(obj: JsonObject): AgentEventInput {
  if (isLegacy(obj)) return parseLegacyStop(obj);
  const event = str(obj, 'hook_event_name');
  switch (event) {
    case 'PostToolUse': {
      const tool = str(obj, 'tool_name');
      if (!SUBAGENT_TOOLS.includes(tool)) return { kind: 'ignored', why: `tool ${tool} is not the subagent tool` };
      const response = isPlainObject(obj.tool_response) ? obj.tool_response : {};
      const agentId = optStr(response, 'agentId');
      if (agentId === null) return { kind: 'ignored', why: 'PostToolUse without tool_response.agentId' };
      assertValidId(agentId, 'agentId');
      return { kind: 'spawned', ...origin(obj), toolUseId: id(obj, 'tool_use_id'), agentId };
    }
    // SubagentStart's cwd is the agent's own worktree when it runs with `isolation: "worktree"`.
    case 'SubagentStart':
    case 'SubagentStop': {
      const agentType = optStr(obj, 'agent_type') ?? '';
      // Compaction fires an internal SubagentStop with an empty agent_type and no SubagentStart.
      if (agentType === '') return { kind: 'ignored', why: `${event} with an empty agent_type (internal)` };
      const base = { ...origin(obj), agentId: id(obj, 'agent_id'), agentType };
      if (event === 'SubagentStart') return { kind: 'start', ...base };
      return {
        kind: 'stop',
        ...base,
        message: optStr(obj, 'last_assistant_message'),
        agentTranscriptPath: optStr(obj, 'agent_transcript_path'),
      };
    }
    case 'SessionStart':
      return { kind: 'session-start', ...origin(obj), source: optStr(obj, 'source') };
    default:
      return { kind: 'ignored', why: `event ${event} is not handled by subagent_stop` };
  }
}

function parseLegacyDelegate(obj: JsonObject): LegacyDelegate {
  const agentId = optStr(obj, 'agent_id');
  if (agentId !== null) assertValidId(agentId, 'agent_id');
  if (obj.metadata != null && !isPlainObject(obj.metadata)) throw invalid('metadata must be a JSON object');
  return {
    kind: 'legacy-delegate',
    agentName: str(obj, 'agent_name'),
    agentId,
    taskId: optScalar(obj, 'task_id'),
    taskDescription: optStr(obj, 'task_description'),
    metadata: (obj.metadata as JsonObject | undefined) ?? null,
  };
}

function parseLegacyStop(obj: JsonObject): LegacyStop {
  const agentId = id(obj, 'agent_id');
  const summary = optStr(obj, 'summary');
  if (obj.outcome != null) {
    const outcome = str(obj, 'outcome');
    if (outcome !== 'completed' && outcome !== 'failed' && outcome !== 'abandoned')
      throw invalid(`unknown outcome ${JSON.stringify(outcome)}`);
    return { kind: 'legacy-stop', agentId, outcome, summary };
  }
  if (typeof obj.exit_code !== 'number' || !Number.isInteger(obj.exit_code))
    throw invalid('outcome or an integer exit_code is required');
  return { kind: 'legacy-stop', agentId, outcome: obj.exit_code === 0 ? 'completed' : 'failed', summary };
}

function origin(obj: JsonObject): Origin {
  return {
    claudeSession: id(obj, 'session_id'),
    transcriptPath: optStr(obj, 'transcript_path'),
    cwd: optStr(obj, 'cwd'),
  };
}

function object(value: unknown, what: string): JsonObject {
  if (!isPlainObject(value)) throw invalid(`${what} is not a JSON object`);
  return value;
}

function str(obj: JsonObject, key: string): string {
  const value = obj[key];
  if (typeof value !== 'string') throw invalid(`${key} must be a string`);
  return value;
}

function optStr(obj: JsonObject, key: string): string | null {
  return obj[key] == null ? null : str(obj, key);
}

function optScalar(obj: JsonObject, key: string): string | null {
  const value = obj[key];
  if (value == null) return null;
  if (typeof value === 'number') return String(value);
  return str(obj, key);
}

/** Ids from a payload become file names in the store: checked like session ids. */
function id(obj: JsonObject, key: string): string {
  const value = str(obj, key);
  assertValidId(value, key);
  return value;
}

function invalid(message: string): SessionError {
  return new SessionError('EINVALID', message);
}
