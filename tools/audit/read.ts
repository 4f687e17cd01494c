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
import { checkOptions, type OptionKeys } from '../options.js';

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
const READ_KEYS: OptionKeys<ReadAuditOptions> = { session: true, since: true, action: true };

export async function readAudit(sessions: SessionContext, options: ReadAuditOptions = {}): Promise<AuditReadResult> {
  checkOptions(options, READ_KEYS, 'readAudit');
  const stream = streamAudit(sessions, options);
  const entries = [...stream.entries];
  return { entries, ...stream.tally() };
}

/** readAudit's result as the trail is read: the entries one by one, the bad lines' tally once they are all read. */
export interface AuditStream {
  entries: Iterable<AuditEntry>;
  /** After `entries` has been read through (worked out once, then the same answer). */
  tally(): Omit<AuditReadResult, 'entries'>;
}

/**
 * readAudit without holding the trail: `audit --json` writes each entry as it is read (a 30 MiB trail
 * is 100,000 entries). An action filter naming none of agent-session's actions reads the trail once
 * more first, to tell an action of the caller's own from a typo.
 */
export function streamAudit(sessions: SessionContext, options: ReadAuditOptions = {}): AuditStream {
  const filter = auditFilter(options, sessions.now());
  checkAction(filter.action, () => scanAudit(sessions).entries);
  const bad: BadLine[] = [];
  const repairs: AuditEntry[] = [];
  function* entries(): Generator<AuditEntry> {
    for (const entry of trailEntries(sessions, bad)) {
      if (entry.action === 'audit-repair') repairs.push(entry);
      if (matches(entry, filter)) yield entry;
    }
  }
  let tally: Omit<AuditReadResult, 'entries'> | undefined;
  return {
    entries: entries(),
    tally: () => {
      if (tally) return tally;
      acknowledge(bad, repairs);
      const problems = bad.filter((b) => !b.acknowledged).map((b) => b.problem);
      return (tally = { problems, acknowledged: bad.length - problems.length });
    },
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

/** A bad line with its full text; `acknowledged` when an `audit-repair` entry names its digest. */
interface BadLine {
  problem: AuditProblem;
  raw: string;
  acknowledged: boolean;
}

interface AuditScan {
  /** Every entry, oldest first; empty when the scan was asked only to count them. */
  entries: AuditEntry[];
  /** How many entries the trail holds. */
  count: number;
  bad: BadLine[];
}

/** The whole trail; with `keep` false its entries are counted, not kept (doctor's check of a 30 MiB trail). */
export function scanAudit(sessions: SessionContext, keep = true): AuditScan {
  const entries: AuditEntry[] = [];
  const repairs: AuditEntry[] = [];
  const bad: BadLine[] = [];
  let count = 0;
  for (const entry of trailEntries(sessions, bad)) {
    count++;
    if (keep) entries.push(entry);
    else if (entry.action === 'audit-repair') repairs.push(entry);
  }
  acknowledge(bad, keep ? entries : repairs);
  return { entries, count, bad };
}

/** Every entry of the trail, oldest first; each bad line goes to `bad` (not yet acknowledged) as it is met. */
function* trailEntries(sessions: SessionContext, bad: BadLine[]): Generator<AuditEntry> {
  for (const { file, text } of sessions.auditLog.readAll()) {
    const lines = text.split('\n');
    const complete = text.endsWith('\n') || text === '';
    for (const [index, line] of lines.entries()) {
      if (line === '') continue;
      const parsed = parseLine(line);
      if ('entry' in parsed) {
        yield parsed.entry;
        continue;
      }
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
      if (recovered) yield recovered;
    }
  }
}

/** `doctor --repair` records the digests of the bad lines it quarantined in an `audit-repair` entry. */
function acknowledge(bad: BadLine[], entries: AuditEntry[]): void {
  const digests = new Set<string>();
  for (const entry of entries) {
    if (entry.action !== 'audit-repair' || !Array.isArray(entry.details.digests)) continue;
    for (const d of entry.details.digests) if (typeof d === 'string') digests.add(d);
  }
  for (const b of bad) b.acknowledged = digests.has(b.problem.digest);
}
