import { statSync } from 'node:fs';
import { isStaleLockTime } from './lock.js';
import { areaLockPath } from './subtree-locks.js';

/** Whether a store-level lock (`.locks/.<name>.lock`) is held by a live process: its holder refreshes it. */
export function areaLockIsHeld(storeDir: string, name: string, now: number = Date.now()): boolean {
  try {
    return !isStaleLockTime(statSync(areaLockPath(storeDir, name)).mtimeMs, now);
  } catch {
    return false;
  }
}
