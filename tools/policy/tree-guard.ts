import { isFinalPhase, type Phase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';

/** Phases in which an agent is working right now, whatever the age of the record. */
export const ACTIVE_PHASES: readonly Phase[] = ['initializing', 'executing', 'validating'];

export interface TreeNode {
  id: string;
  parent: string | null;
  depth: number;
  /** null when the record cannot be read (corrupt, newer format): it still moves with its subtree. */
  record: SessionRecord | null;
}

export interface Blocker {
  id: string;
  reason: string;
}

/** Why the session counts as running (see SESSION_README.md, "Session trees"), or null. */
export function runningReason(record: SessionRecord, now: number, runningMs: number): string | null {
  if (isFinalPhase(record.phase) || record.finalized_at) return null;
  if (ACTIVE_PHASES.includes(record.phase)) return `phase ${record.phase}`;
  const age = now - (parseTimestamp(record.last_updated) ?? 0);
  if (age < runningMs) return `phase ${record.phase}, updated ${Math.max(0, Math.round(age / 1000))} s ago`;
  return null;
}

interface DeletePlanInput {
  cascade: boolean;
  force: boolean;
  now: number;
  runningMs: number;
}

export interface DeletePlan {
  /** Leaves first: every child comes before its parent. */
  order: TreeNode[];
  blocked: Blocker[];
  /** Running sessions that --force-running (or --force) lets through. */
  forced: Blocker[];
  countsByDepth: Record<string, number>;
  warnings: string[];
}

/** What a delete of the subtree `nodes` (pre-order, root first) removes and what stops it. */
export function planDelete(nodes: TreeNode[], input: DeletePlanInput): DeletePlan {
  const blocked: Blocker[] = [];
  const forced: Blocker[] = [];
  const root = nodes[0];
  const descendants = nodes.length - 1;
  if (root && !input.cascade && descendants > 0) {
    blocked.push({ id: root.id, reason: `has ${descendants} descendant session(s); --no-cascade never orphans them` });
  }
  for (const node of nodes) {
    const why = node.record ? runningReason(node.record, input.now, input.runningMs) : null;
    if (why) (input.force ? forced : blocked).push({ id: node.id, reason: `running (${why})` });
  }
  const countsByDepth: Record<string, number> = {};
  for (const node of nodes) countsByDepth[node.depth] = (countsByDepth[node.depth] ?? 0) + 1;
  const warnings: string[] = [];
  if (descendants > 0) warnings.push(`${descendants} descendant session(s) were removed with their parent`);
  if (forced.length > 0)
    warnings.push(`${forced.length} running session(s) were removed because of --force or --force-running`);
  const unreadable = nodes.filter((n) => n.record === null).length;
  if (unreadable > 0) warnings.push(`${unreadable} unreadable session record(s) were moved with their subtree`);
  return { order: [...nodes].reverse(), blocked, forced, countsByDepth, warnings };
}
