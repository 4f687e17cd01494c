import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** The most of a transcript read after a given point; more written since than this means a later turn. */
const MAX_READ = 1024 * 1024;

/**
 * Where in a Claude Code transcript (outside the store, only read) to look for what comes with or
 * after the tool call `toolUseId`: the start of the message holding it when that message is already
 * written (within the last MAX_READ bytes), else the transcript's end. Undefined when the transcript is
 * not a readable file.
 */
export function transcriptMark(file: string | null, toolUseId: string): number | undefined {
  const tail = readTail(file);
  if (!tail) return undefined;
  const { bytes, start, size } = tail;
  // Lines cut at "\n" bytes, so each offset is exact whatever the characters (the first line may be cut short).
  const lines: { line: string; at: number }[] = [];
  for (let from = 0; from < bytes.length; ) {
    const end = bytes.indexOf(0x0a, from);
    const to = end < 0 ? bytes.length : end;
    lines.push({ line: bytes.subarray(from, to).toString('utf8'), at: start + from });
    from = to + 1;
  }
  const holding = lines.find(({ line }) => line.includes(toolUseId) && messageOf(line, toolUseId) !== undefined);
  const message = holding && messageOf(holding.line, toolUseId);
  if (!message) return size;
  return lines.find(({ line }) => line.includes(message) && parseMessage(line)?.id === message)?.at ?? holding.at;
}

function readTail(file: string | null): { bytes: Buffer; start: number; size: number } | undefined {
  let fd: number | undefined;
  try {
    if (file === null) return undefined;
    // Checked before opening: opening a FIFO would wait for a writer.
    const stats = statSync(file);
    if (!stats.isFile()) return undefined;
    const start = Math.max(0, stats.size - MAX_READ);
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(stats.size - start);
    const n = readSync(fd, buffer, 0, buffer.length, start);
    return { bytes: buffer.subarray(0, n), start, size: stats.size };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The assistant message (`message.id`) holding each of `toolUseIds`, among the transcript's entries
 * from byte `from` on (a transcriptMark). Ids not found there are left out. 'beyond' when more than
 * MAX_READ bytes were written since; undefined when the transcript cannot be read as that (not a
 * regular file, or shorter than `from`).
 */
export function toolUseMessagesSince(file: string | null, from: number, toolUseIds: string[]): Map<string, string> | 'beyond' | undefined {
  let fd: number | undefined;
  let text: string;
  try {
    if (file === null) return undefined;
    // Checked before opening: opening a FIFO would wait for a writer.
    const stats = statSync(file);
    if (!stats.isFile() || stats.size < from) return undefined;
    fd = openSync(file, 'r');
    if (stats.size - from > MAX_READ) return 'beyond';
    const buffer = Buffer.alloc(stats.size - from);
    text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, from)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const found = new Map<string, string>();
  for (const line of text.split('\n')) {
    for (const id of toolUseIds) {
      const message = line.includes(id) ? messageOf(line, id) : undefined;
      if (message !== undefined) found.set(id, message);
    }
  }
  return found;
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
    return entry?.type === 'assistant' && typeof entry.message?.id === 'string' ? (entry.message as { id: string; content?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}
