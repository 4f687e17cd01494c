import type { SessionContext } from '../session-context.js';
import { join } from 'node:path';
import { TEMP_DIR, type StoreProblem } from '../store/store.js';
import {
  findLegacyTemps,
  findStrays,
  isOldEmptySessionDir,
  removeEmptySessionDir,
  removeStray,
  tempDirProblem,
  type StrayFile,
} from '../store/strays.js';
import { withSessionLocks } from '../store/subtree-locks.js';
import { quarantineIfCorrupt } from '../trees/cleanup-steps.js';
import { checkIndex as checkIndexHealth, rebuildIndex, type ParentLink } from '../trees/index-health.js';

export type CheckName =
  | 'record'
  | 'parent'
  | 'index'
  | 'temp'
  | 'lock'
  | 'removing'
  | 'audit'
  | 'trash'
  | 'import'
  | 'store'
  | 'config'
  | 'hook-log';

export interface DoctorFinding {
  check: CheckName;
  /** `error`: the store is damaged; `warning`: worth knowing, nothing is wrong with the data. */
  severity: 'error' | 'warning';
  /** A session id, a path, or `file:line`. */
  subject: string;
  message: string;
  /** What `--repair` does about it; null when it cannot be repaired without losing data. */
  repair: string | null;
}

/** A finding and, when repairable, the step that repairs it (returns what it did). */
export interface Found extends DoctorFinding {
  fix?: () => Promise<string>;
}

/** Temp files, locks and leftovers younger than this may belong to a live process. */
export const STRAY_AGE_MS = 60_000;

export interface StoreSnapshot {
  /** What the checks need of each readable record. */
  records: ParentLink[];
  problems: StoreProblem[];
  dirs: string[];
}

export function checkRecords(sessions: SessionContext, snap: StoreSnapshot): Found[] {
  const found: Found[] = snap.problems.map((p) => {
    const base = { check: 'record' as const, severity: 'error' as const, subject: p.id, message: p.message };
    if (p.code !== 'ECORRUPT') return { ...base, repair: null };
    return { ...base, repair: 'move it to the quarantine', fix: () => quarantine(sessions, p.id) };
  });
  const known = new Set([...snap.records.map((r) => r.agent_id), ...snap.problems.map((p) => p.id)]);
  const now = Date.now();
  for (const id of snap.dirs.filter((d) => !known.has(d))) {
    const message = 'a session directory without state.json (a create in progress, or one that crashed)';
    if (!isOldEmptySessionDir(sessions.store.dir, id, now, STRAY_AGE_MS)) {
      found.push({ check: 'record', severity: 'warning', subject: id, message, repair: null });
      continue;
    }
    found.push({
      check: 'record',
      severity: 'warning',
      subject: id,
      message: `${message}, empty`,
      repair: 'remove the empty directory',
      fix: () => removeEmpty(sessions, id),
    });
  }
  return found;
}

async function removeEmpty(sessions: SessionContext, id: string): Promise<string> {
  // Under the id's lock: a create holds it from its mkdir to its rename.
  const gone = await withSessionLocks(sessions.store.dir, [id], sessions.settings.lockTimeoutMs, () =>
    removeEmptySessionDir(sessions.store.dir, id),
  );
  return gone ? `removed the empty directory ${id}` : `left ${id}: it is no longer empty`;
}

async function quarantine(sessions: SessionContext, id: string): Promise<string> {
  const where = await quarantineIfCorrupt(sessions, id, { reason: 'corrupt record', by: 'doctor' });
  return where === null ? `left ${id}: it is no longer corrupt` : `quarantined ${id} in ${where}`;
}

/**
 * Orphans (a warning: cleanup purges them), live sessions whose parent is in the trash (an error: a
 * tree split by a delete or restore) and parent-link cycles (an error: no tree can hold them).
 */
