import { SessionError } from './errors.js';

/**
 * The safe points of the bulk operations (cleanup, delete, restore, import, export, doctor's
 * repairs): once `signal` is aborted, the next one throws EINTERRUPTED with what was done so far,
 * and the `finally` blocks on the way out release the locks.
 */
export function throwIfInterrupted(signal: AbortSignal | undefined, done: number, total: number): void {
  if (!signal?.aborted) return;
  throw new SessionError('EINTERRUPTED', `interrupted after ${done} of ${total}; run it again to finish`, {
    details: { done, total },
  });
}

/**
 * A long synchronous stretch (thousands of lock mkdirs, record reads) starves the event loop: lock
 * refresh timers and signal handlers would not run. The returned function yields one turn of the loop
 * once `everyMs` have passed since the last turn, and costs nothing otherwise.
 */
export function breather(everyMs = 100): () => Promise<void> | undefined {
  let last = Date.now();
  return () => {
    if (Date.now() - last < everyMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        last = Date.now();
        resolve();
      }),
    );
  };
}
