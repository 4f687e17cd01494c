import { capturePatch, hasUnsavedWork, inspectWork, type WorkState } from '../git/work-tree.js';
import type { TreeNode } from '../policy/tree-guard.js';
import type { SessionRecord } from '../record.js';

/**
 * The work trees a session owns: the worktrees Claude Code made for its agents (`claude.worktrees`,
 * recorded by the hooks under `isolation: "worktree"`) and `metadata.worktree` (set by whoever created
 * the session for an agent given a checkout of its own). Delete guards their unsaved work.
 */
function ownedDirs(record: SessionRecord): string[] {
  const worktrees = record.claude?.worktrees;
  const listed = Array.isArray(worktrees) ? worktrees : [];
  return absolute([...listed, record.metadata.worktree]);
}

/**
 * Where a session's agent worked without owning it: `metadata.cwd`, `metadata.working_directory`,
 * `claude.cwd` (the delegation's cwd, the project checkout every agent and the person share).
 */
function sharedDirs(record: SessionRecord): string[] {
  return absolute([record.metadata.cwd, record.metadata.working_directory, record.claude?.cwd]);
}

function absolute(values: unknown[]): string[] {
  const dirs = values.filter((v): v is string => typeof v === 'string' && v.startsWith('/'));
  return [...new Set(dirs)];
}

export interface UnsavedWork {
  dir: string;
  sessions: string[];
  state: WorkState;
  summary: string;
}

/** Work trees owned by the subtree's sessions that hold work found nowhere else. */
export async function findUnsavedWork(nodes: TreeNode[]): Promise<UnsavedWork[]> {
  const found = await inspectDirs(nodes, ownedDirs);
  // A worktree Claude Code removed can leave a plain folder inside the checkout: git would answer for the checkout.
  return found.filter((w) => hasUnsavedWork(w.state) && (w.state.isRoot || !worktreeOf(nodes, w.dir)));
}

function worktreeOf(nodes: TreeNode[], dir: string): boolean {
  return nodes.some((n) => {
    const listed = n.record?.claude?.worktrees;
    return Array.isArray(listed) && listed.includes(dir);
  });
}

/**
 * The shared checkouts the subtree's sessions worked in (owned ones left out), for information:
 * their changes belong to the project, not to a session, and never block a delete.
 */
export async function findCheckouts(nodes: TreeNode[]): Promise<UnsavedWork[]> {
  const owned = new Set(nodes.flatMap((n) => (n.record ? ownedDirs(n.record) : [])));
  const found = await inspectDirs(nodes, (r) => sharedDirs(r).filter((d) => !owned.has(d)));
  return found;
}

async function inspectDirs(nodes: TreeNode[], dirsOf: (r: SessionRecord) => string[]): Promise<UnsavedWork[]> {
  const byDir = new Map<string, string[]>();
  for (const node of nodes) {
    for (const dir of node.record ? dirsOf(node.record) : [])
      byDir.get(dir)?.push(node.id) ?? byDir.set(dir, [node.id]);
  }
  const found: UnsavedWork[] = [];
  for (const [dir, sessions] of byDir) {
    const state = await inspectWork(dir);
    if (!state) continue;
    const summary =
      `${state.changed.length} changed file(s), ${state.untracked.length} untracked file(s), ` +
      `${state.unpushed} unpushed commit(s)`;
    found.push({ dir, sessions, state, summary });
  }
  return found;
}

export { capturePatch };
