import type { JsonObject } from '../../merge-patch.js';
import { attachSpawn, claudeForDelegation, recordDecision } from '../../policy/claude-transitions.js';
import {
  agentTranscript,
  callsToPlace,
  candidateIds,
  continueReason,
  decideDelegation,
  type DelegationDecision,
  type DelegationFacts,
  type DelegationPlan,
  mentionTakes,
  sessionMentions,
  type TranscriptView,
} from '../../policy/delegation.js';
import type { SessionRecord } from '../../record.js';
import type { ClaudeIndexData, SpawnEntry } from '../../store/claude-index.js';
import { formatTimestamp } from '../../time.js';
import { buildResumeBrief } from '../brief.js';
import { appendFooter, buildFooter } from '../footer.js';
import type { Delegation } from '../payload.js';
import { callerTranscript, toolUseMessagesSince, transcriptExists, transcriptMark } from '../transcript.js';
import { changeSession, readOrNothing, type HookContext } from './hook-context.js';

/** What pre_delegate decided for one PreToolUse of the subagent tool. */
export type DelegationResult =
  | { kind: 'created'; session: string; input: JsonObject | null }
  | { kind: 'brief'; session: string; input: JsonObject; reason: string }
  | { kind: 'deny'; session: string; agentId: string; reason: string }
  | { kind: 'repeated'; session: string };

/**
 * PreToolUse of the subagent tool: gather the facts, decide (tools/policy/delegation.ts), apply the
 * decision to the records and the index, and answer. Everything runs under the Claude Code session's
 * index lock, so the lifecycle events of the same conversation see a consistent index.
 */
export async function onDelegation(ctx: HookContext, d: Delegation): Promise<DelegationResult> {
  return ctx.index.update<DelegationResult>(d.claudeSession, async (data) => {
    // The same PreToolUse twice (the hook installed both for the user and the project): the same answer.
    const answered = data.answers?.[d.toolUseId];
    if (answered) return { data, result: await answerAgain(ctx, d, answered) };
    const known = data.spawns[d.toolUseId];
    if (known) return { data, result: { kind: 'repeated', session: known.session } as const };
    const { data: next, result } = await decideAndApply(ctx, d, data);
    return { data: remember(next, d.toolUseId, result), result };
  });
}

async function decideAndApply(
  ctx: HookContext,
  delegation: Delegation,
  data: ClaudeIndexData,
): Promise<{ data: ClaudeIndexData; result: DelegationResult }> {
  const mentioned = await mentionedSessions(ctx, delegation);
  const d = mentioned.length > 0 ? { ...delegation, mentioned } : delegation;
  const decision = decideDelegation(await gatherFacts(ctx, d, data));
  const { data: next, result } = await apply(ctx, d, data, decision);
  await recordPassedOver(ctx, d, decision, result.session);
  return { data: next, result };
}

