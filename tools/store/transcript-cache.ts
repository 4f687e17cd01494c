/**
 * The token cache of `stats`: `<store>/.cache/transcripts.json`, what was read of each agent transcript
 * (its size, mtime, how far it was read, a check of the bytes before that point, the running sums), so a
 * second `stats` reads only what Claude Code appended since, and (`found`) where the transcripts of agents
 * that their records do not locate were found, so they are searched for once. It holds nothing the
 * transcripts do not: a cache that is missing, corrupt, of another version or not a regular file is ignored
 * (and rebuilt by the next write), never an error.
 */
import { readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';
import { TEMP_SUFFIX, writeFileAtomic } from './atomic.js';
import { processRuns } from './pid.js';
import { decodeUtf8, ensureAreaSync, readRegularFileSync } from './regular-file.js';
import { ensureStoreSync } from './store-root.js';

export const CACHE_DIR = '.cache';
export const TRANSCRIPT_CACHE = `${CACHE_DIR}/transcripts.json`;
const CACHE_VERSION = 1;
/** Thousands of transcripts take a few MB; a larger file is not ours, and is ignored. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

export interface TokenSums {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** What was read of one transcript. */
export interface TranscriptEntry {
  size: number;
  mtime_ms: number;
  /** Where the next read starts: the end of the last complete line read. */
  offset: number;
  /** Base64 of the bytes right before `offset` (up to 32): changed bytes there mean the file was rewritten. */
  check: string;
  sums: TokenSums;
  /** The last assistant message ids counted: Claude Code writes one line per content block, same id and usage. */
  ids: string[];
}

export interface TranscriptCacheData {
  /** What was read of each transcript, by path. */
  transcripts: Map<string, TranscriptEntry>;
  /** Agent id to the transcript path a search found for it (a conversation its record does not name). */
  found: Map<string, string>;
}

/** The cache, or an empty one when there is none or it cannot be used. */
export function readTranscriptCache(storeDir: string): TranscriptCacheData {
  const cache: TranscriptCacheData = { transcripts: new Map(), found: new Map() };
  try {
    const file = join(storeDir, TRANSCRIPT_CACHE);
    const data = readRegularFileSync(file, { maxBytes: MAX_CACHE_BYTES });
    if (data === undefined) return cache;
    const raw = parseJson(decodeUtf8(data, file));
    if (!isPlainObject(raw) || raw.version !== CACHE_VERSION || !isPlainObject(raw.transcripts)) return cache;
    for (const [path, entry] of Object.entries(raw.transcripts)) if (isEntry(entry)) cache.transcripts.set(path, entry);
    // Absent from a cache an earlier version wrote: its agents are searched for again.
    if (isPlainObject(raw.found))
      for (const [agent, path] of Object.entries(raw.found)) if (typeof path === 'string') cache.found.set(agent, path);
  } catch {
    // A corrupt or unreadable cache costs one full read of the transcripts, nothing else.
  }
  return cache;
}

/**
 * Replaces the cache atomically (a reader sees the old one or the new one). No fsync: a cache lost to a
 * crash costs a full read. Temps that a killed `stats` left behind are removed first.
 */
export async function writeTranscriptCache(storeDir: string, cache: TranscriptCacheData): Promise<void> {
  ensureStoreSync(storeDir);
  const dir = join(storeDir, CACHE_DIR);
  ensureAreaSync(dir);
  removeDeadTemps(dir);
  const text = JSON.stringify({
    version: CACHE_VERSION,
    transcripts: Object.fromEntries(cache.transcripts),
    found: Object.fromEntries(cache.found),
  });
  await writeFileAtomic(join(storeDir, TRANSCRIPT_CACHE), `${text}\n`, { sync: false });
}

/** `transcripts.json.<pid>.<n>.<hex>.tmp` of a process that no longer runs. */
function removeDeadTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^transcripts\.json\.(\d+)\.\d+\.[0-9a-f]+\.tmp$/.exec(name)?.[1];
    if (pid === undefined || !name.endsWith(TEMP_SUFFIX) || processRuns(Number(pid))) continue;
    try {
      unlinkSync(join(dir, name));
    } catch {
      // Gone already (another stats removed it).
    }
  }
}

function isEntry(value: unknown): value is TranscriptEntry {
  if (!isPlainObject(value)) return false;
  const { size, mtime_ms, offset, check, sums, ids } = value;
  const counts = [size, offset].every((n) => Number.isSafeInteger(n) && (n as number) >= 0);
  return (
    counts &&
    (offset as number) <= (size as number) &&
    typeof mtime_ms === 'number' &&
    typeof check === 'string' &&
    Array.isArray(ids) &&
    ids.every((id) => typeof id === 'string') &&
    isPlainObject(sums) &&
    ['input', 'output', 'cache_read', 'cache_write'].every((k) => Number.isSafeInteger(sums[k]))
  );
}
