// What a delegation (PreToolUse of the subagent tool) does: start a new session, or resume a paused
// one by denying the spawn in favour of SendMessage or by briefing the new agent. Pure: the records,
// the transcript lookups and the clock are facts the caller gathers first.
import type { Settings } from '../config.js';
import { isValidId } from '../ids.js';
import type { SessionRecord } from '../record.js';
import type { ClaudeIndexData, SpawnEntry } from '../store/claude-index.js';
import { parseTimestamp } from '../time.js';
import { decideResume, type ResumeReason, type ResumeRules } from './resume.js';
import { PARALLEL_START_MS, pendingSpawns, SPAWN_PENDING_MS } from './spawns.js';

/** The delegation as the payload gives it. */
export interface DelegationRequest {
  claudeSession: string;
  transcriptPath: string | null;
  cwd: string | null;
  toolUseId: string;
  agentType: string;
  description: string;
  prompt: string;
  /** The delegating subagent's agent id; null when the main agent delegates. */
  caller: string | null;
  /** `tool_input.isolation`: `worktree` gives the agent a git worktree of its own. */
  isolation?: string | null;
  /** Sessions the text names as `session <id>` that count (see sessionMentions, mentionTakes). */
  mentioned?: string[];
}

/** An earlier tool call of a conversation: a denied delegation, or a spawn. */
interface EarlierCall {
  toolUseId: string;
  /** When it was decided (ms). */
  at: number;
  conversation: string;
  caller: string | null;
  /** Where its message starts in the transcript, or the transcript's end when it was decided (undefined: not known). */
  transcriptOffset: number | undefined;
}

/**
 * The assistant message holding each of two tool calls, read from the delegation's transcript from an
 * earlier call's mark on (tools/claude/transcript.ts): 'beyond' when over a MiB was written since,
 * undefined when it cannot be read.
 */
export type TranscriptView = Map<string, string> | 'beyond' | undefined;

export type DelegationPlan =
  | { action: 'continue'; agentId: string; reason: string }
  | { action: 'brief'; reason: string }
  | { action: 'record'; reason: string };

export interface DelegationFacts {
  request: DelegationRequest;
  data: ClaudeIndexData;
  /** The records of candidateIds() that could be read. */
  records: SessionRecord[];
  /** For each call of callsToPlace(), by tool_use_id. */
  views: ReadonlyMap<string, TranscriptView>;
  /** The agent transcripts of `records` that still exist. */
  transcripts: ReadonlySet<string>;
  now: number;
  /** When this hook's process started (ms). */
  startedAt: number;
  rules: ResumeRules;
  policy: Settings['resumePolicy'];
}

/** Session ids this tool generates, as they appear in a prompt that names one explicitly. */
/** The form of the ids this tool generates (tools/ids.ts). */
const GENERATED = 'agent-\\d{8}-\\d{6}-[0-9a-f]{8}';
const GENERATED_ID = new RegExp(`(?<![A-Za-z0-9._-])${GENERATED}(?![A-Za-z0-9_-])`, 'g');
const GENERATED_ID_ONLY = new RegExp(`^${GENERATED}$`);

/**
 * `session <id>` (or `session: <id>`), how the advice names a session whose id is not a generated one;
 * a word longer than an id is no id.
 */
const SESSION_MENTION = /\bsession[:\s]+([A-Za-z0-9_-][A-Za-z0-9._-]{0,127})(?![A-Za-z0-9._-])/gi;
/** More distinct words than this after "session" in one delegation are not looked up (each costs a stat). */
const MENTIONS_CHECKED = 32;

/**
 * The ids a delegation's text may name as `session <id>`, other than generated ones (found anywhere):
 * a custom id (`create --id`, an orchestrator's) is a plain word, so only this form names it. A word
 * ending a sentence is looked up with its dots and without. The caller keeps those that `mentionTakes`.
 */
export function sessionMentions(request: Pick<DelegationRequest, 'description' | 'prompt'>): string[] {
  const words = [request.description, request.prompt].flatMap((text) =>
    [...text.matchAll(SESSION_MENTION)].map((m) => m[1]!),
  );
  const checked = [...new Set(words)].filter((word) => !GENERATED_ID_ONLY.test(word)).slice(0, MENTIONS_CHECKED);
  return [...new Set(checked.flatMap((word) => [word, word.replace(/\.+$/, '')]))].filter((id) => isValidId(id));
}

