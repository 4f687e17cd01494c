import { closeSync, fstatSync, renameSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { openAppendSync, readRegularFileSync } from './regular-file.js';
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

/** One line of the hook log, as `HookRun.problem` writes it. */
export interface HookLogEntry {
  time: string;
  hook: string;
  event: string;
  pid: number;
  code: string;
  message: string;
}

const LOG_LINE = /^(\S+) (\S+) (\S+) pid=(\d+) ([A-Z]+): (.*)$/;

/**
 * The entries of `.hooks.log.1` then `.hooks.log`, oldest first. Lines in another format are skipped;
 * a log that is a link, a FIFO or too large is an error (ECORRUPT), as everywhere in the store.
 */
export function readHookLog(storeDir: string): HookLogEntry[] {
  const file = hookLogPath(storeDir);
  const entries: HookLogEntry[] = [];
  for (const name of [`${file}.1`, file]) {
    const data = readRegularFileSync(name, { maxBytes: 4 * HOOK_LOG_MAX_BYTES });
    if (data === undefined) continue;
    for (const line of data.toString('utf8').split('\n')) {
      const m = LOG_LINE.exec(line);
      if (m) entries.push({ time: m[1]!, hook: m[2]!, event: m[3]!, pid: Number(m[4]), code: m[5]!, message: m[6]! });
    }
  }
  return entries;
}
