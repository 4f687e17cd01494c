// The tokens of each session, from its agents' transcripts through the store's token cache: a transcript
// that did not change is not read, one that grew is read from where the last read stopped.
import { storeExists } from '../store/project.js';
import {
  readTranscriptCache,
  writeTranscriptCache,
  type TokenSums,
  type TranscriptCacheData,
} from '../store/transcript-cache.js';
import { addTokens, zeroTokens } from './groups.js';
import { readUsage } from './transcript-usage.js';

export interface TranscriptCounts {
  /** Agent transcripts read (from the cache or the file). */
  read: number;
  /** Agents whose transcript was not found (removed by Claude Code, or in a conversation the record lost). */
  missing: number;
  /** Bytes read from transcripts by this run: 0 when the cache had every one. */
  bytes_read: number;
}

export interface SessionTokens {
  /** Each session that has any tokens. */
  bySession: Map<string, TokenSums>;
  transcripts: TranscriptCounts;
}

/**
 * Reads the transcripts of `wanted` sessions (each a list of agents, each a list of candidate paths) and
 * updates the cache: entries of transcripts no session names any more (`known`: every candidate path of the
 * store) are dropped; without `known` (a read of a few sessions) every other entry is kept. The cache is
 * written only when something changed, and never creates the store.
 */
export async function sessionTokens(
  storeDir: string,
  wanted: Map<string, string[][]>,
  known?: Set<string>,
): Promise<SessionTokens> {
  const cache = readTranscriptCache(storeDir);
  const next: TranscriptCacheData = new Map();
  let changed = false;
  const counts: TranscriptCounts = { read: 0, missing: 0, bytes_read: 0 };
  const bySession = new Map<string, TokenSums>();
  for (const [id, agents] of wanted) {
    const seen = new Set<string>();
    const sums = zeroTokens();
    for (const candidates of agents) {
      const read = readUsage(candidates, cache);
      if (read === undefined) {
        counts.missing += 1;
        continue;
      }
      if (read.entry !== cache.get(read.path)) changed = true;
      next.set(read.path, read.entry);
      counts.bytes_read += read.bytesRead;
      // Two agents' candidates can meet in one file (the latest path kept for a record of an older version).
      if (seen.has(read.path)) continue;
      seen.add(read.path);
      counts.read += 1;
      addTokens(sums, read.entry.sums);
    }
    if (sums.input + sums.output + sums.cache_read + sums.cache_write > 0) bySession.set(id, sums);
  }
  for (const [path, entry] of cache) {
    if (next.has(path)) continue;
    if (!known || known.has(path)) next.set(path, entry);
    else changed = true;
  }
  if (changed && storeExists(storeDir)) {
    // The figures are right without the cache: failing to write it only costs the next run a full read.
    await writeTranscriptCache(storeDir, next).catch(() => undefined);
  }
  return { bySession, transcripts: counts };
}
