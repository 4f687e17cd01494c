import { setTimeout as sleep } from 'node:timers/promises';
import type Lockfile from 'proper-lockfile';
import { SessionError, toSessionError } from '../errors.js';

/**
 * proper-lockfile's floor. The holder refreshes the lock every second, so a lock older than this
 * belongs to a process that died (killed hooks, SIGKILL) and is taken over.
 */
export const LOCK_STALE_MS = 2000;

export interface LockOptions {
  /** Give up with ELOCKED after this long; longer than LOCK_STALE_MS so a dead holder's lock is recovered. */
  timeoutMs: number;
  /** What the lock protects, for the error message. */
  what: string;
}

/** Runs `fn` holding the lock at `lockPath` (a directory, proper-lockfile's mkdir lock). */
export async function withLock<T>(lockPath: string, options: LockOptions, fn: (check: () => void) => Promise<T>): Promise<T> {
  let lost: Error | undefined;
  const release = await acquire(lockPath, options, (err) => {
    lost = err;
  });
  // Called right before a commit: never rename a file under a lock someone else has taken over.
  const check = () => {
    if (lost) throw new SessionError('ELOCKED', `lost the lock on ${options.what} (${lost.message})`, { cause: lost });
  };
  try {
    return await fn(check);
  } finally {
    await release().catch(() => undefined);
  }
}

// Loaded on first use: a hook run that takes no lock (most events) skips its start-up cost (graceful-fs).
let lockfile: typeof Lockfile | undefined;

async function acquire(lockPath: string, options: LockOptions, onCompromised: (err: Error) => void) {
  lockfile ??= (await import('proper-lockfile')).default;
  const deadline = Date.now() + options.timeoutMs;
  let delay = 2;
  for (;;) {
    try {
      return await lockfile.lock(lockPath, {
        lockfilePath: lockPath,
        realpath: false,
        stale: LOCK_STALE_MS,
        retries: 0,
        onCompromised,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw toSessionError(err, `locking ${options.what}`);
      if (Date.now() + delay > deadline) {
        throw new SessionError('ELOCKED', `${options.what} is locked by another process; gave up after ${options.timeoutMs} ms`, {
          cause: err,
        });
      }
      await sleep(delay * (1 + Math.random()));
      delay = Math.min(delay * 2, 50);
    }
  }
}
