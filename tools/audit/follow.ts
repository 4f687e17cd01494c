import type { SessionContext } from '../session-context.js';
import { matches, parseLine, recoverTail, sha256, type AuditEntry, type AuditProblem } from './entry.js';
import { AUDIT_FILE } from '../store/audit-log.js';
import { AuditTail } from '../store/audit-tail.js';
import { auditFilter, checkAction, readAudit, scanAudit, type ReadAuditOptions } from './read.js';
import { builtinModule } from '../builtin.js';
import { checkOptions, type OptionKeys } from '../options.js';

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
const FOLLOW_KEYS: OptionKeys<FollowAuditOptions> = {
  session: true,
  since: true,
  action: true,
  onEntry: true,
  onProblem: true,
  signal: true,
  intervalMs: true,
};

export async function followAudit(sessions: SessionContext, options: FollowAuditOptions): Promise<void> {
  checkOptions(options, FOLLOW_KEYS, 'followAudit');
  const filter = auditFilter(options, sessions.now());
  // Loaded here, not at start-up, where it would cost every CLI run.
  const { setTimeout: sleep } = builtinModule('node:timers/promises');
  checkAction(filter.action, () => scanAudit(sessions).entries);
  // A reader of what is appended from now on (the hooks, which only append, never load it).
  const tail = new AuditTail(sessions.auditLog.dir, AUDIT_FILE);
  // Start at the end before reading the backlog: an entry appended in between is in both, shown once.
  tail.start(false);
  try {
    // Entries already shown, by hash: the backlog overlaps the first poll, and a rotation racing a
    // poll can bring a file twice. Bounded, oldest forgotten first.
    const seen = new Set<string>();
    const show = (entry: AuditEntry) => {
      if (seen.has(entry.hash)) return;
      seen.add(entry.hash);
      if (seen.size > 10_000) seen.delete(seen.values().next().value!);
      if (matches(entry, filter)) options.onEntry(entry);
    };
    const { session, since, action } = options;
    if (since !== undefined)
      for (const entry of (await readAudit(sessions, { session, since, action })).entries) show(entry);
    while (!options.signal?.aborted) {
      for (const line of tail.read()) {
        if (line === '') continue;
        const parsed = parseLine(line);
        if (!('entry' in parsed))
          options.onProblem?.({
            file: 'audit.jsonl',
            line: 0,
            reason: parsed.reason,
            digest: sha256(line),
            text: line.slice(0, 200),
          });
        const entry = 'entry' in parsed ? parsed.entry : recoverTail(line);
        if (entry) show(entry);
      }
      await sleep(options.intervalMs ?? 100, undefined, { signal: options.signal }).catch(() => undefined);
    }
  } finally {
    tail.close();
  }
}
