import path from 'node:path';
import type { JsonObject } from '../merge-patch.js';
import type { SessionRecord } from '../record.js';
import type { ClaudeIndexData, SpawnEntry } from '../store/claude-index.js';
import { formatTimestamp, parseTimestamp } from '../time.js';
import { buildResumeBrief } from './brief.js';
import { changeSession, readOrNothing, type HookContext } from './context.js';
import { continueReason, namedSessionIds, pickCandidate, planDelegation, type DelegationPlan } from './decide.js';
import { appendFooter, buildFooter } from './footer.js';
import { PARALLEL_START_MS, pendingSpawns, SPAWN_PENDING_MS } from './pending.js';
import type { Delegation } from './payload.js';
import { attachSpawn, claudeForDelegation, lastDeny, recordDecision, type EarlierCall } from './transitions.js';

/** What pre_delegate decided for one PreToolUse of the subagent tool. */
export type DelegationResult =
  | { kind: 'created'; session: string; input: JsonObject | null }
  | { kind: 'brief'; session: string; input: JsonObject; reason: string }
  | { kind: 'deny'; session: string; agentId: string; reason: string }
  | { kind: 'repeated'; session: string };

/**
 * A delegation: resume a paused session (deny in favour of SendMessage, or rewrite the prompt with a
 * brief) or create a new one. Everything runs under the Claude Code session's index lock, so the
 * lifecycle events of the same conversation see a consistent index.
 */
export async function handleDelegation(ctx: HookContext, d: Delegation): Promise<DelegationResult> {
  return ctx.index.update<DelegationResult>(d.claudeSession, async (data) => {
    // The same PreToolUse twice (the hook installed both for the user and the project): the same answer.
    const answered = data.answers?.[d.toolUseId];
    if (answered) return { data, result: await answerAgain(ctx, d, answered) };
    const known = data.spawns[d.toolUseId];
    if (known) return { data, result: { kind: 'repeated', session: known.session } as const };
    const { data: next, result } = await decide(ctx, d, data);
    return { data: remember(next, d.toolUseId, result), result };
  });
}

async function decide(
  ctx: HookContext,
  d: Delegation,
  data: ClaudeIndexData,
): Promise<{ data: ClaudeIndexData; result: DelegationResult }> {
  const candidate = await findCandidate(ctx, d, data);
  if (candidate) {
    const policy = ctx.sessions.settings.resumePolicy;
    const plan = planDelegation({
      candidate,
      policy,
      claudeSession: d.claudeSession,
      transcriptExists: ctx.transcriptExists,
    });
    const session = candidate.agent_id;
    // Where this call's message starts in the transcript (or its end, the message not written yet):
    // what is there from that point on tells a later call of this message from a retry. Only a deny
    // or a brief spawn is ever compared with.
    const transcriptOffset = plan.action === 'record' ? undefined : ctx.transcriptMark(transcriptOf(d), d.toolUseId);
    await record(ctx, session, d, plan, transcriptOffset);
    if (plan.action === 'continue') {
      return {
        data,
        result: { kind: 'deny', session, agentId: plan.agentId, reason: continueReason(candidate, plan.agentId) },
      };
    }
    if (plan.action === 'brief') {
      await changeSession(ctx, session, 'hook.attach', (r) => ({ record: attachSpawn(r, d), result: null }));
      const result: DelegationResult = {
        kind: 'brief',
        session,
        input: briefed(ctx, d, candidate),
        reason: plan.reason,
      };
      const spawn = {
        ...(d.caller ? { caller: d.caller } : {}),
        ...(transcriptOffset === undefined ? {} : { transcript_offset: transcriptOffset }),
      };
      return { data: withSpawn(data, d, session, ctx.sessions.now(), spawn), result };
    }
  }
  const session = await createSession(ctx, d, data);
  return {
    data: withSpawn(data, d, session, ctx.sessions.now()),
    result: { kind: 'created', session, input: footed(ctx, d, session) } as const,
  };
}

