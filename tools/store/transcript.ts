import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** How much of a transcript's end is read: the tool calls looked for are the latest ones. */
const TAIL_BYTES = 1024 * 1024;

/**
 * The assistant message (`message.id`) holding each of `toolUseIds` in the last MiB of a Claude Code
 * transcript (JSON lines; outside the store, only read). Ids not found there are left out; undefined
 * when the transcript cannot be read.
 */
export function toolUseMessages(file: string | null, toolUseIds: string[]): Map<string, string> | undefined {
  const text = file === null ? undefined : readTail(file, TAIL_BYTES);
  if (text === undefined) return undefined;
  const found = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!toolUseIds.some((id) => line.includes(id))) continue;
    const entry = parseLine(line);
    const message = entry?.type === 'assistant' ? (entry.message as Record<string, unknown> | undefined) : undefined;
    if (typeof message?.id !== 'string' || !Array.isArray(message.content)) continue;
    for (const block of message.content as Record<string, unknown>[]) {
      if (block?.type === 'tool_use' && typeof block.id === 'string' && toolUseIds.includes(block.id)) found.set(block.id, message.id);
    }
  }
  return found;
}

function readTail(file: string, max: number): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, max));
    const n = readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.subarray(0, n).toString('utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
