import { existsSync, mkdirSync, rmdirSync, statSync, utimesSync } from 'node:fs';
import { dirname } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';

/**
 * proper-lockfile's on-disk protocol, which this module speaks (so a proper-lockfile holder and this
 * one exclude each other): the lock is a directory made with mkdir; its holder touches its mtime every
 * second; a lock whose mtime is older than LOCK_STALE_MS belongs to a process that died (killed
 * hooks, SIGKILL) and is taken over. Not proper-lockfile itself: it lets two processes take over one
 * dead lock together, its release removes a lock another process took over, and it never takes over
 * a lock dated in the future (each a guarantee of SESSION_README.md; bench/proper-lockfile-cases.mjs).
 */
export const LOCK_STALE_MS = 2000;
/**
 * A refresh (a timer tick, a check, a wait for another lock) touches the lock once it is this old.
 * Short, so that a holder whose steps each block for most of a second (a slow disk's fsync, with no
 * timer able to run) still renews the lock at every check; a fast hook run never touches it.
 */
export const TOUCH_AFTER_MS = LOCK_STALE_MS / 8;
/**
 * Past this since the last touch the lock is no longer trusted to be ours: others may take it at
 * LOCK_STALE_MS, and the commit that follows a check needs a moment.
 */
const TRUST_MS = LOCK_STALE_MS - 300;
/**
 * A lock one of many held together (`timer: false`) is touched once it is this old, by its holder's
 * `Lock.refresh`: each touch costs system calls for every lock held. Still young enough that a
 * step blocking for a second between two checks leaves every lock trusted.
 */
const MANY_TOUCH_AFTER_MS = LOCK_STALE_MS / 4;

/**
 * Why an ELOCKED error was thrown, in its `details.reason`: the lock stayed busy past the timeout, or
 * a held lock stopped being ours (its holder stalled past the trusted time, another process took it
 * over or removed it, or its directory could not be looked at or touched); `changing` is for the
 * callers that take the locks of a subtree and find it changed under them, attempt after attempt.
 */
export type LockedReason = 'timeout' | 'changing' | LostReason;
type LostReason = 'stale' | 'taken-over' | 'removed' | 'io-error';

/** Why a held lock is no longer ours: `message` goes into the error's text. */
interface Lost {
  reason: LostReason;
  message: string;
}

interface LockOptions {
  /** Give up with ELOCKED after this long; longer than LOCK_STALE_MS so a dead holder's lock is recovered. */
  timeoutMs: number;
  /** What the lock protects, for the error message. */
  what: string;
  /**
   * False for a lock held as one of many (see subtree-locks.ts): no timer of its own (thousands of
   * timers would each look at their lock twice a second); its holder keeps it fresh with `Lock.refresh`.
   */
  timer?: boolean;
  /** An aborted signal ends a wait for the lock with EINTERRUPTED (Ctrl-C while another process holds it). */
  signal?: AbortSignal;
}

/**
 * Throws ELOCKED unless the lock is still ours and fresh (its directory looked at: not taken over, not
 * removed, not stalled near the stale time).
 */
type LockCheck = () => void;

/** A lock held until `release` (which does nothing the second time). */
export interface Lock {
  check: LockCheck;
  /**
   * For a holder of many locks between its commits: why the lock is no longer ours, if it is not.
   * The directory is looked at (and touched) only once the lock is MANY_TOUCH_AFTER_MS old; until
   * it is stale, nobody following the protocol can have taken it.
   */
  refresh: () => LockedReason | undefined;
  release: () => void;
}

/**
 * Runs `fn` holding the lock at `lockPath` (a directory; its parent must exist). `fn` gets `check`,
 * to call right before a commit, so nobody renames a file under a lock someone else holds.
 */
export async function withLock<T>(
  lockPath: string,
  options: LockOptions,
  fn: (check: LockCheck) => Promise<T>,
): Promise<T> {
  const lock = await acquire(lockPath, options);
  try {
    return await fn(checkOf(lock, options.what));
  } finally {
    lock.release();
  }
}

/** The lock at `lockPath`, for a caller that holds many and lets go of them itself (see withLock). */
export async function takeLock(lockPath: string, options: LockOptions): Promise<Lock> {
  const lock = await acquire(lockPath, options);
  const refresh = () => {
    lock.refresh(false);
    return lock.lost?.reason;
  };
  return { check: checkOf(lock, options.what), refresh, release: () => lock.release() };
}

function checkOf(lock: HeldLock, what: string): LockCheck {
  return () => {
    lock.refresh();
    if (lock.lost)
      throw new SessionError('ELOCKED', `lost the lock on ${what} (${lock.lost.message})`, {
        details: { reason: lock.lost.reason },
      });
  };
}

