/**
 * Strays (what cleanup removes besides sessions) and the quarantine. On disk, inside the store:
 *   .tmp/<id>.state.json.<pid>.<n>.<hex>.tmp   a record write interrupted by a crash (store.ts, atomic.ts)
 *   .locks/<name>.lock[.takeover]         a lock directory (or a takeover's guard); stale when not
 *                                         refreshed for a while
 *   .removing/<name>                      something already being destroyed
 *   .quarantine/<id>-<UTC yyyymmdd-hhmmss>-<4 hex>/   a corrupt session directory, moved aside unchanged
 * Stores of the older layout, without `.tmp/`, hold temps as `<id>/state.json.<pid>.<n>.<hex>.tmp`: finding
 * those takes a readdir per session, so only doctor looks for them (findLegacyTemps); cleanup does not.
 */
import { accessSync, constants, lstatSync, readdirSync, type Stats } from 'node:fs';
import { lstat, mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { toSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { TEMP_SUFFIX } from './atomic.js';
import { withLock } from './lock.js';
import { areaProblem, assertArea } from './regular-file.js';
import { STATE_FILE, TEMP_DIR } from './store.js';
import { REMOVING_DIR } from './trash.js';
import { randomHex } from '../random.js';

export const QUARANTINE_DIR = '.quarantine';

export interface StrayFile {
  path: string;
  kind: 'temp' | 'lock' | 'removing';
  age_ms: number;
  /** For a temp file: the session it was written for (from its name in `.tmp/`, or its directory). */
  session?: string;
}

// Synchronous on purpose: one thread-pool round trip per readdir or lstat made this most of a
// cleanup dry run's time.

/** Temp files in `.tmp/`, stale lock directories and leftovers of `.removing/`: one readdir each. */
export function findStrays(storeDir: string, now: number, minAgeMs: number): StrayFile[] {
  const found: (StrayFile | undefined)[] = [];
  const tmp = join(storeDir, TEMP_DIR);
  for (const name of namesSync(tmp)) {
    if (name.endsWith(TEMP_SUFFIX))
      found.push(strayIfOld(join(tmp, name), 'temp', now, minAgeMs, TEMP_NAME.exec(name)?.[1]));
  }
  for (const name of namesSync(join(storeDir, '.locks'))) {
    // `<x>.lock.takeover` guards a takeover (lock.ts); one left by a process killed inside it is a stale lock too.
    if (LOCK_NAME.test(name)) found.push(strayIfOld(join(storeDir, '.locks', name), 'lock', now, minAgeMs));
  }
  for (const name of namesSync(join(storeDir, REMOVING_DIR)))
    found.push(strayIfOld(join(storeDir, REMOVING_DIR, name), 'removing', now, minAgeMs));
  return found.filter((stray) => stray !== undefined);
}

/** Temp files of the older layout, inside session directories: one readdir per session. */
export function findLegacyTemps(
  storeDir: string,
  ids: string[],
  now: number,
  minAgeMs: number,
  onListed?: (listed: number) => void,
): StrayFile[] {
  const found: (StrayFile | undefined)[] = [];
  let listed = 0;
  for (const id of ids) {
    if (++listed % 256 === 0) onListed?.(listed);
    for (const name of namesSync(join(storeDir, id))) {
      if (name.startsWith(`${STATE_FILE}.`) && name.endsWith(TEMP_SUFFIX))
        found.push(strayIfOld(join(storeDir, id, name), 'temp', now, minAgeMs, id));
    }
  }
  return found.filter((stray) => stray !== undefined);
}

function strayIfOld(
  file: string,
  kind: StrayFile['kind'],
  now: number,
  minAgeMs: number,
  session?: string,
): StrayFile | undefined {
  const info = lstatIfAny(file);
  if (!info || !isOld(info.mtimeMs, now, minAgeMs, kind)) return undefined;
  return { path: file, kind, age_ms: Math.round(now - info.mtimeMs), ...(session === undefined ? {} : { session }) };
}

/** `<id>.state.json.<pid>.<n>.<hex>.tmp` (store.ts names them so); ids may contain dots. */
const TEMP_NAME = /^(.+)\.state\.json\.\d+\.\d+\.[0-9a-f]+\.tmp$/;
const LOCK_NAME = /\.lock(\.takeover)*$/;

/** Older than `minAgeMs`; a lock also when dated that far in the future (a clock stepped back). */
function isOld(mtimeMs: number, now: number, minAgeMs: number, kind: StrayFile['kind']): boolean {
  return now - mtimeMs > minAgeMs || (kind === 'lock' && mtimeMs - now > minAgeMs);
}

function namesSync(dir: string): string[] {
  // An area that is a symbolic link lists another directory: nothing there is ours to remove (doctor reports it).
  if (areaProblem(dir) !== undefined) return [];
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
  const target = join(storeDir, QUARANTINE_DIR, `${id}-${stamp}-${randomHex(4)}`);
  // A `.quarantine` that is a symbolic link would carry the session out of the store.
  assertArea(dirname(target));
  try {
    await mkdir(dirname(target), { recursive: true });
    await rename(join(storeDir, id), target);
  } catch (err) {
    throw toSessionError(err, `quarantining session ${id}`);
  }
  return target;
}

/**
 * Why no record can be written through `<store>/.tmp/`, or undefined when it is fine (absent: the
 * first write makes it). A symbolic link is refused too: temps would be written wherever it points.
 */
export function tempDirProblem(storeDir: string): string | undefined {
  const dir = join(storeDir, TEMP_DIR);
  const info = lstatIfAny(dir);
  if (!info) return undefined;
  if (info.isSymbolicLink())
    return (
      'is a symbolic link: record writes would put their temp files wherever it points; ' +
      'replace it with a directory'
    );
  if (!info.isDirectory()) return 'is not a directory: no record can be written until it is moved away';
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    return (
      `is not writable (${(err as NodeJS.ErrnoException).code}): no record can be written; ` +
      'fix its owner or permissions'
    );
  }
  return undefined;
}

/** Whether `<store>/<id>` is an empty directory last changed over `minAgeMs` ago (a create that died). */
export function isOldEmptySessionDir(storeDir: string, id: string, now: number, minAgeMs: number): boolean {
  assertValidId(id);
  const info = lstatIfAny(join(storeDir, id));
  return (
    info !== undefined &&
    info.isDirectory() &&
    now - info.mtimeMs > minAgeMs &&
    namesSync(join(storeDir, id)).length === 0
  );
}

/**
 * Removes `<store>/<id>` if it is still empty (rmdir refuses otherwise); true when it is gone. Call under the
 * id's lock.
 */
export async function removeEmptySessionDir(storeDir: string, id: string): Promise<boolean> {
  assertValidId(id);
  return rmdir(join(storeDir, id)).then(
    () => true,
    (err) => (err as NodeJS.ErrnoException).code === 'ENOENT',
  );
}
