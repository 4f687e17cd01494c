import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { TOUCH_AFTER_MS, withLock, type LockCheck } from './lock.js';

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
 * `check()` throws ELOCKED if any of the locks was lost, looking at each lock directory; `check(id)`
 * looks at that session's lock only, and keeps the others fresh (see LockCheck). A step that changes
 * one session calls `check(id)` right before; one that changes them all, `check()`.
 */
export type SessionLocksCheck = (id?: string) => void;

/**
 * Holds the locks of many sessions at once: taken in sorted id order (two subtree operations can
 * never wait on each other in a cycle), all within one deadline (ELOCKED, never a hang).
 * Thousands of locks (a large subtree) cost no system call per lock per step: the locks held are
 * kept fresh at most every TOUCH_AFTER_MS / 2, while taking the others and between the steps, and
 * nothing about them can change in between (another process takes a lock only once it is stale).
 */
export async function withSessionLocks<T>(
  storeDir: string,
  ids: string[],
  timeoutMs: number,
  fn: (check: SessionLocksCheck) => Promise<T>,
): Promise<T> {
  const sorted = [...new Set(ids)].sort();
  const deadline = Date.now() + timeoutMs;
  const held = new Map<string, LockCheck>();
  let kept = 0;
  const keepFresh = () => {
    const now = Date.now();
    if (now - kept < TOUCH_AFTER_MS / 2) return;
    for (const check of held.values()) check({ look: false });
    kept = now;
  };
  const check: SessionLocksCheck = (id) => {
    if (id === undefined) return held.forEach((one) => one());
    keepFresh();
    const one = held.get(id);
    if (!one) throw new Error(`check(${id}): not one of the sessions locked`);
    one();
  };
  await ensureLocksDir(storeDir);
  const step = async (i: number): Promise<T> => {
    if (i === sorted.length) return fn(check);
    const id = sorted[i] as string;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new SessionError('ELOCKED', `could not lock ${sorted.length} sessions within ${timeoutMs} ms`, { details: { id } });
    keepFresh();
    return withLock(sessionLockPath(storeDir, id), { timeoutMs: remaining, what: `session ${id}` }, (one) => {
      held.set(id, one);
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
