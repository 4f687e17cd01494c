// The token figures of Claude Code's agent transcripts (JSONL files outside the store, only ever read),
// read from where the cache left off. Each assistant message's `message.usage` counts once: Claude Code
// writes one line per content block, every line with the message's id and the same usage. Not in
// claude/transcript.ts: that module is on the hooks' path, which stays as small as it is.
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { TokenSums, TranscriptEntry } from '../store/transcript-cache.js';

// O_NONBLOCK: a transcript path that names a FIFO must not block stats until a writer comes.
const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const CHUNK = 1024 * 1024;
/** No assistant line is this long (its usage is what is read): a longer line is passed over, never held whole. */
const MAX_LINE = 32 * 1024 * 1024;
/**
 * Claude Code's transcripts of one agent stay far below this; a path naming a larger file (a disk image, a log
 * that happens to be there) is not read at all, so that no store can make `stats` or the dashboard read gigabytes.
 */
export const MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024;
const CHECK_BYTES = 32;
/** Lines of one message are written together; the ids of the last few messages are enough to skip repeats. */
const IDS_KEPT = 32;

export interface UsageRead {
  entry: TranscriptEntry;
  /** The path read: the first of the candidates that is a regular file. */
  path: string;
  bytesRead: number;
}

/**
 * The sums of the first candidate path that is a readable regular file, from `cached` on when the file only
 * grew since (its size at least the cached offset and the bytes before that offset unchanged); from the
 * start when it shrank or was rewritten. Undefined when no candidate can be read.
 */
export function readUsage(candidates: string[], cache: ReadonlyMap<string, TranscriptEntry>): UsageRead | undefined {
  for (const path of candidates) {
    let fd: number;
    try {
      fd = openSync(path, FLAGS);
    } catch {
      continue;
    }
    try {
      const info = fstatSync(fd);
      if (!info.isFile() || info.size > MAX_TRANSCRIPT_BYTES) continue;
      const cached = cache.get(path);
      if (cached && cached.size === info.size && cached.mtime_ms === info.mtimeMs)
        return { entry: cached, path, bytesRead: 0 };
      const resume = cached && info.size >= cached.offset && checkAt(fd, cached.offset) === cached.check;
      const start = resume ? cached : undefined;
      return { ...readFrom(fd, info.size, info.mtimeMs, start), path };
    } catch {
      continue;
    } finally {
      closeSync(fd);
    }
  }
  return undefined;
}

function readFrom(
  fd: number,
  size: number,
  mtimeMs: number,
  start: TranscriptEntry | undefined,
): { entry: TranscriptEntry; bytesRead: number } {
  const sums: TokenSums = start ? { ...start.sums } : { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  const ids = start ? [...start.ids] : [];
  let offset = start?.offset ?? 0;
  let position = offset;
  // `pending` (the start of a line not ended yet) begins at `at`; a line longer than MAX_LINE is skipped.
  let pending = Buffer.alloc(0);
  let at = offset;
  let skipping = false;
  while (position < size) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, size - position));
    const n = readSync(fd, chunk, 0, chunk.length, position);
    if (n === 0) break;
    position += n;
    const data = pending.length > 0 ? Buffer.concat([pending, chunk.subarray(0, n)]) : chunk.subarray(0, n);
    let from = 0;
    for (let end = data.indexOf(0x0a, from); end !== -1; end = data.indexOf(0x0a, from)) {
      if (!skipping) countLine(data.toString('utf8', from, end), sums, ids);
      skipping = false;
      from = end + 1;
      offset = at + from;
    }
    at += from;
    pending = Buffer.from(data.subarray(from));
    if (pending.length > MAX_LINE) {
      // Passed over for good: the next read starts after it, not at its start again (a file that never
      // ends that line would otherwise be read whole on every run).
      at += pending.length;
      offset = at;
      pending = Buffer.alloc(0);
      skipping = true;
    }
  }
  const entry = { size, mtime_ms: mtimeMs, offset, check: checkAt(fd, offset), sums, ids: ids.slice(-IDS_KEPT) };
  return { entry, bytesRead: position - (start?.offset ?? 0) };
}

function countLine(line: string, sums: TokenSums, ids: string[]): void {
  // Most lines are prompts, tool results and attachments: no JSON parse for them.
  if (!line.includes('"usage"') || !line.includes('"assistant"')) return;
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return;
  }
  if (typeof entry !== 'object' || entry === null) return;
  const { type, message } = entry as { type?: unknown; message?: { id?: unknown; usage?: unknown } };
  if (type !== 'assistant' || typeof message?.usage !== 'object' || message.usage === null) return;
  if (typeof message.id === 'string') {
    if (ids.includes(message.id)) return;
    ids.push(message.id);
    if (ids.length > IDS_KEPT * 2) ids.splice(0, ids.length - IDS_KEPT);
  }
  const usage = message.usage as Record<string, unknown>;
  sums.input = sum(sums.input, usage.input_tokens);
  sums.output = sum(sums.output, usage.output_tokens);
  sums.cache_read = sum(sums.cache_read, usage.cache_read_input_tokens);
  sums.cache_write = sum(sums.cache_write, usage.cache_creation_input_tokens);
}

/** A running sum that stays a safe integer (figures past 2^53 would lose precision and fail the cache's check). */
function sum(total: number, value: unknown): number {
  return Math.min(total + count(value), Number.MAX_SAFE_INTEGER);
}

function count(value: unknown): number {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0;
}

/** Base64 of the bytes right before `offset`. */
function checkAt(fd: number, offset: number): string {
  const length = Math.min(CHECK_BYTES, offset);
  const bytes = Buffer.alloc(length);
  const n = length === 0 ? 0 : readSync(fd, bytes, 0, length, offset - length);
  return bytes.subarray(0, n).toString('base64');
}

/**
 * The agent transcripts under a project directory (`<conversation>/subagents/agent-<id>.jsonl`), by agent
 * id: one listing of the project and one of each conversation's subagents.
 */
export function listAgentTranscripts(project: string): Map<string, string> {
  const agents = new Map<string, string>();
  for (const conversation of listDir(project)) {
    if (!conversation.isDirectory()) continue;
    const dir = join(project, conversation.name, 'subagents');
    for (const file of listDir(dir)) {
      const agent = /^agent-(.+)\.jsonl$/.exec(file.name)?.[1];
      if (agent !== undefined && !agents.has(agent)) agents.set(agent, join(dir, file.name));
    }
  }
  return agents;
}

function listDir(dir: string) {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    // Not there (Claude Code removed it) or not readable: nothing to find in it.
    return [];
  }
}
