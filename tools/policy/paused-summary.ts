// What the main agent is told when a conversation starts: the paused sessions a delegation could pick
// up, and how. Pure: the records, the conversation and the clock in, the text (or nothing) out.
import { isFinalPhase, isResumablePhase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';
import { mentionOf } from './delegation.js';
import { decideResume, resumeWindowMs, type ResumeRules } from './resume.js';
import { truncate } from './status-line.js';

/** At most this many sessions are described, in about this many characters. */
export const SUMMARY_SESSIONS = 5;
export const SUMMARY_CHARS = 800;
const PURPOSE_CHARS = 60;
const WAITING_CHARS = 100;

const HEADER =
  'agent-session: paused subagent sessions of this project (their work continues instead of starting over):';
const HOW =
  'To continue one from another conversation, delegate to its agent type naming it in the prompt as its line says: ' +
  'the new agent gets the resume brief.';

/**
 * The paused sessions among `records` (resumable ones first, newest first), or null when none is
 * paused. `conversation`: the Claude Code session starting, where an agent of its own can be continued
 * with SendMessage. `cli`: the command that runs our CLI there (see ownCliCommand).
 */
export function pausedSummary(
  records: SessionRecord[],
  conversation: string,
  now: number,
  rules: ResumeRules,
  cli = 'agent-session',
): string | null {
  const paused = records
    .filter((r) => isResumablePhase(r.phase) && !isFinalPhase(r.phase) && !r.finalized_at)
    .map((record) => ({ record, decision: decideResume(record, now, rules) }))
    .sort((a, b) => Number(b.decision.resume) - Number(a.decision.resume) || updated(b.record) - updated(a.record));
  if (paused.length === 0) return null;
  const lines = [HEADER];
  let shown = 0;
  for (const { record, decision } of paused) {
    const line = describe(record, decision.resume ? null : decision.reason, conversation, now, rules);
    if (shown === SUMMARY_SESSIONS || (shown > 0 && length(lines) + line.length > SUMMARY_CHARS)) break;
    lines.push(line);
    shown += 1;
  }
  if (paused.length > shown) lines.push(`and ${paused.length - shown} more: ${cli} list --paused`);
  if (paused.some((p) => p.decision.resume)) lines.push(HOW);
  return lines.join('\n');
}

function describe(
  record: SessionRecord,
  notResumable: string | null,
  conversation: string,
  now: number,
  rules: ResumeRules,
): string {
  const purpose = record.purpose ? ` "${truncate(oneLine(record.purpose), PURPOSE_CHARS)}"` : '';
  const head = `- ${record.agent_id} (${record.agent_name}${purpose}): ${record.phase}, ${ago(now - updated(record))}`;
  const said = waitingFor(record);
  const waiting = said ? `; waiting for: "${said}"` : '';
  return `${head}${waiting}; ${next(record, notResumable, conversation, rules)}`;
}

/** The next step, or why there is none. */
function next(record: SessionRecord, notResumable: string | null, conversation: string, rules: ResumeRules): string {
  switch (notResumable) {
    case null: {
      const agentId = record.claude?.agent_id;
      if (record.claude?.session_id === conversation && typeof agentId === 'string')
        return `continue it with SendMessage to "${agentId}"`;
      return `continue it: delegate to ${record.agent_name} naming ${mentionOf(record.agent_id)}`;
    }
    case 'expired':
      return `expired (its resume window is ${span(resumeWindowMs(rules, record.phase))}), not resumed`;
    case 'too_many_errors':
      return `error budget spent (${record.error_count} errors), not resumed`;
    default:
      return `not resumed (${notResumable.replace(/_/g, ' ')})`;
  }
}

/** The last non-empty line of the agent's last message: what it asked for, as a rule. */
function waitingFor(record: SessionRecord): string | null {
  const message = record.claude?.last_message;
  if (typeof message !== 'string') return null;
  // The last line that says something: not a rule (`---`), a code fence or an empty line.
  const last = message
    .split(/\r?\n/)
    .map(oneLine)
    .filter((l) => /[\p{L}\p{N}]/u.test(l) && !l.startsWith('```'))
    .at(-1);
  return last ? truncate(last.replace(/"/g, "'"), WAITING_CHARS) : null;
}

/** One line of plain text: terminal escapes and other control characters go, as they would reach the model raw. */
function oneLine(text: string): string {
  return text
    .replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]/g, '')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function updated(record: SessionRecord): number {
  return parseTimestamp(record.last_updated) ?? 0;
}

function length(lines: string[]): number {
  return lines.reduce((sum, l) => sum + l.length + 1, 0);
}

function ago(ms: number): string {
  return `${span(ms)} ago`;
}

/** `45 s`, `12 min`, `3 h`, `2 d`. */
function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 2 * 3600) return `${Math.round(s / 60)} min`;
  if (s < 2 * 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}
