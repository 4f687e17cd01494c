import { closeSync, fstatSync, renameSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { openAppendSync } from './regular-file.js';
import { ensureStoreSync } from './store-root.js';

/** The hooks' failure log, in the store; a dot-name so no session id can collide with it. */
export const HOOK_LOG = '.hooks.log';
/** When the log passes this size it is moved to `.hooks.log.1` (replacing the older one). */
const HOOK_LOG_MAX_BYTES = 256 * 1024;

export function hookLogPath(storeDir: string): string {
  return join(resolve(storeDir), HOOK_LOG);
}

/**
 * Appends one line; never throws (the hooks call it when something already went wrong). Refuses a
 * symbolic link, FIFO or device at the log's name (false): a cloned store must not make the hook
 * write outside it. Open, fstat, write, close: as many calls as the stat and appendFile it replaces.
 */
export async function appendHookLog(storeDir: string, line: string): Promise<boolean> {
  const file = hookLogPath(storeDir);
  const text = `${line.replace(/[\r\n]+/g, ' ')}\n`;
  try {
    ensureStoreSync(dirname(file));
    let fd = await openCreating(file);
    if (fstatSync(fd).size > HOOK_LOG_MAX_BYTES) {
      closeSync(fd);
      // Renames the file just checked to be regular; a link at `.hooks.log.1` is replaced, not followed.
      renameSync(file, `${file}.1`);
      fd = openAppendSync(file);
    }
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}

async function openCreating(file: string): Promise<number> {
  try {
    return openAppendSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dirname(file), { recursive: true });
    return openAppendSync(file);
  }
}
