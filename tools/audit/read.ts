import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { AUDIT_ACTIONS, type SessionContext } from '../session-context.js';
import { closest } from '../suggest.js';
import {
  matches,
  parseLine,
  recoverTail,
  sha256,
  type AuditEntry,
  type AuditFilter,
  type AuditProblem,
} from './entry.js';
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
export async function readAudit(sessions: SessionContext, options: ReadAuditOptions = {}): Promise<AuditReadResult> {
  const filter = auditFilter(options, sessions.now());
  const scan = scanAudit(sessions);
  checkAction(filter.action, scan.entries);
  const problems = scan.bad.filter((b) => !b.acknowledged).map((b) => b.problem);
  return {
    entries: scan.entries.filter((e) => matches(e, filter)),
    problems,
    acknowledged: scan.bad.length - problems.length,
  };
}

/** The filter of `readAudit` and `followAudit`, its session id checked as ids are everywhere. */
export function auditFilter(options: ReadAuditOptions, now: number): AuditFilter {
  if (options.session !== undefined) assertValidId(options.session);
  return { session: options.session, action: options.action, since: resolveSince(options.since, now) };
}

/**
 * An action filter names one of agent-session's actions, or one found in the trail (`sessions.audit()`
 * takes actions of the caller's own): a typo is an error, never a silent "no entries".
 */
export function checkAction(action: string | undefined, trail: AuditEntry[] | (() => AuditEntry[])): void {
  if (action === undefined || (AUDIT_ACTIONS as readonly string[]).includes(action)) return;
  if ((typeof trail === 'function' ? trail() : trail).some((e) => e.action === action)) return;
  const suggestion = closest(action, AUDIT_ACTIONS);
  throw new SessionError(
    'EINVALID',
    `unknown audit action ${JSON.stringify(action)}${suggestion ? `; did you mean "${suggestion}"?` : ''} ` +
      `(the actions: ${AUDIT_ACTIONS.join(', ')}, and those in the trail)`,
    { details: { action, ...(suggestion ? { suggestion } : {}) } },
  );
}

interface AuditScan {
  /** Every entry, oldest first; empty when the scan was asked only to count them. */
  entries: AuditEntry[];
  /** How many entries the trail holds. */
  count: number;
  /** Every bad line with its full text; `acknowledged` when an `audit-repair` entry names its digest. */
  bad: { problem: AuditProblem; raw: string; acknowledged: boolean }[];
}

/** The whole trail; with `keep` false its entries are counted, not kept (doctor's check of a 30 MiB trail). */
export function scanAudit(sessions: SessionContext, keep = true): AuditScan {
  const entries: AuditEntry[] = [];
  const repairs: AuditEntry[] = [];
  const bad: AuditScan['bad'] = [];
  let count = 0;
  const add = (entry: AuditEntry) => {
    count++;
    if (keep) entries.push(entry);
    else if (entry.action === 'audit-repair') repairs.push(entry);
  };
  for (const { file, text } of sessions.auditLog.readAll()) {
    const lines = text.split('\n');
    const complete = text.endsWith('\n') || text === '';
    lines.forEach((line, index) => {
      if (line === '') return;
      const parsed = parseLine(line);
      if ('entry' in parsed) return add(parsed.entry);
      const last = index === lines.length - 1 && !complete;
      const problem: AuditProblem = {
        file,
        line: index + 1,
        reason: last ? 'torn' : parsed.reason,
        digest: sha256(line),
        text: line.slice(0, 200),
      };
      bad.push({ problem, raw: line, acknowledged: false });
      const recovered = recoverTail(line);
      if (recovered) add(recovered);
    });
  }
  const acked = acknowledgedDigests(keep ? entries : repairs);
  for (const b of bad) b.acknowledged = acked.has(b.problem.digest);
  return { entries, count, bad };
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
