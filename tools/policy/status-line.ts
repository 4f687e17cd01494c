import { RESUMABLE_PHASES } from '../phases.js';

/** What a subagent's final message says about its session. */
export type StatusLine =
  { phase: 'approval' | 'investigating' | 'planning' | 'failed' | 'completed' } | { phase: null };

export const STATUS_KEY = 'session-phase';
const STATUS_PHASES = [...RESUMABLE_PHASES, 'failed', 'completed'] as const;
// `session-phase: approval`, tolerating markdown decoration models like to add (`**…**`, backticks, "> "),
// and an explanation after the phase: `approval (waiting for a decision)`, `approval - ask Bob`,
// `approval: ask Bob`, `approval, waiting`.
const LINE = /^[\s>*_`-]*session-phase\s*:\s*[*_`]*\s*([A-Za-z]+)\s*[*_`.]*(?:\s*[(,;:].*|\s+[-\u2013\u2014].*)?\s*$/i;
/** The status line counts only among the last few non-empty lines: it ends the message. */
const TAIL_LINES = 3;

/** Reads the status line at the end of `message`; unknown phases count as no status line. */
export function parseStatusLine(message: string | null | undefined): StatusLine {
  if (!message) return { phase: null };
  return statusLine(message.split(/\r?\n/))?.status ?? { phase: null };
}

/** The message without the status line that counted (a recognized phase among its last lines), for summaries. */
export function withoutStatusLine(message: string): string {
  const lines = message.split(/\r?\n/);
  const found = statusLine(lines);
  return lines
    .filter((_, i) => i !== found?.index || found.status.phase === null)
    .join('\n')
    .trim();
}

/** The last line among the last few non-empty ones that has the form of a status line, and what it says. */
function statusLine(lines: string[]): { index: number; status: StatusLine } | undefined {
  for (const index of tailLines(lines).reverse()) {
    const match = LINE.exec(lines[index]!);
    if (!match) continue;
    const phase = match[1]!.toLowerCase();
    const known = (STATUS_PHASES as readonly string[]).includes(phase);
    return { index, status: known ? { phase: phase as Exclude<StatusLine['phase'], null> } : { phase: null } };
  }
  return undefined;
}

/** The indexes of the last few non-empty lines, where a status line counts. */
function tailLines(lines: string[]): number[] {
  return lines.flatMap((line, i) => (line.trim() === '' ? [] : [i])).slice(-TAIL_LINES);
}

/** The last `max` UTF-16 units at most, `…` first, never starting with half of a surrogate pair. */
export function truncateStart(text: string, max: number): string {
  if (text.length <= max) return text;
  let start = text.length - (max - 1);
  const first = text.charCodeAt(start);
  if (first >= 0xdc00 && first <= 0xdfff) start += 1;
  return `…${text.slice(start)}`;
}

/** At most `max` UTF-16 units, `…` included, never ending in half of a surrogate pair (the API refuses those). */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
