import type { JsonObject } from '../merge-patch.js';
import type { SessionRecord } from '../record.js';
import type { ClaudeIndexData } from '../store/claude-index.js';
import { formatTimestamp } from '../time.js';
import { buildResumeBrief } from './brief.js';
import { changeSession, readOrNothing, type HookContext } from './context.js';
import { continueReason, namedSessionIds, pickCandidate, planDelegation, type DelegationPlan } from './decide.js';
import { appendFooter, buildFooter } from './footer.js';
import type { Delegation } from './payload.js';
import { attachSpawn, claudeForDelegation, recordDecision } from './transitions.js';

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
    const known = data.spawns[d.toolUseId];
    if (known) return { data, result: { kind: 'repeated', session: known.session } as const };
    const candidate = await findCandidate(ctx, d, data);
    const plan = candidate ? planDelegation({ candidate, policy: ctx.sessions.settings.resumePolicy, claudeSession: d.claudeSession, transcriptExists: ctx.transcriptExists }) : undefined;
    if (candidate && plan) {
      await record(ctx, candidate.agent_id, d, plan);
      if (plan.action === 'continue') {
        return { data, result: { kind: 'deny', session: candidate.agent_id, agentId: plan.agentId, reason: continueReason(candidate, plan.agentId) } as const };
      }
      if (plan.action === 'brief') {
        await changeSession(ctx, candidate.agent_id, 'hook.attach', (r) => ({ record: attachSpawn(r, d), result: null }));
        const prompt = appendFooter(`${buildResumeBrief(candidate)}\n\n${d.prompt}`, buildFooter(candidate.agent_id));
        return { data: withSpawn(data, d, candidate.agent_id, ctx.sessions.now()), result: { kind: 'brief', session: candidate.agent_id, input: { ...d.input, prompt }, reason: plan.reason } as const };
      }
    }
    const session = await createSession(ctx, d, data);
    const input = ctx.sessions.settings.promptFooter ? { ...d.input, prompt: appendFooter(d.prompt, buildFooter(session)) } : null;
    return { data: withSpawn(data, d, session, ctx.sessions.now()), result: { kind: 'created', session, input } as const };
  });
}

/** Sessions the prompt names explicitly; otherwise this conversation's sessions of the same agent type. */
async function findCandidate(ctx: HookContext, d: Delegation, data: ClaudeIndexData): Promise<SessionRecord | undefined> {
  const named = namedSessionIds(d.description, d.prompt);
  const ids = named.length > 0 ? named : [...new Set(Object.values(data.spawns).filter((s) => s.agent_type === d.agentType).map((s) => s.session))];
  const records = (await Promise.all(ids.map((id) => readOrNothing(ctx, id)))).filter((r): r is SessionRecord => r !== undefined);
  return pickCandidate(records, ctx.sessions.now(), ctx.sessions.rules);
}

async function record(ctx: HookContext, id: string, d: Delegation, plan: DelegationPlan): Promise<void> {
  const decision = { continue: 'deny', brief: 'brief', record: 'record' } as const;
  const entry = { policy: ctx.sessions.settings.resumePolicy, decision: decision[plan.action], reason: plan.reason, tool_use_id: d.toolUseId, claude_session_id: d.claudeSession };
  await changeSession(ctx, id, 'hook.resume_decision', (r) => ({ record: recordDecision(r, entry, ctx.sessions.now()), result: null }));
}

async function createSession(ctx: HookContext, d: Delegation, data: ClaudeIndexData): Promise<string> {
  const parentId = d.caller ? data.agents[d.caller]?.session : undefined;
  // A parent removed since (cleanup) makes this a top-level session rather than a failed delegation.
  const parent = parentId && (await readOrNothing(ctx, parentId)) ? parentId : null;
  const created = await ctx.sessions.create({ agentName: d.agentType, purpose: d.description || null, parent, claude: claudeForDelegation(d) });
  return created.agent_id;
}

function withSpawn(data: ClaudeIndexData, d: Delegation, session: string, now: number): ClaudeIndexData {
  return { ...data, spawns: { ...data.spawns, [d.toolUseId]: { session, agent_type: d.agentType, at: formatTimestamp(now) } } };
}
