import type { HistoryEntry } from '../record.js';

/** The history keeps a decision's historical names; the sentence uses those of the audit trail. */
const DECISION_WORDS: Record<string, string> = { deny: 'continue', brief: 'brief', record: 'none' };

/**
 * One history entry as `show` prints it: a phase change as `from -> to [event]`, a resume decision
 * (which changes no phase) as a sentence with its policy and reason.
 */
export function historyLine(h: HistoryEntry): string {
  if (h.event === 'resume_decision') {
    const word = typeof h.decision === 'string' ? (DECISION_WORDS[h.decision] ?? h.decision) : 'unknown';
    const reason = typeof h.reason === 'string' ? h.reason : '';
    const policy = typeof h.policy === 'string' ? h.policy : undefined;
    const why = !policy || reason.startsWith(`policy ${policy}`) ? reason : `policy ${policy}: ${reason}`;
    return `resume decision: ${word}${why ? ` (${why})` : ''}`;
  }
  const extra = typeof h.event === 'string' ? ` [${h.event}]` : '';
  return `${h.from_phase ?? '-'} -> ${h.to_phase}${extra}`;
}
