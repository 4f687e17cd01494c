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
import type { AgentTranscript } from './session-facts.js';
import { listAgentTranscripts, readUsage, type UsageRead } from './transcript-usage.js';

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

/** Every transcript path and agent id the store's records name: cache entries of others are dropped. */
export interface KnownTranscripts {
  paths: Set<string>;
  agents: Set<string>;
}

/**
 * Reads the transcripts of `wanted` sessions (each a list of agents) and updates the cache: entries of
 * transcripts no session names any more (`known`) are dropped; without `known` (a read of a few sessions)
 * every other entry is kept. The cache is written only when something changed, and never creates the store.
 */
export async function sessionTokens(
  storeDir: string,
  wanted: Map<string, AgentTranscript[]>,
  known?: KnownTranscripts,
): Promise<SessionTokens> {
  const cache = readTranscriptCache(storeDir);
  const next: TranscriptCacheData = { transcripts: new Map(), found: new Map() };
  const search = new ProjectSearch();
  let changed = false;
  const counts: TranscriptCounts = { read: 0, missing: 0, bytes_read: 0 };
  const bySession = new Map<string, TokenSums>();
  const located = new Set<string>();
  for (const [id, agents] of wanted) {
    const seen = new Set<string>();
    const sums = zeroTokens();
    for (const agent of agents) {
      let read = readUsage(agent.paths, cache.transcripts);
      if (read === undefined && agent.agent !== null) {
        read = readElsewhere(agent, agent.agent);
        if (read !== undefined) {
          if (cache.found.get(agent.agent) !== read.path) changed = true;
          next.found.set(agent.agent, read.path);
        }
      } else if (read !== undefined && agent.agent !== null) located.add(agent.agent);
      if (read === undefined) {
        counts.missing += 1;
        continue;
      }
      if (read.entry !== cache.transcripts.get(read.path)) changed = true;
      next.transcripts.set(read.path, read.entry);
      counts.bytes_read += read.bytesRead;
      // Two agents' candidates can meet in one file (the latest path kept for a record of an older version).
      if (seen.has(read.path)) continue;
      seen.add(read.path);
      counts.read += 1;
      addTokens(sums, read.entry.sums);
    }
    if (sums.input + sums.output + sums.cache_read + sums.cache_write > 0) bySession.set(id, sums);
  }
  for (const [agent, path] of cache.found) {
    if (next.found.has(agent)) continue;
    // Kept for an agent of the store not read this run; dropped once its record names the path itself.
    if (!located.has(agent) && (!known || known.agents.has(agent))) next.found.set(agent, path);
    else changed = true;
  }
  const foundPaths = new Set(next.found.values());
  for (const [path, entry] of cache.transcripts) {
    if (next.transcripts.has(path)) continue;
    if (!known || known.paths.has(path) || foundPaths.has(path)) next.transcripts.set(path, entry);
    else changed = true;
  }
  if (changed && storeExists(storeDir)) {
    // The figures are right without the cache: failing to write it only costs the next run a full read.
    await writeTranscriptCache(storeDir, next).catch(() => undefined);
  }
  return { bySession, transcripts: counts };

  /** The path an earlier run found for the agent, else a search of the other conversations of its project. */
  function readElsewhere(agent: AgentTranscript, id: string): UsageRead | undefined {
    const remembered = cache.found.get(id);
    const read = remembered === undefined ? undefined : readUsage([remembered], cache.transcripts);
    if (read !== undefined) return read;
    for (const project of agent.projects) {
      const path = search.find(project, id);
      if (path !== undefined && path !== remembered && !agent.paths.includes(path))
        return readUsage([path], cache.transcripts);
    }
    return undefined;
  }
}

/**
 * The agent transcripts of each project directory, `<conversation>/subagents/agent-<id>.jsonl`: listed once
 * per run and project (one listing of the project and one of each conversation's subagents), the first time
 * an agent of that project is not where its record says.
 */
class ProjectSearch {
  private readonly projects = new Map<string, Map<string, string>>();

  find(project: string, agent: string): string | undefined {
    let agents = this.projects.get(project);
    if (agents === undefined) {
      agents = listAgentTranscripts(project);
      this.projects.set(project, agents);
    }
    return agents.get(agent);
  }
}
