import { setTimeout as sleep } from 'node:timers/promises';
import type { Sessions } from '../sessions.js';
import { matches, parseLine, recoverTail, sha256, type AuditEntry, type AuditProblem } from './entry.js';
import { auditLogOf } from './log.js';
import { resolveSince } from './duration.js';
import { readAudit, type ReadAuditOptions } from './read.js';

export interface FollowAuditOptions extends ReadAuditOptions {
  /** Called for each matching entry, in file order. */
  onEntry(entry: AuditEntry): void;
  onProblem?(problem: AuditProblem): void;
  /** Stops following; the returned promise then resolves. */
  signal?: AbortSignal;
  /** How often the file is polled (default 100 ms). */
  intervalMs?: number;
}

/**
 * Streams entries as they are appended, across rotations. With `since`, the matching entries
 * already in the trail come first. Polls the file: cheap, and works where file watching does not.
 */
export async function followAudit(sessions: Sessions, options: FollowAuditOptions): Promise<void> {
  const filter = { session: options.session, action: options.action, since: resolveSince(options.since, sessions.now()) };
  const tail = auditLogOf(sessions).tail();
  // Start at the end before reading the backlog: an entry appended in between is in both; the first poll skips it.
  tail.start(false);
  try {
    const seen = new Set<string>();
    if (options.since !== undefined) {
      const backlog = await readAudit(sessions, options);
      for (const entry of backlog.entries) {
        seen.add(entry.hash);
        options.onEntry(entry);
      }
    }
    while (!options.signal?.aborted) {
      for (const line of tail.read()) {
        if (line === '') continue;
        const parsed = parseLine(line);
        const entry = 'entry' in parsed ? parsed.entry : recoverTail(line);
        if (!('entry' in parsed)) options.onProblem?.({ file: 'audit.jsonl', line: 0, reason: parsed.reason, digest: sha256(line), text: line.slice(0, 200) });
        if (!entry || seen.has(entry.hash) || !matches(entry, filter)) continue;
        options.onEntry(entry);
      }
      seen.clear();
      await sleep(options.intervalMs ?? 100, undefined, { signal: options.signal }).catch(() => undefined);
    }
  } finally {
    tail.close();
  }
}