/**
 * Whether a session a delegation's text names as `session <id>` counts as named: one of the delegation's
 * agent type that would resume now. A plain word collides easily (`do session 1`), so a session that is
 * final, working, expired or of another type leaves the choice to the conversation's own sessions.
 */
export function mentionTakes(
  record: SessionRecord,
  request: Pick<DelegationRequest, 'agentType'>,
  now: number,
  rules: ResumeRules,
): boolean {
  return record.agent_name === request.agentType && decideResume(record, now, rules).resume;
}

/** More sessions named in one delegation than this are not read (a prompt pasting a whole list). */
const NAMED_KEPT = 32;

/** How a prompt names session `id` so that a delegation finds it: the id itself, or `session <id>` for a custom one. */
export function mentionOf(id: string): string {
  return GENERATED_ID_ONLY.test(id) ? id : `session ${id}`;
}

/**
 * The sessions a delegation may resume: those its prompt names explicitly (a generated id anywhere,
 * or `session <id>` that `mentionTakes`), otherwise this conversation's sessions of the same agent type.
 */
export function candidateIds(request: DelegationRequest, data: ClaudeIndexData): { ids: string[]; named: boolean } {
  const generated = [request.description, request.prompt].flatMap((text) => text.match(GENERATED_ID) ?? []);
  const named = [...new Set([...generated, ...(request.mentioned ?? [])])].slice(0, NAMED_KEPT);
  if (named.length > 0) return { ids: named, named: true };
  const ids = Object.values(data.spawns)
    .filter((s) => s.agent_type === request.agentType)
    .map((s) => s.session);
  return { ids: [...new Set(ids)], named: false };
}

/** The earlier calls whose place in the transcript decides whether they hold a candidate. */
export function callsToPlace(
  request: DelegationRequest,
  data: ClaudeIndexData,
  records: SessionRecord[],
  now: number,
): EarlierCall[] {
  const { ids, named } = candidateIds(request, data);
  const spawns = named ? waitingSpawns(data, ids, now).map(([id, s]) => spawnCall(id, s, request)) : [];
  const denies = records.map(lastDeny).filter((call): call is EarlierCall => call !== undefined);
  return [...spawns, ...denies].filter(
    (call) => sameConversation(request, call) && call.transcriptOffset !== undefined,
  );
}

/**
 * A candidate the delegation did not take, and why: a resume rule it fails, `held` (taken by another
 * delegation of the same message) or `newer_candidate` (another resumable one was updated later).
 */
export interface PassedOver {
  candidate: string;
  reason: ResumeReason | 'held' | 'newer_candidate' | 'other_agent_type';
  detail: string;
}

export interface DelegationDecision {
  /** The paused session to resume, and how; undefined when the delegation starts a new session. */
  chosen: { candidate: SessionRecord; plan: DelegationPlan } | undefined;
  /** The candidates passed over, newest first, at most PASSED_OVER_KEPT of them. */
  passedOver: PassedOver[];
  /** How many candidates were passed over in all. */
  passedOverCount: number;
}

/** A store with many old sessions of one agent type must not bloat the trail nor slow the hook. */
export const PASSED_OVER_KEPT = 5;

/**
 * The paused session to resume and how, and the candidates passed over. Only candidates nothing else
 * holds count. Held: handed to a spawn whose agent has not started yet (for a named session: a spawn
 * of this same assistant message; the model asked for the session), or denied in favour of
 * SendMessage to a call of this same assistant message. So each parallel subagent gets its own
 * session, and a delegation made after the model read a deny still gets the brief (never denied twice
 * in a row).
 */
