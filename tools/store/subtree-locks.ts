import { join } from 'node:path';
import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { faultPoint } from './fault-points.js';
import { breather, throwIfInterrupted } from '../safe-points.js';
import { ensureAreaSync } from './regular-file.js';
import { ensureStoreSync } from './store-root.js';
import { takeLock, TOUCH_AFTER_MS, withLock, type Lock, type LockedReason } from './lock.js';

/** Lock directories live where SessionStore puts them, so these locks exclude its updates. */
function sessionLockPath(storeDir: string, id: string): string {
  assertValidId(id);
  return join(storeDir, '.locks', `${id}.lock`);
}

/** Store-level locks start with "." so they never collide with a session's. */
export function areaLockPath(storeDir: string, name: string): string {
  return join(storeDir, '.locks', `.${name}.lock`);
}

/**
 * `check()` throws ELOCKED if any of the locks was lost, looking at each lock directory; `check(id)`
 * looks at that session's lock only, and keeps the others fresh (see Lock.refresh). A step that changes
 * one session calls `check(id)` right before; one that changes them all, `check()`.
 */
export type SessionLocksCheck = (id?: string) => void;

/**
 * Holds the locks of many sessions at once: taken in sorted id order (two subtree operations can
 * never wait on each other in a cycle), all within one deadline (ELOCKED, never a hang).
 * Thousands of locks (a large subtree) cost no system call per lock per step: one timer and every
 * check keep the locks held fresh, at most every TOUCH_AFTER_MS / 2, each looked at and touched
 * only once it is half a second old (nothing about a lock can change before it is stale). They are
 * let go of one by one, kept fresh meanwhile, so that none stalls into another process's hands.
 * `companion`, when given, is called every 64 locks of those passes (see `step`).
 */
export async function withSessionLocks<T>(
  storeDir: string,
  ids: string[],
  timeoutMs: number,
  fn: (check: SessionLocksCheck) => Promise<T>,
  signal?: AbortSignal,
  companion?: () => void,
): Promise<T> {
  const sorted = [...new Set(ids)].sort();
  const deadline = Date.now() + timeoutMs;
  const held = new Map<string, Lock>();
  // The first lock found lost: from then on every check throws (its lock's error).
  let lostId: string | undefined;
  let kept = 0;
  // At most once per TOUCH_AFTER_MS / 2 of other work: a pass over tens of thousands of locks (their
  // touches included) never runs back to back. A lost lock costs nothing more.
  // Every this many locks taken, refreshed or let go of, `companion` keeps another lock of the caller
  // fresh (a trash entry's): a pass over thousands of locks must not let it go stale.
  let steps = 0;
  const step = () => {
    if (++steps % 64 === 0) companion?.();
  };
  const keepFresh = () => {
    if (Date.now() - kept < TOUCH_AFTER_MS / 2) return;
    for (const [id, lock] of held) {
      if (lock.refresh() !== undefined && lostId === undefined) lostId = id;
      step();
    }
    kept = Date.now();
  };
  const keepFreshOrThrow = () => {
    keepFresh();
    if (lostId !== undefined) held.get(lostId)?.check();
  };
  const check: SessionLocksCheck = (id) => {
    if (id === undefined) return held.forEach((lock) => lock.check());
    keepFreshOrThrow();
    const lock = held.get(id);
    if (!lock) throw new Error(`check(${id}): not one of the sessions locked`);
    lock.check();
  };
  // While a step awaits (a thread-pool fsync, a slow disk).
  const timer = setInterval(keepFresh, TOUCH_AFTER_MS / 2);
  timer.unref();
  try {
    await ensureLocksDir(storeDir);
    await faultPoint('session-locks');
    const breathe = breather();
    for (const id of sorted) {
      await breathe();
      step();
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new SessionError('ELOCKED', `could not lock ${sorted.length} sessions within ${timeoutMs} ms`, {
          details: { id, reason: 'timeout' satisfies LockedReason },
        });
      keepFreshOrThrow();
      held.set(
        id,
        await takeLock(sessionLockPath(storeDir, id), {
          timeoutMs: remaining,
          what: `session ${id}`,
          timer: false,
          signal,
        }),
      );
      // Ctrl-C between two locks: nothing has changed yet, and the thousands of locks still to take
      // (then to let go of) would keep the user waiting for nothing. (A wait for a lock another
      // process holds ends with its own EINTERRUPTED, in takeLock.)
      throwIfInterrupted(signal, 0, sorted.length);
    }
    return await fn(check);
  } finally {
    clearInterval(timer);
    for (const [id, lock] of held) {
      held.delete(id);
      keepFresh();
      lock.release();
      step();
    }
  }
}

/** A store-level lock (for example the one that keeps two cleanups from running at once). */
export async function withAreaLock<T>(
  storeDir: string,
  name: string,
  timeoutMs: number,
  what: string,
  fn: (check: () => void) => Promise<T>,
): Promise<T> {
  await ensureLocksDir(storeDir);
  return withLock(areaLockPath(storeDir, name), { timeoutMs, what }, fn);
}

async function ensureLocksDir(storeDir: string): Promise<void> {
  ensureStoreSync(storeDir);
  ensureAreaSync(join(storeDir, '.locks'));
}