async function acquire(lockPath: string, options: LockOptions): Promise<HeldLock> {
  const deadline = Date.now() + options.timeoutMs;
  let delay = 2;
  for (;;) {
    const lock = tryLock(lockPath, options.what, options.timer ?? true);
    if (lock) return lock;
    if (options.signal?.aborted) {
      throw new SessionError(
        'EINTERRUPTED',
        `interrupted while waiting for ${options.what}, before anything changed; run it again to finish`,
        { details: { done: 0 } },
      );
    }
    if (Date.now() + delay > deadline) {
      throw new SessionError(
        'ELOCKED',
        `${options.what} is locked by another process; gave up after ${options.timeoutMs} ms`,
        { details: { reason: 'timeout' satisfies LockedReason } },
      );
    }
    // Locks this process already holds stay fresh while it waits (one held as one of many has no timer of its own).
    for (const held of heldLocks) held.refresh(!held.oneOfMany);
    await new Promise((resolve) => setTimeout(resolve, delay * (1 + Math.random())));
    delay = Math.min(delay * 2, 50);
  }
}

/** One attempt: the lock, or undefined while a live process holds it (or another is taking it over). */
function tryLock(lockPath: string, what: string, timer: boolean): HeldLock | undefined {
  try {
    if (makeDir(lockPath)) return new HeldLock(lockPath, timer);
    if (!isStale(lockPath)) return undefined;
    return takeOver(lockPath, timer);
  } catch (err) {
    // Removed between our mkdir and stat (its holder released it): try again.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(dirname(lockPath))) return undefined;
    throw toSessionError(err, `locking ${what}`);
  }
}

/**
 * Whether a lock with this mtime belongs to nobody: older than LOCK_STALE_MS, or dated further in the
 * future than a holder ever dates it (the next whole second), as a clock stepped back leaves it.
 */
export function isStaleLockTime(mtimeMs: number, now: number = Date.now()): boolean {
  const age = now - mtimeMs;
  return age > LOCK_STALE_MS || age < -LOCK_STALE_MS;
}

/** Whether a lock is held by a live process (its holder keeps it fresh); false when there is none. */
export function isLockHeld(lockPath: string, now: number = Date.now()): boolean {
  try {
    return !isStaleLockTime(statSync(lockPath).mtimeMs, now);
  } catch {
    return false;
  }
}

function isStale(lockPath: string): boolean {
  return isStaleLockTime(statSync(lockPath).mtimeMs);
}

/**
 * A dead holder's lock is removed and made anew. Takeovers go one at a time through `<lock>.takeover`
 * (itself made with mkdir, and taken over the same way if its maker died), and the lock is looked at
 * again under it: otherwise a second process that judged the old lock stale could remove the new one.
 */
function takeOver(lockPath: string, timer: boolean): HeldLock | undefined {
  return underTakeoverGuard(lockPath, () => {
    if (!isStale(lockPath)) return undefined;
    rmdirSync(lockPath);
    return makeDir(lockPath) ? new HeldLock(lockPath, timer) : undefined;
  });
}

