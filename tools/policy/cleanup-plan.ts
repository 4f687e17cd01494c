import { isFinalPhase, isResumablePhase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';
import { ACTIVE_PHASES, type Blocker } from './tree-guard.js';

export interface CleanupRules {
  /** Sessions whose last activity is older than this are purged (final) or checked (others). */
  cutoffMs: number;
  /** Updated more recently than this: running, whatever the phase. */
  runningMs: number;
  resumeWindowMs: number;
  /** An active phase not updated for this long is stuck: finalized `abandoned`. */
  stuckMs: number;
  /** A `last_updated` further than this in the future is not trusted as an age (as in the resume rules). */
  clockSkewMs: number;
}

export type Verdict =
  | { kind: 'purge'; reason: string }
  | { kind: 'abandon'; reason: string }
  | { kind: 'running'; reason: string }
  | { kind: 'future'; reason: string }
  | { kind: 'recent'; reason: string };

const hours = (ms: number) => `${Math.round((ms / 3_600_000) * 10) / 10} h`;

/** The cleanup rule for one session on its own (subtrees are judged by planCleanup). */
export function judgeSession(record: SessionRecord, now: number, rules: CleanupRules): Verdict {
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
    const reason = `running (${record.phase}, updated ${Math.round(age / 1000)} s ago)`;
    return age > rules.cutoffMs ? { kind: 'running', reason } : { kind: 'recent', reason };
  }
  if (isResumablePhase(record.phase)) {
    if (age > Math.max(rules.cutoffMs, rules.resumeWindowMs)) {
      return { kind: 'purge', reason: `paused in ${record.phase} ${hours(age)} ago; its resume window has passed` };
    }
    return { kind: 'recent', reason: `paused in ${record.phase} ${hours(age)} ago` };
  }
  if (ACTIVE_PHASES.includes(record.phase) && age > rules.stuckMs) {
    return { kind: 'abandon', reason: `stuck in ${record.phase} for ${hours(age)} (limit ${hours(rules.stuckMs)})` };
  }
  if (age > rules.cutoffMs) {
    return { kind: 'running', reason: `running (${record.phase}, updated ${hours(age)} ago; abandoned after ${hours(rules.stuckMs)})` };
  }
  return { kind: 'recent', reason: `${record.phase} ${hours(age)} ago` };
}

export interface PurgeRoot {
  id: string;
  reason: string;
  /** The subtree, root first (pre-order), and the depth of each below the root. */
  ids: string[];
  depths: number[];
  orphan: boolean;
}

export interface CleanupPlan {
  purge: PurgeRoot[];
  abandon: Blocker[];
  skipped: Blocker[];
  orphans: { id: string; parent: string; action: string }[];
  kept: number;
}

/**
 * Which subtrees go: a subtree is purged only when every session in it is purgeable on its own, so a
 * running or recent descendant protects its ancestors. Orphans (parent absent) are judged as roots.
 * `unreadable` are ids present in the store whose record could not be read.
 */
export function planCleanup(records: SessionRecord[], unreadable: string[], now: number, rules: CleanupRules): CleanupPlan {
  const byId = new Map(records.map((r) => [r.agent_id, r]));
  const present = new Set([...byId.keys(), ...unreadable]);
  const kids = new Map<string, string[]>();
  for (const r of records) {
    const parent = r.parent_session_id;
    if (parent && byId.has(parent)) kids.get(parent)?.push(r.agent_id) ?? kids.set(parent, [r.agent_id]);
  }
  const verdicts = new Map(records.map((r) => [r.agent_id, judgeSession(r, now, rules)]));
  const blocker = new Map<string, string | null>();
  // Iterative post-order: the first descendant (or self) that keeps the subtree, or null.
  const blockerOf = (start: string): string | null => {
    const stack: [string, boolean][] = [[start, false]];
    const seen = new Set<string>();
    while (stack.length > 0) {
      const [id, done] = stack.pop() as [string, boolean];
      if (blocker.has(id)) continue;
      if (done) {
        const own = verdicts.get(id);
        const self = own?.kind === 'purge' ? null : `${id}: ${own?.reason}`;
        blocker.set(id, self ?? (kids.get(id) ?? []).map((k) => blocker.get(k) ?? null).find((b) => b !== null) ?? null);
      } else if (!seen.has(id)) {
        seen.add(id);
        stack.push([id, true], ...(kids.get(id) ?? []).map((k): [string, boolean] => [k, false]));
      }
    }
    return blocker.get(start) ?? null;
  };
  const plan: CleanupPlan = { purge: [], abandon: [], skipped: [], orphans: [], kept: 0 };
  for (const r of records) {
    const id = r.agent_id;
    const verdict = verdicts.get(id) as Verdict;
    const parent = r.parent_session_id;
    const orphan = parent !== null && !present.has(parent);
    const isRoot = parent === null || !byId.has(parent);
    const blockedBy = blockerOf(id);
    if (verdict.kind === 'abandon') plan.abandon.push({ id, reason: verdict.reason });
    else if (verdict.kind === 'running' || verdict.kind === 'future') plan.skipped.push({ id, reason: verdict.reason });
    else if (verdict.kind === 'purge' && blockedBy !== null) plan.skipped.push({ id, reason: `kept for its descendant ${blockedBy}` });
    else if (verdict.kind === 'recent') plan.kept++;
    const purgeHere = blockedBy === null && (isRoot || blockerOf(parent as string) !== null);
    if (purgeHere) plan.purge.push({ id, reason: orphan ? `orphan (parent ${parent} is gone); ${verdict.reason}` : verdict.reason, ...subtree(id, kids), orphan });
    if (orphan) plan.orphans.push({ id, parent: parent as string, action: purgeHere ? 'purged with its subtree' : `kept: ${blockedBy}` });
  }
  return plan;
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
    stack.push(...(kids.get(id) ?? []).slice().reverse().map((k): [string, number] => [k, depth + 1]));
  }
  return { ids, depths };
}
