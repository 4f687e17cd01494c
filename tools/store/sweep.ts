/**
 * What cleanup sweeps besides sessions, and the quarantine. On disk, inside the store:
 *   <id>/state.json.<pid>.<n>.<hex>.tmp   a write interrupted by a crash (atomic.ts names them)
 *   .locks/<name>.lock[.takeover]         a lock directory (or a takeover's guard); stale when not refreshed for a while
 *   .removing/<name>                      something already being destroyed
 *   .quarantine/<id>-<UTC yyyymmdd-hhmmss>-<4 hex>/   a corrupt session directory, moved aside unchanged
 */
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { toSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { TEMP_SUFFIX } from './atomic.js';
import { withLock } from './lock.js';
import { REMOVING_DIR } from './trash.js';
import { randomHex } from '../random.js';

export const QUARANTINE_DIR = '.quarantine';

export interface StrayFile {
  path: string;
  kind: 'temp' | 'lock' | 'removing';
  age_ms: number;
}

/** Temp files in session directories, stale lock directories and leftovers of `.removing/`. */
export async function findStrays(storeDir: string, ids: string[], now: number, minAgeMs: number): Promise<StrayFile[]> {
  const found: StrayFile[] = [];
  const consider = (file: string, kind: StrayFile['kind']) => {
    const info = lstatIfAny(file);
    if (info && isOld(info.mtimeMs, now, minAgeMs, kind)) found.push({ path: file, kind, age_ms: Math.round(now - info.mtimeMs) });
  };
  // Synchronous on purpose: one directory per session, and one thread-pool round trip per readdir
  // made this most of a cleanup dry run's time.
  for (const id of ids) {
    for (const name of namesSync(path.join(storeDir, id))) {
      if (name.startsWith('state.json.') && name.endsWith(TEMP_SUFFIX)) consider(path.join(storeDir, id, name), 'temp');
    }
  }
  for (const name of namesSync(path.join(storeDir, '.locks'))) {
    // `<x>.lock.takeover` guards a takeover (lock.ts); one left by a process killed inside it is a stale lock too.
    if (LOCK_NAME.test(name)) consider(path.join(storeDir, '.locks', name), 'lock');
  }
  for (const name of namesSync(path.join(storeDir, REMOVING_DIR))) consider(path.join(storeDir, REMOVING_DIR, name), 'removing');
  return found;
}

const LOCK_NAME = /\.lock(\.takeover)*$/;

/** Older than `minAgeMs`; a lock also when dated that far in the future (a clock stepped back). */
function isOld(mtimeMs: number, now: number, minAgeMs: number, kind: StrayFile['kind']): boolean {
  return now - mtimeMs > minAgeMs || (kind === 'lock' && mtimeMs - now > minAgeMs);
}

function namesSync(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function lstatIfAny(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Removes a stray if it is still as old as when it was found (a lock refreshed since is left alone).
 * True when it is gone (also if something else removed it meanwhile), false when it is in use again.
 */
export async function removeStray(stray: StrayFile, now: number, minAgeMs: number): Promise<boolean> {
  const info = await lstat(stray.path).catch(() => undefined);
  if (!info) return true;
  if (!isOld(info.mtimeMs, now, minAgeMs, stray.kind)) return false;
  if (stray.kind !== 'lock') {
    await rm(stray.path, { recursive: true, force: true });
    return true;
  }
  // Through the lock library: it takes a stale lock over atomically and releases it; a live one stays.
  return withLock(stray.path, { timeoutMs: 100, what: 'a stale lock' }, async () => true).catch(() => false);
}

/** Moves a session directory into the quarantine unchanged; returns where. Call under the id's lock. */
export async function quarantineSession(storeDir: string, id: string, now: number): Promise<string> {
  assertValidId(id);
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const target = path.join(storeDir, QUARANTINE_DIR, `${id}-${stamp}-${randomHex(4)}`);
  try {
    await mkdir(path.dirname(target), { recursive: true });
    await rename(path.join(storeDir, id), target);
  } catch (err) {
    throw toSessionError(err, `quarantining session ${id}`);
  }
  return target;
}