/** Runs `fn` holding `<lock>.takeover`; undefined while another process holds it (a dead one's is removed). */
function underTakeoverGuard<T>(lockPath: string, fn: () => T | undefined): T | undefined {
  const guard = `${lockPath}.takeover`;
  if (!makeDir(guard)) {
    if (isStale(guard)) rmdirSync(guard);
    return undefined;
  }
  try {
    return fn();
  } finally {
    try {
      rmdirSync(guard);
    } catch {
      // Taken as stale by another process: this one stalled for seconds, and its lock check will say so.
    }
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
const heldLocks = new Set<HeldLock>();
let exitHandler = false;

/** The least time between two passes of keepLocksFresh: a tenth of the age at which a lock held as many is touched. */
const PASS_EVERY_MS = TOUCH_AFTER_MS / 5;
let lastPass = 0;

/**
 * For a long synchronous stretch run while this process holds locks (hundreds of index markers written,
 * records read, renames): no timer runs inside it, so nothing else keeps the locks fresh, and on a loaded
 * disk a few hundred file creations take over a second. The stretch calls this between two of its
 * steps: one clock read, and every PASS_EVERY_MS a pass that refreshes each lock held as its timer or
 * its holder would (one held as one of many is only looked at and touched when due). A lock found lost
 * stays lost: its holder's next check throws before anything more is committed.
 */
export function keepLocksFresh(): void {
  if (heldLocks.size === 0) return;
  const now = Date.now();
  if (now - lastPass < PASS_EVERY_MS) return;
  lastPass = now;
  for (const held of heldLocks) held.refresh(!held.oneOfMany);
}

class HeldLock {
  readonly path: string;
  /** Why the lock is no longer ours, once it is not. */
  lost: Lost | undefined;
  private mtimeMs: number;
  /**
   * `mtimeMs` is the time this holder gave the lock, not read back: the file system keeps it to within
   * a millisecond (learned from the first touch read back), so it is compared to within one.
   */
  private predicted = false;
  /** Whether a touch's time can be predicted: unknown until a first touch of a lock held as one of many. */
  private static predictable: boolean | undefined;
  private touched = Date.now();
  /** The file system keeps whole seconds: touch with the next whole second, as proper-lockfile does. */
  private readonly coarse: boolean;
  private readonly timer: NodeJS.Timeout | undefined;
  /** Held as one of many (no timer of its own): looked at only when due, as its holder does. */
  readonly oneOfMany: boolean;

  constructor(lockPath: string, timer: boolean) {
    this.path = lockPath;
    this.oneOfMany = !timer;
    this.mtimeMs = statSync(lockPath).mtimeMs;
    this.coarse = this.mtimeMs % 1000 === 0;
    // On whole seconds, the time mkdir stored is up to a second early: move it to the next second.
    if (this.coarse) this.touch(this.touched);
    if (timer) {
      this.timer = setInterval(() => this.refresh(), LOCK_STALE_MS / 4);
      this.timer.unref();
    }
    heldLocks.add(this);
    if (!exitHandler) {
      exitHandler = true;
      // 'exit' comes once: `on` serves as well as `once`, without compiling once's wrapper in every hook.
      process.on('exit', () => {
        for (const lock of heldLocks) lock.release();
      });
    }
  }

  /**
   * Makes sure the lock is still ours (its mtime is the one we last gave it, and we gave it recently
   * enough), and touches it once it is TOUCH_AFTER_MS old. Called by the timer and by `check`. With
   * `look` false: touched once MANY_TOUCH_AFTER_MS old, and until then only the in-memory half (no
   * system call).
   */
  refresh(look = true): void {
    if (this.lost) return;
    const now = Date.now();
    const due = now - this.touched >= (look ? TOUCH_AFTER_MS : MANY_TOUCH_AFTER_MS);
    this.lost = look || due ? this.whyNotOurs(now) : this.stalled(now);
    if (this.lost || !due) return;
    try {
      this.touch(now);
    } catch (err) {
      this.lost = { reason: 'io-error', message: `cannot touch it: ${(err as NodeJS.ErrnoException).code ?? err}` };
    }
  }

  /**
   * Removes the lock only if it is still ours. After a stall it may be another process's by now: then
   * it is removed only through the takeover guard, as any process would take over a stale lock, and
   * only if its mtime is still the one we gave it (so nobody took it over), leaving no stale lock behind.
   */
  release(): void {
    if (this.timer) clearInterval(this.timer);
    if (!heldLocks.delete(this)) return;
    // One of many, touched within the trusted time: nobody following the protocol can have taken it
    // (it is not stale), so the look before the rmdir is left out; each costs a system call per lock.
    const fresh = this.oneOfMany ? !this.stalled(Date.now()) : !this.whyNotOurs(Date.now());
    if (!this.lost && fresh) {
      try {
        rmdirSync(this.path);
      } catch {
        // Already gone.
      }
      return;
    }
    try {
      underTakeoverGuard(this.path, () => {
        if (this.isOurTime(statSync(this.path).mtimeMs)) rmdirSync(this.path);
      });
    } catch {
      // Gone meanwhile, or the guard could not be made: a stale lock is taken over by the next comer.
    }
  }

  private stalled(now: number): Lost | undefined {
    if (now - this.touched > TRUST_MS) {
      const message = `not refreshed for ${now - this.touched} ms, so another process may have taken it over`;
      return { reason: 'stale', message };
    }
    return undefined;
  }

  private whyNotOurs(now: number): Lost | undefined {
    const stalled = this.stalled(now);
    if (stalled) return stalled;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.path).mtimeMs;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? { reason: 'removed', message: 'another process removed it' }
        : { reason: 'io-error', message: `cannot check it: ${(err as NodeJS.ErrnoException).code ?? err}` };
    }
    return this.isOurTime(mtimeMs) ? undefined : { reason: 'taken-over', message: 'another process took it over' };
  }

  /**
   * Whether the lock still has the time this holder gave it. A predicted time matches to within a
   * millisecond (how the file system rounds it); a takeover dates the lock at least LOCK_STALE_MS later.
   */
  private isOurTime(mtimeMs: number): boolean {
    return this.predicted ? Math.abs(mtimeMs - this.mtimeMs) < 1 : mtimeMs === this.mtimeMs;
  }

  /**
   * Locks held as many are touched by the thousand in each pass of their holder: once a first touch
   * read back shows the file system keeps the time given (to within a millisecond), later touches skip
   * reading it back. A lock held alone (a hook's) always reads it back.
   */
  private touch(now: number): void {
    const when = new Date(this.coarse ? Math.ceil(now / 1000) * 1000 : now);
    utimesSync(this.path, when, when);
    if (this.oneOfMany && HeldLock.predictable) {
      this.mtimeMs = when.getTime();
      this.predicted = true;
    } else {
      this.mtimeMs = statSync(this.path).mtimeMs;
      this.predicted = false;
      if (this.oneOfMany) HeldLock.predictable ??= Math.abs(this.mtimeMs - when.getTime()) < 1;
    }
    this.touched = now;
  }
}
