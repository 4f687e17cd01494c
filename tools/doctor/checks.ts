import { isSessionError } from '../errors.js';
import type { SessionRecord } from '../record.js';
import type { Sessions } from '../sessions.js';
import { ChildrenIndex } from '../store/children-index.js';
import type { StoreProblem } from '../store/store.js';
import { quarantineSession, findStrays, removeStray } from '../store/sweep.js';
import { withSessionLocks } from '../store/subtree-locks.js';

export type CheckName = 'record' | 'parent' | 'index' | 'temp' | 'lock' | 'removing' | 'audit' | 'trash' | 'import';

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
  records: SessionRecord[];
  problems: StoreProblem[];
  dirs: string[];
}

export function checkRecords(sessions: Sessions, snap: StoreSnapshot): Found[] {
  const found: Found[] = snap.problems.map((p) => {
    const base = { check: 'record' as const, severity: 'error' as const, subject: p.id, message: p.message };
    if (p.code !== 'ECORRUPT') return { ...base, repair: null };
    return { ...base, repair: 'move it to the quarantine', fix: () => quarantine(sessions, p.id) };
  });
  const known = new Set([...snap.records.map((r) => r.agent_id), ...snap.problems.map((p) => p.id)]);
  for (const id of snap.dirs.filter((d) => !known.has(d))) {
    found.push({ check: 'record', severity: 'warning', subject: id, message: 'a session directory without state.json (a create in progress, or one that crashed)', repair: null });
  }
  return found;
}

async function quarantine(sessions: Sessions, id: string): Promise<string> {
  const where = await withSessionLocks(sessions.store.dir, [id], sessions.settings.lockTimeoutMs, async (check) => {
    // Still corrupt under the lock? A writer may have replaced it since the scan.
    const still = await sessions.store.read(id).then(() => false, (err) => isSessionError(err, 'ECORRUPT'));
    if (!still) return null;
    check();
    return quarantineSession(sessions.store.dir, id, sessions.now());
  });
  if (where === null) return `left ${id}: it is no longer corrupt`;
  await sessions.audit('quarantine', [id], { reason: 'corrupt record', path: where, by: 'doctor' });
  return `quarantined ${id} in ${where}`;
}

/** Orphans (a warning: cleanup purges them) and parent-link cycles (an error: no tree can hold them). */
export function checkParents(snap: StoreSnapshot): Found[] {
  const parentOf = new Map(snap.records.map((r) => [r.agent_id, r.parent_session_id]));
  const present = new Set([...snap.dirs]);
  const found: Found[] = [];
  for (const r of snap.records) {
    const parent = r.parent_session_id;
    if (parent !== null && !present.has(parent)) {
      found.push({ check: 'parent', severity: 'warning', subject: r.agent_id, message: `orphan: its parent ${parent} does not exist`, repair: null });
    }
    const seen = new Set([r.agent_id]);
    for (let p = parent; p !== null && p !== undefined; p = parentOf.get(p) ?? null) {
      if (!seen.has(p)) {
        seen.add(p);
        continue;
      }
      if (p === r.agent_id) found.push({ check: 'parent', severity: 'error', subject: r.agent_id, message: 'its parent links form a cycle', repair: null });
      break;
    }
  }
  return found;
}

/** The children index (tools/store/children-index.ts) against the records, which are the truth. */
export async function checkIndex(sessions: Sessions, snap: StoreSnapshot): Promise<Found[]> {
  const index = new ChildrenIndex(sessions.store.dir);
  const found: Found[] = [];
  const links = new Set((await index.allLinks()).map(([p, c]) => `${p}/${c}`));
  const indexed = new Set(index.present() ? await index.indexedIds() : []);
  const byId = new Map(snap.records.map((r) => [r.agent_id, r]));
  for (const r of snap.records) {
    const id = r.agent_id;
    const parent = r.parent_session_id;
    const add = async () => {
      await index.add(parent, id);
      return `indexed ${id}`;
    };
    if (!indexed.has(id)) {
      found.push({ check: 'index', severity: 'warning', subject: id, message: 'not in the children index (found by a slower full read)', repair: 'index it', fix: add });
    } else if (parent !== null && !links.has(`${parent}/${id}`)) {
      found.push({ check: 'index', severity: 'error', subject: id, message: `the index does not list it under its parent ${parent}`, repair: 'index it', fix: add });
    }
  }
  const dirs = new Set(snap.dirs);
  for (const link of links) {
    const [parent, child] = link.split('/') as [string, string];
    const record = byId.get(child);
    if (record?.parent_session_id === parent) continue;
    if (dirs.has(child)) {
      // Readers check every marker against the record, so this one is ignored: harmless.
      found.push({ check: 'index', severity: 'warning', subject: child, message: `a stale index marker under ${parent} (its record names another parent)`, repair: null });
      continue;
    }
    found.push({
      check: 'index',
      severity: 'warning',
      subject: child,
      message: `a stale index marker under ${parent} (no such session)`,
      repair: 'remove the marker',
      fix: async () => {
        // Removing markers is always safe: a session created meanwhile is only unindexed again.
        await index.remove(parent, child);
        return `removed the stale index marker ${parent}/${child}`;
      },
    });
  }
  return found;
}

export async function checkStrays(sessions: Sessions, snap: StoreSnapshot): Promise<Found[]> {
  const now = Date.now();
  const strays = await findStrays(sessions.store.dir, snap.dirs, now, STRAY_AGE_MS);
  const what = { temp: 'a temp file left by an interrupted write', lock: 'a stale lock', removing: 'a leftover of a removal' };
  return strays.map((stray) => ({
    check: stray.kind,
    severity: 'error',
    subject: stray.path,
    message: `${what[stray.kind]} (${Math.round(stray.age_ms / 1000)} s old)`,
    repair: 'remove it',
    fix: async () => ((await removeStray(stray, Date.now(), STRAY_AGE_MS)) ? `removed ${stray.path}` : `left ${stray.path}: it is in use again`),
  }));
}
