import { RESUMABLE_PHASES } from '../phases.js';

/** What a subagent's final message says about its session. */
export type StatusLine = { phase: 'approval' | 'investigating' | 'planning' | 'failed' | 'completed' } | { phase: null };

export const STATUS_KEY = 'session-phase';
const STATUS_PHASES = [...RESUMABLE_PHASES, 'failed', 'completed'] as const;
// `session-phase: approval`, tolerating markdown decoration models like to add (`**…**`, backticks, "> ").
const LINE = /^[\s>*_`-]*session-phase\s*:\s*[*_`]*\s*([A-Za-z]+)\s*[*_`.]*\s*$/i;
/** The status line counts only among the last few non-empty lines: it ends the message. */
const TAIL_LINES = 3;

/** Reads the status line at the end of `message`; unknown phases count as no status line. */
export function parseStatusLine(message: string | null | undefined): StatusLine {
  if (!message) return { phase: null };
  const tail = message.split(/\r?\n/).filter((line) => line.trim() !== '').slice(-TAIL_LINES).reverse();
  for (const line of tail) {
    const match = LINE.exec(line);
    if (!match) continue;
    const phase = match[1]!.toLowerCase();
    return (STATUS_PHASES as readonly string[]).includes(phase) ? { phase: phase as Exclude<StatusLine['phase'], null> } : { phase: null };
  }
  return { phase: null };
}

/** The message without its status line(s), for summaries. */
export function withoutStatusLine(message: string): string {
  return message
    .split(/\r?\n/)
    .filter((line) => !LINE.test(line))
    .join('\n')
    .trim();
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