export function decideDelegation(facts: DelegationFacts): DelegationDecision {
  const isHeld = heldBy(facts);
  const passed: PassedOver[] = [];
  const resumable: SessionRecord[] = [];
  for (const r of newestFirst(facts.records)) {
    const verdict = decideResume(r, facts.now, facts.rules);
    // Naming a session of another agent type refers to it (`review what agent-… did`); continuing it
    // would hand its work to an agent of the wrong kind, whose answer would then end it.
    if (r.agent_name !== facts.request.agentType)
      passed.push({
        candidate: r.agent_id,
        reason: 'other_agent_type',
        detail: `a ${r.agent_name} session; this delegation is to ${facts.request.agentType}`,
      });
    else if (isHeld(r))
      passed.push({
        candidate: r.agent_id,
        reason: 'held',
        detail: takenElsewhere(r, facts)
          ? `being resumed by Claude Code conversation ${String(r.claude?.session_id)}, whose agent has not started`
          : 'taken by a parallel delegation',
      });
    else if (!verdict.resume) passed.push({ candidate: r.agent_id, reason: verdict.reason, detail: verdict.detail });
    else resumable.push(r);
  }
  const candidate = resumable[0];
  for (const r of resumable.slice(1)) {
    passed.push({ candidate: r.agent_id, reason: 'newer_candidate', detail: `${candidate!.agent_id} was taken` });
  }
  // A named id with no readable record: the model asked for it, so say why it was not resumed.
  const { ids, named } = candidateIds(facts.request, facts.data);
  const missing = named ? ids.filter((id) => !facts.records.some((r) => r.agent_id === id)) : [];
  const all: PassedOver[] = [
    ...newestFirstOf(passed, facts.records),
    ...missing.map((id) => ({ candidate: id, reason: 'not_found' as const, detail: 'no such session, or unreadable' })),
  ];
  return {
    chosen: candidate && { candidate, plan: planDelegation(facts, candidate) },
    passedOver: all.slice(0, PASSED_OVER_KEPT),
    passedOverCount: all.length,
  };
}

/** Whether a candidate is held by a spawn or a deny of another call (see decideDelegation). */
function heldBy(facts: DelegationFacts): (record: SessionRecord) => boolean {
  const { request, data, now } = facts;
  const { ids, named } = candidateIds(request, data);
  const held = new Set(
    waitingSpawns(data, ids, now)
      .filter(([id, s]) => !named || sameMessage(facts, spawnCall(id, s, request)))
      .map(([, s]) => s.session),
  );
  return (r) => {
    const deny = lastDeny(r);
    return held.has(r.agent_id) || (deny !== undefined && sameMessage(facts, deny)) || takenElsewhere(r, facts);
  };
}

/**
 * Handed to a delegation of another Claude Code conversation whose agent has not started yet (that
 * conversation's index, which holds the spawn, is not read here; the record says it: the session moved
 * to that conversation and has no agent yet). Two conversations resuming one session would each get
 * the brief and the later stop would overwrite the earlier's phase.
 */
function takenElsewhere(r: SessionRecord, { request, now }: DelegationFacts): boolean {
  const claude = r.claude;
  if (!claude || claude.session_id === request.claudeSession || claude.agent_id != null) return false;
  if (typeof claude.tool_use_id !== 'string') return false;
  const updated = parseTimestamp(r.last_updated);
  return updated !== undefined && now - updated < SPAWN_PENDING_MS;
}

/** What the model reads when a spawn is denied in favour of SendMessage. */
export function continueReason(candidate: SessionRecord, agentId: string): string {
  return (
    `agent-session: session ${candidate.agent_id} (agent ${agentId}, phase ${candidate.phase}) ` +
    'already holds this work and is paused. ' +
    `Do not start a new agent: continue the earlier one with the SendMessage tool, to: "${agentId}", ` +
    'its message carrying your new instructions.'
  );
}

/** The agent transcript a session's `claude` object names, if any. */
export function agentTranscript(record: SessionRecord): string | null {
  const transcript = record.claude?.agent_transcript_path;
  return typeof transcript === 'string' ? transcript : null;
}

/** The records by last update, newest first. */
function newestFirst(records: SessionRecord[]): SessionRecord[] {
  const at = (r: SessionRecord) => parseTimestamp(r.last_updated) ?? 0;
  return [...records].sort((a, b) => at(b) - at(a));
}

/** The candidates passed over in the order of their records, newest first. */
function newestFirstOf(passed: PassedOver[], records: SessionRecord[]): PassedOver[] {
  const order = newestFirst(records).map((r) => r.agent_id);
  return [...passed].sort((a, b) => order.indexOf(a.candidate) - order.indexOf(b.candidate));
}

/**
 * What to do with a resumable candidate. `continue` needs the earlier agent to be reachable by
 * SendMessage: same Claude Code session, transcript still on disk, and not denied just before.
 */
