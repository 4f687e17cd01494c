import { existsSync, mkdirSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { SessionError, toSessionError } from '../errors.js';

/**
 * proper-lockfile's on-disk protocol, which this module speaks (so a proper-lockfile holder and this
 * one exclude each other): the lock is a directory made with mkdir; its holder touches its mtime every
 * LOCK_STALE_MS / 2; a lock whose mtime is older than LOCK_STALE_MS belongs to a process that died
 * (killed hooks, SIGKILL) and is taken over. Written here rather than loaded: proper-lockfile and its
 * dependencies cost a hook several milliseconds to load, and a thread-pool round trip per step.
 */
export const LOCK_STALE_MS = 2000;

export interface LockOptions {
  /** Give up with ELOCKED after this long; longer than LOCK_STALE_MS so a dead holder's lock is recovered. */
  timeoutMs: number;
  /** What the lock protects, for the error message. */
  what: string;
}

/**
 * Runs `fn` holding the lock at `lockPath` (a directory; its parent must exist). `fn` gets `check`,
 * to call right before a commit: it throws ELOCKED if the lock was taken over meanwhile (this process
 * stalled past LOCK_STALE_MS), so nobody renames a file under a lock someone else now holds.
 */
export async function withLock<T>(lockPath: string, options: LockOptions, fn: (check: () => void) => Promise<T>): Promise<T> {
  const lock = await acquire(lockPath, options);
  const check = () => {
    lock.refresh();
    if (lock.lost) throw new SessionError('ELOCKED', `lost the lock on ${options.what} (${lock.lost})`);
  };
  try {
    return await fn(check);
  } finally {
    lock.release();
  }
}

async function acquire(lockPath: string, options: LockOptions): Promise<HeldLock> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = 2;
  for (;;) {
    const lock = tryLock(lockPath, options.what);
    if (lock) return lock;
    if (Date.now() + delay > deadline) {
      throw new SessionError('ELOCKED', `${options.what} is locked by another process; gave up after ${options.timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay * (1 + Math.random())));
    delay = Math.min(delay * 2, 50);
  }
}

/** One attempt: the lock, or undefined while a live process holds it. */
function tryLock(lockPath: string, what: string): HeldLock | undefined {
  try {
    if (makeDir(lockPath)) return new HeldLock(lockPath);
    const { mtimeMs } = statSync(lockPath);
    if (Date.now() - mtimeMs <= LOCK_STALE_MS) return undefined;
    // Its holder died: take it over (as proper-lockfile does: remove, then one more mkdir).
    rmdirSync(lockPath);
    return makeDir(lockPath) ? new HeldLock(lockPath) : undefined;
  } catch (err) {
    // Removed between our mkdir and stat (its holder released it): try again.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(path.dirname(lockPath))) return undefined;
    throw toSessionError(err, `locking ${what}`);
  }
}

/** True if made, false if it exists. */
function makeDir(lockPath: string): boolean {
  try {
    mkdirSync(lockPath);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Locks this process holds, released when it exits, even part-way through an operation. */
const held = new Set<HeldLock>();
let exitHandler = false;

class HeldLock {
  readonly path: string;
  /** Why the lock is no longer ours, once it is not. */
  lost: string | undefined;
  private mtimeMs: number;
  private touched = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(lockPath: string) {
    this.path = lockPath;
    this.mtimeMs = statSync(lockPath).mtimeMs;
    this.timer = setInterval(() => this.refresh(), LOCK_STALE_MS / 4);
    this.timer.unref();
    held.add(this);
    if (!exitHandler) {
      exitHandler = true;
      process.once('exit', () => {
        for (const lock of held) lock.release();
      });
    }
  }

  /**
   * Makes sure the lock is still ours (its mtime is the one we last gave it, and we gave it in time),
   * and touches it once it is half-way to stale. Called by the timer and by `check` before commits.
   */
  refresh(): void {
    if (this.lost) return;
    const now = Date.now();
    try {
      if (now - this.touched > LOCK_STALE_MS) throw new Error(`not refreshed for ${now - this.touched} ms, so another process may have taken it over`);
      if (statSync(this.path).mtimeMs !== this.mtimeMs) throw new Error('another process took it over');
      if (now - this.touched < LOCK_STALE_MS / 2) return;
      const date = new Date(now);
      utimesSync(this.path, date, date);
      this.mtimeMs = statSync(this.path).mtimeMs;
      this.touched = now;
    } catch (err) {
      this.lost = err instanceof Error ? err.message : String(err);
    }
  }

  release(): void {
    clearInterval(this.timer);
    if (!held.delete(this) || this.lost) return;
    try {
      rmdirSync(this.path);
    } catch {
      // Already gone; a stale lock is taken over anyway.
    }
  }
}
