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