function planDelegation({ policy, request, transcripts }: DelegationFacts, candidate: SessionRecord): DelegationPlan {
  if (policy === 'off') return { action: 'record', reason: 'policy off: the decision is only recorded' };
  if (policy === 'brief') return { action: 'brief', reason: 'policy brief' };
  const claude = candidate.claude ?? {};
  const agentId = typeof claude.agent_id === 'string' ? claude.agent_id : null;
  const transcript = agentTranscript(candidate);
  if (claude.session_id !== request.claudeSession)
    return { action: 'brief', reason: 'the earlier agent belongs to another Claude Code session' };
  if (!agentId) return { action: 'brief', reason: 'no agent id is known for the session' };
  if (!transcript || !transcripts.has(transcript))
    return { action: 'brief', reason: "the earlier agent's transcript is gone" };
  if (lastDecisionWasDeny(candidate))
    return { action: 'brief', reason: 'the previous delegation was already told to continue the agent' };
  return { action: 'continue', agentId, reason: `policy ${policy}: the earlier agent can be continued` };
}

/** Spawns of candidate sessions still waiting for their agent. */
function waitingSpawns(data: ClaudeIndexData, ids: string[], now: number): [string, SpawnEntry][] {
  return pendingSpawns(data, now).filter(([, s]) => ids.includes(s.session));
}

/**
 * Whether an earlier tool call belongs to the same assistant message as the delegation: then the
 * delegation cannot be a reaction to its answer. Claude Code runs a call's hook as soon as the call is
 * streamed, so calls of one message can come seconds apart, and it writes a message to the transcript
 * once the message is complete. So, among the transcript's entries from the earlier call's mark on
 * (the start of its message if that was written when it was decided, else the transcript's end then):
 * - the earlier call not there (decided in the last 10 minutes): its message is still being
 *   streamed, with this call;
 * - both calls there: the same message or not;
 * - over a MiB written since: a later turn.
 * Otherwise (no transcript, or this call not written yet) the hooks' timing decides: the earlier call
 * decided at most PARALLEL_START_MS before this hook started. A call of another conversation or of
 * another caller (a subagent's transcript) is never of the same message.
 */
function sameMessage({ request, views, now, startedAt }: DelegationFacts, earlier: EarlierCall): boolean {
  if (!sameConversation(request, earlier)) return false;
  const since = earlier.transcriptOffset === undefined ? undefined : views.get(earlier.toolUseId);
  if (since === 'beyond') return false;
  const theirs = since?.get(earlier.toolUseId);
  if (since && theirs === undefined && now - earlier.at <= SPAWN_PENDING_MS) return true;
  const own = since?.get(request.toolUseId);
  if (theirs !== undefined && own !== undefined) return theirs === own;
  return earlier.at > startedAt - PARALLEL_START_MS;
}

function sameConversation(request: DelegationRequest, earlier: EarlierCall): boolean {
  return earlier.conversation === request.claudeSession && earlier.caller === request.caller;
}

function spawnCall(toolUseId: string, spawn: SpawnEntry, request: DelegationRequest): EarlierCall {
  return {
    toolUseId,
    at: parseTimestamp(spawn.at) ?? 0,
    conversation: request.claudeSession,
    caller: spawn.caller ?? null,
    transcriptOffset: spawn.transcript_offset,
  };
}

/** True when the latest history entry is a deny: the same candidate is never denied twice in a row. */
function lastDecisionWasDeny(record: SessionRecord): boolean {
  const last = record.history[record.history.length - 1];
  return last?.event === 'resume_decision' && last.decision === 'deny';
}

/** The latest history entry when it is a deny, as the call it answered; else undefined. */
function lastDeny(record: SessionRecord): EarlierCall | undefined {
  const last = record.history[record.history.length - 1];
  if (!lastDecisionWasDeny(record) || typeof last?.tool_use_id !== 'string') return undefined;
  return {
    toolUseId: last.tool_use_id,
    at: parseTimestamp(last.timestamp) ?? 0,
    conversation: typeof last.claude_session_id === 'string' ? last.claude_session_id : '',
    caller: typeof last.caller_agent_id === 'string' ? last.caller_agent_id : null,
    transcriptOffset: typeof last.transcript_offset === 'number' ? last.transcript_offset : undefined,
  };
}
