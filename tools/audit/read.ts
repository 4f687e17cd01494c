import type { Sessions } from '../sessions.js';
import { matches, parseLine, recoverTail, sha256, type AuditEntry, type AuditFilter, type AuditProblem } from './entry.js';
import { auditLogOf } from './log.js';
import { resolveSince } from './duration.js';

export interface ReadAuditOptions {
  session?: string;
  /** Epoch ms, an ISO 8601 timestamp, or a duration back from now (`2h`, `30m`, `7d`). */
  since?: number | string;
  action?: string;
}

export interface AuditReadResult {
  entries: AuditEntry[];
  /** Bad lines, skipped: torn, unparseable, edited (hash mismatch) or not an entry. */
  problems: AuditProblem[];
  /** Bad lines that `doctor --repair` already quarantined and acknowledged; not in `problems`. */
  acknowledged: number;
}

/** The trail across rotated files, oldest first, verifying every line's hash. */
export async function readAudit(sessions: Sessions, options: ReadAuditOptions = {}): Promise<AuditReadResult> {
  const filter: AuditFilter = { session: options.session, action: options.action, since: resolveSince(options.since, sessions.now()) };
  const all: AuditEntry[] = [];
  const bad: AuditProblem[] = [];
  for (const { file, text } of auditLogOf(sessions).readAll()) {
    const lines = text.split('\n');
    const complete = text.endsWith('\n') || text === '';
    lines.forEach((line, index) => {
      if (line === '') return;
      const parsed = parseLine(line);
      if ('entry' in parsed) return void all.push(parsed.entry);
      const last = index === lines.length - 1 && !complete;
      bad.push({ file, line: index + 1, reason: last ? 'torn' : parsed.reason, digest: sha256(line), text: line.slice(0, 200) });
      const recovered = recoverTail(line);
      if (recovered) all.push(recovered);
    });
  }
  const acked = acknowledgedDigests(all);
  const problems = bad.filter((p) => !acked.has(p.digest));
  return { entries: all.filter((e) => matches(e, filter)), problems, acknowledged: bad.length - problems.length };
}

/** `doctor --repair` records the digests of the bad lines it quarantined in an `audit-repair` entry. */
function acknowledgedDigests(entries: AuditEntry[]): Set<string> {
  const digests = new Set<string>();
  for (const entry of entries) {
    if (entry.action !== 'audit-repair' || !Array.isArray(entry.details.digests)) continue;
    for (const d of entry.details.digests) if (typeof d === 'string') digests.add(d);
  }
  return digests;
}
