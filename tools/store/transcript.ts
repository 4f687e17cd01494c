import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** The most of a transcript read after a given point; more written since than this means a later turn. */
const MAX_READ = 1024 * 1024;

/** A Claude Code transcript's size (outside the store, only read); undefined when it is not a readable file. */
export function transcriptSize(file: string | null): number | undefined {
  try {
    const stats = file === null ? undefined : statSync(file);
    return stats?.isFile() ? stats.size : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The assistant message (`message.id`) holding each of `toolUseIds`, among the transcript's entries
 * written since it was `from` bytes long. Ids not found there are left out. 'beyond' when more than
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

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
