// What a person needs to know about a session that is paused, or not: whether a delegation would resume
// it now and, if not, why (the resume rules' own reason), which Claude Code agent and conversation it
// belongs to, what its agent last said and what to do next. Pure: record and decision in, words out.
import { isFinalPhase, isResumablePhase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { mentionOf } from './delegation.js';
import type { ResumeDecision } from './resume.js';
import { truncateStart } from './status-line.js';

/** Where a session stands, one label per list row. */
export type SessionStatus =
  | 'paused, resumable now'
  | 'paused, expired'
  | 'paused, error budget spent'
  | 'paused, not resume ready'
  | 'active'
  | 'final';

/** Claude Code's ids of a session, as `list --json` gives them; null for a session no hook touched. */
export interface ClaudeFields {
  /** The Claude Code conversation (its `session_id`) the session's latest spawn ran in. */
  session_id: string | null;
  /** The agent `SendMessage` reaches, from that conversation only. */
  agent_id: string | null;
  /** Every agent that worked on the session, oldest first. */
  agent_ids: string[];
  agent_type: string;
}

const MESSAGE_LINES = 5;
const MESSAGE_CHARS = 400;

export function sessionStatus(record: SessionRecord, decision: ResumeDecision): SessionStatus {
  if (isFinalPhase(record.phase) || record.finalized_at) return 'final';
  if (!isResumablePhase(record.phase)) return 'active';
  switch (decision.reason) {
    case 'resumable':
      return 'paused, resumable now';
    case 'expired':
      return 'paused, expired';
    case 'too_many_errors':
      return 'paused, error budget spent';
    default:
      return 'paused, not resume ready';
  }
}

export function claudeFields(record: SessionRecord): ClaudeFields | null {
  const claude = record.claude;
  if (!claude) return null;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const ids = Array.isArray(claude.agent_ids) ? claude.agent_ids.filter((id) => typeof id === 'string') : [];
  return {
    session_id: text(claude.session_id),
    agent_id: text(claude.agent_id),
    agent_ids: ids as string[],
    agent_type: record.agent_name,
  };
}

/** The agent's last message (the status line left out), cut to a few lines; null when none was kept. */
export function lastMessage(record: SessionRecord): string[] | null {
  const message = record.claude?.last_message;
  if (typeof message !== 'string' || message.trim() === '') return null;
  // The end of the message: where an agent that stops asks its question.
  const lines = truncateStart(message.trim(), MESSAGE_CHARS).split('\n');
  if (lines.length <= MESSAGE_LINES) return lines;
  return [`… (${lines.length - MESSAGE_LINES} earlier lines)`, ...lines.slice(-MESSAGE_LINES)];
}

/** The one thing to do next, in words, with the ids and commands it takes. */
export function nextStep(record: SessionRecord, decision: ResumeDecision, cli = 'agent-session'): string {
  const id = record.agent_id;
  const delegate = `delegate to ${record.agent_name} naming ${mentionOf(id)} (the new agent gets the resume brief)`;
  const claude = claudeFields(record);
  switch (sessionStatus(record, decision)) {
    case 'final':
      return `nothing to do: ${record.phase}`;
    case 'active':
      return claude?.agent_id
        ? `nothing to do: agent ${claude.agent_id} is working on it (${record.phase})`
        : `nothing to do: it is ${record.phase}`;
    case 'paused, resumable now':
      return claude?.agent_id && claude.session_id
        ? `resume: in Claude Code conversation ${claude.session_id}, SendMessage to ${claude.agent_id}; ` +
            `from another conversation, ${delegate}`
        : `resume: ${delegate}`;
    case 'paused, expired':
      return (
        `a delegation naming it starts a new session; to resume it, renew its window ` +
        `(${cli} update ${id} --phase ${record.phase}), then ${delegate}`
      );
    case 'paused, error budget spent':
      return (
        `a delegation naming it starts a new session; end it with ${cli} finalize ${id} failed ` + `(or abandoned)`
      );
    case 'paused, not resume ready':
      return `to resume it, mark it resumable (${cli} update ${id} --phase ${record.phase}), then ${delegate}`;
  }
}
