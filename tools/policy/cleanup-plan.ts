import { isFinalPhase, isResumablePhase } from '../phases.js';
import { compareCreation, type SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';
import { resumeWindowMs, type ResumeRules } from './resume.js';
import { ACTIVE_PHASES, type Blocker } from './tree-guard.js';

/**
 * What cleanup's rules read of a record: a scan of 100,000 sessions keeps these fields of each, not
 * whole records (their histories and messages would be hundreds of MB).
 */
export type CleanupFacts = Pick<
  SessionRecord,
  'agent_id' | 'parent_session_id' | 'phase' | 'finalized_at' | 'last_updated' | 'created_at'
>;

/** The facts of `record`, copied (nothing else of it is kept alive). */
export function cleanupFacts(record: SessionRecord): CleanupFacts {
  const { agent_id, parent_session_id, phase, finalized_at, last_updated, created_at } = record;
  return { agent_id, parent_session_id, phase, finalized_at, last_updated, created_at };
}

export interface CleanupRules {
  /** Sessions whose last activity is older than this are purged (final) or checked (others). */
  cutoffMs: number;
  /** Updated more recently than this: running, whatever the phase. */
  runningMs: number;
  resumeWindowMs: number;
  phaseWindowsMs?: ResumeRules['phaseWindowsMs'];
  /** An active phase not updated for this long is stuck: finalized `abandoned`. */
  stuckMs: number;
  /** A `last_updated` further than this in the future is not trusted as an age (as in the resume rules). */
  clockSkewMs: number;
}

type Verdict =
  | { kind: 'purge'; reason: string }
  | { kind: 'abandon'; reason: string }
  | { kind: 'running'; reason: string }
  | { kind: 'future'; reason: string }
  | { kind: 'recent'; reason: string }
  | { kind: 'cycle'; reason: string }
  | { kind: 'unreadable'; reason: string };

const hours = (ms: number) => `${Math.round((ms / 3_600_000) * 10) / 10} h`;

/** The cleanup rule for one session on its own (subtrees are judged by planCleanup). */
export function judgeSession(record: CleanupFacts, now: number, rules: CleanupRules): Verdict {
  const age = now - (parseTimestamp(record.last_updated) ?? 0);
  // A clock set wrong says nothing about age: reported every run, never purged on that basis.
  if (age < -rules.clockSkewMs) {
    return { kind: 'future', reason: `last_updated is ${hours(-age)} in the future (a wrong clock?); not judged` };
  }
  if (isFinalPhase(record.phase) || record.finalized_at) {
    if (age > rules.cutoffMs) return { kind: 'purge', reason: `${record.phase}, last activity ${hours(age)} ago` };
    return { kind: 'recent', reason: `${record.phase} ${hours(age)} ago` };
  }
  if (age < rules.runningMs) {
    // A session paused just now is as young as a running one, but it is waiting, not running.
    const state = isResumablePhase(record.phase) ? 'paused' : 'running';
    const reason = `${state} (${record.phase}, updated ${Math.round(age / 1000)} s ago)`;
    return age > rules.cutoffMs ? { kind: 'running', reason } : { kind: 'recent', reason };
  }
  if (isResumablePhase(record.phase)) {
    if (age > Math.max(rules.cutoffMs, resumeWindowMs(rules, record.phase))) {
      return { kind: 'purge', reason: `paused in ${record.phase} ${hours(age)} ago; its resume window has passed` };
    }
    return { kind: 'recent', reason: `paused in ${record.phase} ${hours(age)} ago` };
  }
  if (ACTIVE_PHASES.includes(record.phase) && age > rules.stuckMs) {
    return { kind: 'abandon', reason: `stuck in ${record.phase} for ${hours(age)} (limit ${hours(rules.stuckMs)})` };
  }
  if (age > rules.cutoffMs) {
    return {
      kind: 'running',
      reason: `running (${record.phase}, updated ${hours(age)} ago; abandoned after ${hours(rules.stuckMs)})`,
    };
  }
  return { kind: 'recent', reason: `${record.phase} ${hours(age)} ago` };
}

interface PurgeRoot {
  id: string;
  reason: string;
  /** The subtree, root first (pre-order), and the depth of each below the root. */
  ids: string[];
  depths: number[];
  orphan: boolean;
}

/** A session directory whose record could not be read. */
interface UnreadableSession {
  id: string;
  /** Its parent, when the record says (one of a newer schema); such a session keeps its ancestors. */
  parent?: string | null;
  /** Why it stays in the store (unset: cleanup moves it aside before purging, so it keeps nothing). */
  stays?: string;
}

interface CleanupPlan {
  purge: PurgeRoot[];
  abandon: Blocker[];
  skipped: Blocker[];
  orphans: { id: string; parent: string; action: string }[];
  kept: number;
}

/**
 * Which subtrees go: a subtree is purged only when every session in it is purgeable on its own, so a
 * running or recent descendant protects its ancestors. Orphans (parent absent) are judged as roots.
 * Children are taken oldest first, the order in which a real purge walks and reports them.
 */
export function planCleanup(
  records: CleanupFacts[],
  unreadable: UnreadableSession[],
  now: number,
  rules: CleanupRules,
): CleanupPlan {
  const byId = new Map<string, CleanupFacts>();
  for (const r of records) byId.set(r.agent_id, r);
  const present = new Set([...byId.keys(), ...unreadable.map((u) => u.id)]);
  const kids = new Map<string, string[]>();
  const verdicts = new Map<string, Verdict>();
  const link = (parent: string, child: string) => kids.get(parent)?.push(child) ?? kids.set(parent, [child]);
  for (const r of records) {
    const parent = r.parent_session_id;
    if (parent && byId.has(parent)) link(parent, r.agent_id);
    verdicts.set(r.agent_id, judgeSession(r, now, rules));
  }
  const older = (a: string, b: string) => {
    const [ra, rb] = [byId.get(a) as CleanupFacts, byId.get(b) as CleanupFacts];
    return compareCreation(ra.created_at, a, rb.created_at, b);
  };
  for (const list of kids.values()) if (list.length > 1) list.sort(older);
  // An unreadable record that stays (a newer schema) is a descendant no purge may take.
  for (const u of unreadable) {
    if (u.stays === undefined || !u.parent || !byId.has(u.parent)) continue;
    link(u.parent, u.id);
    verdicts.set(u.id, { kind: 'unreadable', reason: u.stays });
  }
  // A session on a parent-link cycle belongs to no tree (doctor reports it as an error): kept, with
  // whatever hangs off the cycle judged as usual. This also keeps every planned subtree off a cycle.
  const cyclic = onCycles(records, byId);
  for (const id of cyclic)
    verdicts.set(id, {
      kind: 'cycle',
      reason: 'its parent links form a cycle (agent-session doctor); left for a person to fix',
    });
  const blocker = blockers(records, kids, verdicts);
  const plan: CleanupPlan = { purge: [], abandon: [], skipped: [], orphans: [], kept: 0 };
  for (const r of records) {
    const id = r.agent_id;
    const verdict = verdicts.get(id) as Verdict;
    const parent = r.parent_session_id;
    const orphan = parent !== null && !present.has(parent);
    const isRoot = parent === null || !byId.has(parent);
    const blockedBy = blocker.get(id) ?? null;
    if (verdict.kind === 'abandon') plan.abandon.push({ id, reason: verdict.reason });
    else if (verdict.kind === 'running' || verdict.kind === 'future' || verdict.kind === 'cycle')
      plan.skipped.push({ id, reason: verdict.reason });
    else if (verdict.kind === 'purge' && blockedBy !== null)
      plan.skipped.push({ id, reason: `kept for its descendant ${blockedBy}` });
    else if (verdict.kind === 'recent') plan.kept++;
    const purgeHere = blockedBy === null && (isRoot || (blocker.get(parent as string) ?? null) !== null);
    if (purgeHere)
      plan.purge.push({
        id,
        reason: orphan ? `orphan (parent ${parent} is gone); ${verdict.reason}` : verdict.reason,
        ...subtree(id, kids),
        orphan,
      });
    if (orphan)
      plan.orphans.push({
        id,
        parent: parent as string,
        action: purgeHere ? 'purged with its subtree' : `kept: ${blockedBy}`,
      });
  }
  return plan;
}

/** The ids on parent-link cycles: parents followed up from each session until a root or a session already walked. */
function onCycles(records: CleanupFacts[], byId: Map<string, CleanupFacts>): Set<string> {
  const cyclic = new Set<string>();
  // The walk that reached each session: met again in the same walk, it closes a cycle.
  const walkOf = new Map<string, number>();
  records.forEach((r, walk) => {
    let id: string | null = r.agent_id;
    while (id !== null && byId.has(id) && !walkOf.has(id)) {
      walkOf.set(id, walk);
      id = byId.get(id)?.parent_session_id ?? null;
    }
    if (id === null || walkOf.get(id) !== walk) return;
    // Round the cycle once from where this walk closed it.
    const start = id;
    do {
      cyclic.add(id);
      id = byId.get(id)?.parent_session_id as string;
    } while (id !== start);
  });
  return cyclic;
}

/**
 * For every session, the first one of its subtree (itself, then its children's blockers in order)
 * that keeps the subtree, or null. One iterative post-order pass. Sessions on cycles keep themselves
 * (see onCycles), so the child still on the stack that closes a cycle never decides anything.
 */
function blockers(
  records: CleanupFacts[],
  kids: Map<string, string[]>,
  verdicts: Map<string, Verdict>,
): Map<string, string | null> {
  const blocker = new Map<string, string | null>();
  const entered = new Set<string>();
  const stack: string[] = [];
  for (const r of records) {
    if (entered.has(r.agent_id)) continue;
    entered.add(r.agent_id);
    stack.push(r.agent_id);
    while (stack.length > 0) {
      const id = stack[stack.length - 1] as string;
      const children = kids.get(id);
      const before = stack.length;
      // Children first; pushed in reverse so that they are done in order.
      for (let i = (children?.length ?? 0) - 1; i >= 0; i--) {
        const k = (children as string[])[i] as string;
        if (!entered.has(k)) {
          entered.add(k);
          stack.push(k);
        }
      }
      if (stack.length > before) continue;
      stack.pop();
      const own = verdicts.get(id);
      let found: string | null = own?.kind === 'purge' ? null : `${id}: ${own?.reason}`;
      for (const k of children ?? []) {
        if (found !== null) break;
        found = blocker.get(k) ?? null;
      }
      blocker.set(id, found);
    }
  }
  return blocker;
}

function subtree(root: string, kids: Map<string, string[]>): { ids: string[]; depths: number[] } {
  const ids: string[] = [];
  const depths: number[] = [];
  const stack: [string, number][] = [[root, 0]];
  const seen = new Set<string>();
  while (stack.length > 0) {
    const [id, depth] = stack.pop() as [string, number];
    if (seen.has(id)) continue;
    seen.add(id);
    ids.push(id);
    depths.push(depth);
    stack.push(
      ...(kids.get(id) ?? [])
        .slice()
        .reverse()
        .map((k): [string, number] => [k, depth + 1]),
    );
  }
  return { ids, depths };
}

/**
 * A reason without its figures (ages, ids), so that reasons can be counted: `completed, last activity
 * 720 h ago` is `completed, last activity over the cutoff`.
 */
export function reasonKind(reason: string): string {
  return reason
    .replace(/last activity [\d.]+ h ago/, 'last activity over the cutoff')
    .replace(/updated [\d.]+ s ago/, 'updated within the running window')
    .replace(/updated [\d.]+ h ago; abandoned after [\d.]+ h/, 'under the stuck limit')
    .replace(/for [\d.]+ h \(limit [\d.]+ h\)/, 'past the stuck limit')
    .replace(/ [\d.]+ h ago/g, '')
    .replace(/\(parent \S+ is gone\)/, '(parent gone)')
    .replace(/ [\d.]+ (h|s)\b/g, '')
    .replace(/for its descendant \S+: /, 'for a descendant: ')
    .replace(/descendant \S+/, 'descendant')
    .replace(/^(changed since the scan:) .*/, '$1 ...');
}
