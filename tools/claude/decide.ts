import type { Settings } from '../config.js';
import { decideResume, type ResumeRules } from '../policy/resume.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';
import { lastDecisionWasDeny } from './transitions.js';

export type ResumePolicy = Settings['resumePolicy'];

/** Session ids this tool generates, as they appear in a prompt that names one explicitly. */
const GENERATED_ID = /\bagent-\d{8}-\d{6}-[0-9a-f]{8}\b/g;

export function namedSessionIds(...texts: string[]): string[] {
  return [...new Set(texts.flatMap((text) => text.match(GENERATED_ID) ?? []))];
}

/** The newest record (by last update) that passes the resume rules, if any. */
export function pickCandidate(records: SessionRecord[], now: number, rules: ResumeRules): SessionRecord | undefined {
  return records
    .filter((record) => decideResume(record, now, rules).resume)
    .sort((a, b) => (parseTimestamp(b.last_updated) ?? 0) - (parseTimestamp(a.last_updated) ?? 0))[0];
}

export type DelegationPlan =
  | { action: 'continue'; agentId: string; reason: string }
  | { action: 'brief'; reason: string }
  | { action: 'record'; reason: string };

export interface PlanFacts {
  candidate: SessionRecord;
  policy: ResumePolicy;
  claudeSession: string;
  /** Whether Claude Code still has the transcript SendMessage would reload. */
  transcriptExists: (file: string) => boolean;
}

/**
 * What to do with a resumable candidate. `continue` needs the earlier agent to be reachable by
 * SendMessage: same Claude Code session, transcript still on disk, and not denied just before.
 */
export function planDelegation({ candidate, policy, claudeSession, transcriptExists }: PlanFacts): DelegationPlan {
  if (policy === 'off') return { action: 'record', reason: 'policy off: the decision is only recorded' };
  if (policy === 'brief') return { action: 'brief', reason: 'policy brief' };
  const claude = candidate.claude ?? {};
  const agentId = typeof claude.agent_id === 'string' ? claude.agent_id : null;
  const transcript = typeof claude.agent_transcript_path === 'string' ? claude.agent_transcript_path : null;
  if (claude.session_id !== claudeSession)
    return { action: 'brief', reason: 'the earlier agent belongs to another Claude Code session' };
  if (!agentId) return { action: 'brief', reason: 'no agent id is known for the session' };
  if (!transcript || !transcriptExists(transcript))
    return { action: 'brief', reason: "the earlier agent's transcript is gone" };
  if (lastDecisionWasDeny(candidate))
    return { action: 'brief', reason: 'the previous delegation was already told to continue the agent' };
  return { action: 'continue', agentId, reason: `policy ${policy}: the earlier agent can be continued` };
}

/** What the model reads when a spawn is denied in favour of SendMessage. */
export function continueReason(candidate: SessionRecord, agentId: string): string {
  return (
    `agent-session: session ${candidate.agent_id} (agent ${agentId}, phase ${candidate.phase}) already holds this work and is paused. ` +
    `Do not start a new agent: continue the earlier one with the SendMessage tool, to: "${agentId}", ` +
    'its message carrying your new instructions.'
  );
}