async function apply(
  ctx: HookContext,
  d: Delegation,
  data: ClaudeIndexData,
  { chosen, passedOverCount }: DelegationDecision,
): Promise<{ data: ClaudeIndexData; result: DelegationResult }> {
  if (chosen) {
    const { candidate, plan } = chosen;
    const session = candidate.agent_id;
    // Where this call's message starts in the transcript (or its end, the message not written yet):
    // what is there from that point on tells a later call of this message from a retry. Only a deny
    // or a brief spawn is ever compared with.
    const transcriptOffset =
      plan.action === 'record' ? undefined : transcriptMark(callerTranscript(d.transcriptPath, d.caller), d.toolUseId);
    await record(ctx, session, d, plan, transcriptOffset, passedOverCount);
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
  if (!chosen) await recordNewSession(ctx, d, session, passedOverCount);
  return {
    data: withSpawn(data, d, session, ctx.sessions.now()),
    result: { kind: 'created', session, input: footed(ctx, d, session) } as const,
  };
}

/** Custom ids the text names as `session <id>`: a stat each, then the record of those that exist. */
async function mentionedSessions(ctx: HookContext, d: Delegation): Promise<string[]> {
  const existing = sessionMentions(d).filter((id) => ctx.sessions.store.has(id));
  // A plain word: whatever is wrong with what it names (a link, a corrupt record) makes it name nothing.
  const records = await Promise.all(existing.map((id) => readOrNothing(ctx, id).catch(() => undefined)));
  const { rules } = ctx.sessions;
  const now = ctx.sessions.now();
  return records
    .filter((r): r is SessionRecord => r !== undefined && mentionTakes(r, d, now, rules))
    .map((r) => r.agent_id);
}

/** What the decision needs from the disk: the candidates' records and what the transcripts say. */
async function gatherFacts(ctx: HookContext, d: Delegation, data: ClaudeIndexData): Promise<DelegationFacts> {
  const now = ctx.sessions.now();
  const records = await readAll(ctx, candidateIds(d, data).ids);
  const transcript = callerTranscript(d.transcriptPath, d.caller);
  const views = new Map<string, TranscriptView>(
    callsToPlace(d, data, records, now).map((call) => [
      call.toolUseId,
      toolUseMessagesSince(transcript, call.transcriptOffset!, [call.toolUseId, d.toolUseId]),
    ]),
  );
  const transcripts = new Set(
    records.map(agentTranscript).filter((file): file is string => file !== null && transcriptExists(file)),
  );
  const { settings, rules } = ctx.sessions;
  return {
    request: d,
    data,
    records,
    views,
    transcripts,
    now,
    startedAt: ctx.startedAt,
    rules,
    policy: settings.resumePolicy,
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
    ? { ...d.input, prompt: appendFooter(d.prompt, buildFooter(session, ctx.cliCommand())) }
    : null;
}

/** The input with the resume brief before the prompt (and the footer after it, unless turned off). */
function briefed(ctx: HookContext, d: Delegation, record: SessionRecord): JsonObject {
  const prompt = `${buildResumeBrief(record)}\n\n${d.prompt}`;
  return {
    ...d.input,
    prompt: ctx.sessions.settings.promptFooter
      ? appendFooter(prompt, buildFooter(record.agent_id, ctx.cliCommand()))
      : prompt,
  };
}

async function readAll(ctx: HookContext, ids: string[]): Promise<SessionRecord[]> {
  return (await Promise.all(ids.map((id) => readOrNothing(ctx, id)))).filter(
    (r): r is SessionRecord => r !== undefined,
  );
}

/** How a decision reads in the audit trail (the history keeps `deny` and `record`, which nothing renames). */
const AUDIT_DECISION = { continue: 'continue', brief: 'brief', record: 'none' } as const;

async function record(
  ctx: HookContext,
  id: string,
  d: Delegation,
  plan: DelegationPlan,
  transcriptOffset: number | undefined,
  passedOver: number,
): Promise<void> {
  const decision = { continue: 'deny', brief: 'brief', record: 'record' } as const;
  const policy = ctx.sessions.settings.resumePolicy;
  const entry = {
    policy,
    decision: decision[plan.action],
    reason: plan.reason,
    tool_use_id: d.toolUseId,
    claude_session_id: d.claudeSession,
    ...(d.caller ? { caller_agent_id: d.caller } : {}),
    transcript_offset: transcriptOffset ?? null,
  };
  const details = {
    decision: AUDIT_DECISION[plan.action],
    policy,
    candidate: id,
    reason: plan.reason,
    ...(plan.action === 'continue' ? { agent_id: plan.agentId } : {}),
    ...delegationDetails(d),
    passed_over: passedOver,
  };
  await changeSession(
    ctx,
    id,
    'hook.resume_decision',
    (r) => ({ record: recordDecision(r, entry, ctx.sessions.now()), result: null }),
    details,
  );
}

/** No candidate resumed: the decision is the new session's first audit entry after its `create`. */
async function recordNewSession(ctx: HookContext, d: Delegation, session: string, passedOver: number): Promise<void> {
  await ctx.sessions.audit('hook.resume_decision', [session], {
    decision: 'new_session',
    policy: ctx.sessions.settings.resumePolicy,
    candidate: null,
    reason: passedOver === 0 ? 'no paused session to resume' : 'no candidate could resume',
    ...delegationDetails(d),
    passed_over: passedOver,
  });
}

/**
 * The candidates passed over, in one entry naming each (at most PASSED_OVER_KEPT) in `ids`, so
 * `audit --session` finds it: one append, whatever their number, keeps the hook's cost flat.
 */
async function recordPassedOver(
  ctx: HookContext,
  d: Delegation,
  { passedOver, passedOverCount }: DelegationDecision,
  taken: string,
): Promise<void> {
  if (passedOver.length === 0) return;
  await ctx.sessions.audit(
    'hook.passed_over',
    passedOver.map((p) => p.candidate),
    { passed_over: passedOver, count: passedOverCount, session: taken, ...delegationDetails(d) },
  );
}

function delegationDetails(d: Delegation): Record<string, string> {
  return {
    tool_use_id: d.toolUseId,
    claude_session_id: d.claudeSession,
    agent_type: d.agentType,
    ...(d.caller ? { caller_agent_id: d.caller } : {}),
  };
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
