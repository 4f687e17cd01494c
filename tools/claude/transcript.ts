// Claude Code's transcripts (JSONL files outside the store, only ever read): whether one is still
// there, and which assistant message holds a tool call.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Whether Claude Code still has a transcript (SendMessage reloads an agent from it). */
export function transcriptExists(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The transcript holding a tool call: the conversation's, or for a call made by a subagent (`caller`)
 * that subagent's own, `<conversation>/subagents/agent-<id>.jsonl` beside it.
 */
export function callerTranscript(transcriptPath: string | null, caller: string | null): string | null {
  if (transcriptPath === null || caller === null) return transcriptPath;
  return join(dirname(transcriptPath), basename(transcriptPath, '.jsonl'), 'subagents', `agent-${caller}.jsonl`);
}

/** The most of a transcript read at once; more written after a given point means a later turn. */
const MAX_READ = 1024 * 1024;

/**
 * Where in a transcript to look for what comes with or after the tool call `toolUseId`: the start of
 * the message holding it when that message is already written (within the last MAX_READ bytes), else
 * the transcript's end. Undefined when the transcript is not a readable file.
 */
export function transcriptMark(file: string | null, toolUseId: string): number | undefined {
  const tail = readRange(file);
  if (tail === undefined || tail === 'beyond') return undefined;
  // Lines cut at "\n" bytes, so each offset is exact whatever the characters (the first line may be cut short).
  const lines: { line: string; at: number }[] = [];
  for (let from = 0; from < tail.bytes.length;) {
    const end = tail.bytes.indexOf(0x0a, from);
    const to = end < 0 ? tail.bytes.length : end;
    lines.push({ line: tail.bytes.subarray(from, to).toString('utf8'), at: tail.start + from });
    from = to + 1;
  }
  for (const { line, at } of lines) {
    const message = line.includes(toolUseId) ? messageOf(line, toolUseId) : undefined;
    if (message !== undefined)
      return lines.find((l) => l.line.includes(message) && parseMessage(l.line)?.id === message)?.at ?? at;
  }
  return tail.size;
}

/**
 * The assistant message (`message.id`) holding each of `toolUseIds`, among the transcript's entries
 * from byte `from` on (a transcriptMark). Ids not found there are left out. 'beyond' when more than
 * MAX_READ bytes were written since; undefined when the transcript cannot be read as that (not a
 * regular file, or shorter than `from`).
 */
export function toolUseMessagesSince(
  file: string | null,
  from: number,
  toolUseIds: string[],
): Map<string, string> | 'beyond' | undefined {
  const range = readRange(file, from);
  if (range === undefined || range === 'beyond') return range;
  const found = new Map<string, string>();
  for (const line of range.bytes.toString('utf8').split('\n')) {
    for (const id of toolUseIds) {
      const message = line.includes(id) ? messageOf(line, id) : undefined;
      if (message !== undefined) found.set(id, message);
    }
  }
  return found;
}

/**
 * A file's bytes from `from` to its end ('beyond' when that is over MAX_READ), or without `from` its
 * last MAX_READ bytes. Undefined when it is not a regular file, is shorter than `from`, or cannot be read.
 */
function readRange(
  file: string | null,
  from?: number,
): { bytes: Buffer; start: number; size: number } | 'beyond' | undefined {
  let fd: number | undefined;
  try {
    if (file === null) return undefined;
    // Checked before opening: opening a FIFO would wait for a writer.
    const stats = statSync(file);
    const size = stats.size;
    if (!stats.isFile() || (from !== undefined && size < from)) return undefined;
    if (from !== undefined && size - from > MAX_READ) return 'beyond';
    const start = from ?? Math.max(0, size - MAX_READ);
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(size - start);
    return { bytes: buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, start)), start, size };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The id of the assistant message a transcript line holds when it holds the tool call `toolUseId`. */
function messageOf(line: string, toolUseId: string): string | undefined {
  const message = parseMessage(line);
  const blocks = Array.isArray(message?.content) ? (message.content as Record<string, unknown>[]) : [];
  return blocks.some((b) => b?.type === 'tool_use' && b.id === toolUseId) ? message?.id : undefined;
}

/** The assistant message of a transcript line (with a string id), if it is one. */
function parseMessage(line: string): { id: string; content?: unknown } | undefined {
  try {
    const entry = JSON.parse(line) as { type?: unknown; message?: { id?: unknown; content?: unknown } } | null;
    return entry?.type === 'assistant' && typeof entry.message?.id === 'string'
      ? (entry.message as { id: string; content?: unknown })
      : undefined;
  } catch {
    return undefined;
  }
}