export function checkParents(snap: StoreSnapshot, inTrash: Map<string, string>): Found[] {
  const parentOf = new Map(snap.records.map((r) => [r.agent_id, r.parent_session_id]));
  const present = new Set([...snap.dirs]);
  const found: Found[] = [];
  for (const r of snap.records) {
    const parent = r.parent_session_id;
    const entry = parent === null ? undefined : inTrash.get(parent);
    if (parent !== null && !present.has(parent) && entry !== undefined) {
      const fix = `restore ${parent}, or delete ${r.agent_id} too`;
      const message = `its parent ${parent} is in the trash entry ${entry}: ${fix}`;
      found.push({ check: 'parent', severity: 'error', subject: r.agent_id, message, repair: null });
    } else if (parent !== null && !present.has(parent)) {
      found.push({
        check: 'parent',
        severity: 'warning',
        subject: r.agent_id,
        message: `orphan: its parent ${parent} does not exist`,
        repair: null,
      });
    }
    const seen = new Set([r.agent_id]);
    for (let p = parent; p !== null && p !== undefined; p = parentOf.get(p) ?? null) {
      if (!seen.has(p)) {
        seen.add(p);
        continue;
      }
      if (p === r.agent_id)
        found.push({
          check: 'parent',
          severity: 'error',
          subject: r.agent_id,
          message: 'its parent links form a cycle',
          repair: null,
        });
      break;
    }
  }
  return found;
}

/** The children index against the records, which are the truth (trees/index-health.ts); one rebuild repairs all. */
export async function checkIndex(sessions: SessionContext, snap: StoreSnapshot): Promise<Found[]> {
  const { missing, stale, unindexed } = await checkIndexHealth(sessions, { records: snap.records, ids: snap.dirs });
  const repair = 'rebuild the index from the records';
  const found: Found[] = [
    ...missing.map(({ parent, child }) => ({
      check: 'index' as const,
      severity: 'error' as const,
      subject: child,
      message: `the index does not list it under its parent ${parent}`,
      repair,
    })),
    ...stale.map(({ parent, child }) => ({
      check: 'index' as const,
      severity: 'warning' as const,
      subject: child,
      message: `a stale index marker under ${parent} (readers ignore it)`,
      repair,
    })),
    ...unindexed.map((id) => ({
      check: 'index' as const,
      severity: 'warning' as const,
      subject: id,
      message: 'not in the children index yet (found by a slower full read)',
      repair,
    })),
  ];
  if (found.length > 0) {
    found[0]!.fix = async () => `rebuilt the children index (${(await rebuildIndex(sessions)).indexed} sessions)`;
  }
  return found;
}

/** `.tmp/` unusable, strays as cleanup finds them, and temp files of the older layout (inside session directories). */
export function checkStrays(
  sessions: SessionContext,
  snap: StoreSnapshot,
  onListed?: (listed: number) => void,
): Found[] {
  const now = Date.now();
  const problem = tempDirProblem(sessions.store.dir);
  const unusable: Found[] =
    problem === undefined
      ? []
      : [
          {
            check: 'temp',
            severity: 'error',
            subject: join(sessions.store.dir, TEMP_DIR),
            message: `the store's temp directory ${problem}`,
            repair: null,
          },
        ];
  const strays = [
    ...findStrays(sessions.store.dir, now, STRAY_AGE_MS),
    ...findLegacyTemps(sessions.store.dir, snap.dirs, now, STRAY_AGE_MS, onListed),
  ];
  const what = (stray: StrayFile) => {
    if (stray.kind === 'lock') return 'a stale lock';
    if (stray.kind === 'removing') return 'a leftover of a removal';
    const session = stray.session === undefined ? '' : ` of session ${stray.session}`;
    return `a temp file left by an interrupted write${session}`;
  };
  return [
    ...unusable,
    ...strays.map((stray): Found => ({
      check: stray.kind,
      severity: 'error',
      subject: stray.path,
      message: `${what(stray)} (${Math.round(stray.age_ms / 1000)} s old)`,
      repair: 'remove it',
      fix: async () =>
        (await removeStray(stray, Date.now(), STRAY_AGE_MS))
          ? `removed ${stray.path}`
          : `left ${stray.path}: it is in use again`,
    })),
  ];
}
