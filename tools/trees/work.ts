import { capturePatch, hasUnsavedWork, inspectWork, type WorkState } from '../git/work-tree.js';
import type { TreeNode } from '../policy/tree-guard.js';
import type { SessionRecord } from '../record.js';

/** Where a session's agent worked: `metadata.cwd`, else `metadata.working_directory`, else `claude.cwd`. */
function workDir(record: SessionRecord): string | null {
  for (const value of [record.metadata.cwd, record.metadata.working_directory, record.claude?.cwd]) {
    if (typeof value === 'string' && value.startsWith('/')) return value;
  }
  return null;
}

export interface UnsavedWork {
  dir: string;
  sessions: string[];
  state: WorkState;
  summary: string;
}

/** Work trees of the subtree that hold work found nowhere else: changes, untracked files, unpushed commits. */
export async function findUnsavedWork(nodes: TreeNode[]): Promise<UnsavedWork[]> {
  const byDir = new Map<string, string[]>();
  for (const node of nodes) {
    const dir = node.record ? workDir(node.record) : null;
    if (dir) byDir.get(dir)?.push(node.id) ?? byDir.set(dir, [node.id]);
  }
  const found: UnsavedWork[] = [];
  for (const [dir, sessions] of byDir) {
    const state = await inspectWork(dir);
    if (!state || !hasUnsavedWork(state)) continue;
    const summary =
      `${state.changed.length} changed file(s), ${state.untracked.length} untracked file(s), ` +
      `${state.unpushed} unpushed commit(s)`;
    found.push({ dir, sessions, state, summary });
  }
  return found;
}

export { capturePatch };
