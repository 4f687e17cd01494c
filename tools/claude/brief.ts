import type { SessionRecord } from '../record.js';
import { truncate } from '../policy/status-line.js';

/** Upper bounds that keep the brief (and so the rewritten prompt) small whatever the session holds. */
const BRIEF_LIMITS = { purpose: 1000, metadata: 1500, history: 8, message: 2000, errors: 300, total: 5000 };

/**
 * A deterministic summary of a paused session, put before the new instructions when the earlier
 * agent cannot be continued itself. Same record in, same text out (no clock, no randomness).
 */
export function buildResumeBrief(record: SessionRecord): string {
  const claude = record.claude ?? {};
  const lines = [
    `[agent-session] You are resuming session ${record.agent_id}: ` +
      `earlier work by a ${record.agent_name} agent stopped before it was done.`,
    `Purpose: ${record.purpose === null ? '(none recorded)' : truncate(record.purpose, BRIEF_LIMITS.purpose)}`,
    `Phase when it stopped: ${record.phase}`,
  ];
  if (Object.keys(record.metadata).length > 0)
    lines.push(`Metadata: ${truncate(JSON.stringify(record.metadata), BRIEF_LIMITS.metadata)}`);
  const history = record.history.filter((h) => h.from_phase !== h.to_phase).slice(-BRIEF_LIMITS.history);
  if (history.length > 0) {
    lines.push('Phase history:');
    for (const h of history) lines.push(`- ${h.timestamp}: ${h.from_phase ?? '(new)'} -> ${h.to_phase}`);
  }
  const last = record.summary ?? (typeof claude.last_message === 'string' ? claude.last_message : null);
  if (last) lines.push(`Its last message:\n${truncate(last, BRIEF_LIMITS.message)}`);
  if (record.error_count > 0 && record.last_error) {
    lines.push(
      `Errors: ${record.error_count}; the latest: ${truncate(record.last_error.message, BRIEF_LIMITS.errors)}`,
    );
  }
  // The closing line always stays, however much above it had to be cut.
  const closing = 'Continue from there. The new instructions follow.';
  return `${truncate(lines.join('\n'), BRIEF_LIMITS.total - closing.length - 1)}\n${closing}`;
}
