import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { withLock } from './lock.js';

/** Lock directories live where SessionStore puts them, so these locks exclude its updates. */
export function sessionLockPath(storeDir: string, id: string): string {
  assertValidId(id);
  return path.join(storeDir, '.locks', `${id}.lock`);
}

/** Store-level locks start with "." so they never collide with a session's. */
export function areaLockPath(storeDir: string, name: string): string {
  return path.join(storeDir, '.locks', `.${name}.lock`);
}

/**
 * Holds the locks of many sessions at once: taken in sorted id order (two subtree operations can
 * never wait on each other in a cycle), all within one deadline (ELOCKED, never a hang).
 * `check` throws ELOCKED if any of them was lost; call it right before each irreversible step.
 */
export async function withSessionLocks<T>(
  storeDir: string,
  ids: string[],
  timeoutMs: number,
  fn: (check: () => void) => Promise<T>,
): Promise<T> {
  const sorted = [...new Set(ids)].sort();
  const deadline = Date.now() + timeoutMs;
  const checks: (() => void)[] = [];
  await ensureLocksDir(storeDir);
  const step = async (i: number): Promise<T> => {
    if (i === sorted.length) return fn(() => checks.forEach((check) => check()));
    const id = sorted[i] as string;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new SessionError('ELOCKED', `could not lock ${sorted.length} sessions within ${timeoutMs} ms`, { details: { id } });
    return withLock(sessionLockPath(storeDir, id), { timeoutMs: remaining, what: `session ${id}` }, (check) => {
      checks.push(check);
      return step(i + 1);
    });
  };
  return step(0);
}

/** A store-level lock (for example the one that keeps two cleanups from running at once). */
export async function withAreaLock<T>(storeDir: string, name: string, timeoutMs: number, what: string, fn: (check: () => void) => Promise<T>): Promise<T> {
  await ensureLocksDir(storeDir);
  return withLock(areaLockPath(storeDir, name), { timeoutMs, what }, fn);
}

async function ensureLocksDir(storeDir: string): Promise<void> {
  await mkdir(path.join(storeDir, '.locks'), { recursive: true }).catch((err) => {
    throw toSessionError(err, 'creating the lock directory');
  });
}