/** Answers are kept for the latest delegations only, so the index stays small. */
const ANSWERS_KEPT = 16;

/** Kept without the rewritten prompt (it can be long); `answerAgain` rebuilds it. */
function remember(data: ClaudeIndexData, toolUseId: string, result: DelegationResult): ClaudeIndexData {
  const { input: _input, ...compact } = result as DelegationResult & { input?: unknown };
  const answers = Object.entries({ ...(data.answers ?? {}), [toolUseId]: compact as JsonObject }).slice(-ANSWERS_KEPT);
  return { ...data, answers: Object.fromEntries(answers) };
}

async function answerAgain(ctx: HookContext, d: Delegation, answer: JsonObject): Promise<DelegationResult> {
  const session = String(answer.session);
  switch (answer.kind) {
    case 'deny':
      return { kind: 'deny', session, agentId: String(answer.agentId), reason: String(answer.reason) };
    case 'brief': {
      const record = await readOrNothing(ctx, session);
      if (!record) return { kind: 'repeated', session };
      return { kind: 'brief', session, input: briefed(ctx, d, record), reason: String(answer.reason) };
    }
    case 'created':
      return { kind: 'created', session, input: footed(ctx, d, session) };
    default:
      return { kind: 'repeated', session };
  }
}

function footed(ctx: HookContext, d: Delegation, session: string): JsonObject | null {
  return ctx.sessions.settings.promptFooter
    ? { ...d.input, prompt: appendFooter(d.prompt, buildFooter(session)) }
    : null;
}

/** The input with the resume brief before the prompt (and the footer after it, unless turned off). */
function briefed(ctx: HookContext, d: Delegation, record: SessionRecord): JsonObject {
  const prompt = `${buildResumeBrief(record)}\n\n${d.prompt}`;
  return {
    ...d.input,
    prompt: ctx.sessions.settings.promptFooter ? appendFooter(prompt, buildFooter(record.agent_id)) : prompt,
  };
}

/**
 * Sessions the prompt names explicitly, otherwise this conversation's sessions of the same agent
 * type; then only those nothing else holds. Held: handed to a spawn whose agent has not started yet
 * (for a named session: a spawn of this same assistant message; the model asked for the session),
 * or denied in favour of SendMessage to a call of this same assistant message. So each parallel
 * subagent gets its own session, and a delegation made after the model read a deny still gets the
 * brief (never denied twice in a row).
 */
async function findCandidate(
  ctx: HookContext,
  d: Delegation,
  data: ClaudeIndexData,
): Promise<SessionRecord | undefined> {
  const now = ctx.sessions.now();
  const named = namedSessionIds(d.description, d.prompt);
  const ids =
    named.length > 0
      ? named
      : [
          ...new Set(
            Object.values(data.spawns)
              .filter((s) => s.agent_type === d.agentType)
              .map((s) => s.session),
          ),
        ];
  const waiting = pendingSpawns(data, now).filter(([, s]) => ids.includes(s.session));
  const held = new Set(
    waiting
      .filter(([id, s]) => named.length === 0 || sameMessage(ctx, d, spawnCall(id, s, d.claudeSession)))
      .map(([, s]) => s.session),
  );
  const free = (await readAll(ctx, ids)).filter((r) => {
    const deny = lastDeny(r);
    return !held.has(r.agent_id) && !(deny && sameMessage(ctx, d, deny));
  });
  return pickCandidate(free, now, ctx.sessions.rules);
}

/**
 * Whether an earlier tool call belongs to the same assistant message as the delegation `d`: then `d`
 * cannot be a reaction to its answer. Claude Code runs a call's hook as soon as the call is streamed,
 * so calls of one message can come seconds apart, and it writes a message to the transcript once the
 * message is complete. So, among the transcript's entries from the earlier call's mark on (the start
 * of its message if that was written when it was decided, else the transcript's end then):
 * - the earlier call not there (decided in the last 10 minutes): its message is still being
 *   streamed, with this call;
 * - both calls there: the same message or not;
 * - over a MiB written since: a later turn.
 * Otherwise (no transcript, or this call not written yet) the hooks' timing decides: the earlier call
 * decided at most PARALLEL_START_MS before this hook started. A call of another conversation or of
 * another caller (a subagent's transcript) is never of the same message.
 */
function sameMessage(ctx: HookContext, d: Delegation, earlier: EarlierCall): boolean {
  if (earlier.conversation !== d.claudeSession || earlier.caller !== d.caller) return false;
  const since =
    earlier.transcriptOffset === undefined
      ? undefined
      : ctx.toolUseMessagesSince(transcriptOf(d), earlier.transcriptOffset, [earlier.toolUseId, d.toolUseId]);
  if (since === 'beyond') return false;
  const theirs = since?.get(earlier.toolUseId);
  if (since && theirs === undefined && ctx.sessions.now() - earlier.at <= SPAWN_PENDING_MS) return true;
  const own = since?.get(d.toolUseId);
  if (theirs !== undefined && own !== undefined) return theirs === own;
  return earlier.at > ctx.startedAt - PARALLEL_START_MS;
}

function spawnCall(toolUseId: string, spawn: SpawnEntry, conversation: string): EarlierCall {
  return {
    toolUseId,
    at: parseTimestamp(spawn.at) ?? 0,
    conversation,
    caller: spawn.caller ?? null,
    transcriptOffset: spawn.transcript_offset,
  };
}

/** The transcript holding the delegation's call: the main one, or for a nested delegation its caller's. */
function transcriptOf(d: Delegation): string | null {
  if (d.transcriptPath === null || d.caller === null) return d.transcriptPath;
  return path.join(
    path.dirname(d.transcriptPath),
    path.basename(d.transcriptPath, '.jsonl'),
    'subagents',
    `agent-${d.caller}.jsonl`,
  );
}

async function readAll(ctx: HookContext, ids: string[]): Promise<SessionRecord[]> {
  return (await Promise.all(ids.map((id) => readOrNothing(ctx, id)))).filter(
    (r): r is SessionRecord => r !== undefined,
  );
}

async function record(
  ctx: HookContext,
  id: string,
  d: Delegation,
  plan: DelegationPlan,
  transcriptOffset: number | undefined,
): Promise<void> {
  const decision = { continue: 'deny', brief: 'brief', record: 'record' } as const;
  const entry = {
    policy: ctx.sessions.settings.resumePolicy,
    decision: decision[plan.action],
    reason: plan.reason,
    tool_use_id: d.toolUseId,
    claude_session_id: d.claudeSession,
    ...(d.caller ? { caller_agent_id: d.caller } : {}),
    transcript_offset: transcriptOffset ?? null,
  };
  await changeSession(ctx, id, 'hook.resume_decision', (r) => ({
    record: recordDecision(r, entry, ctx.sessions.now()),
    result: null,
  }));
}

async function createSession(ctx: HookContext, d: Delegation, data: ClaudeIndexData): Promise<string> {
  const parentId = d.caller ? data.agents[d.caller]?.session : undefined;
  // A parent removed since (cleanup) makes this a top-level session rather than a failed delegation.
  const parent = parentId && (await readOrNothing(ctx, parentId)) ? parentId : null;
  const created = await ctx.sessions.create({
    agentName: d.agentType,
    purpose: d.description || null,
    parent,
    claude: claudeForDelegation(d),
  });
  return created.agent_id;
}

function withSpawn(
  data: ClaudeIndexData,
  d: Delegation,
  session: string,
  now: number,
  extra: Partial<SpawnEntry> = {},
): ClaudeIndexData {
  return {
    ...data,
    spawns: { ...data.spawns, [d.toolUseId]: { session, agent_type: d.agentType, at: formatTimestamp(now), ...extra } },
  };
}
