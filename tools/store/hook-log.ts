import { appendFile, mkdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';

/** The hooks' failure log, in the store; a dot-name so no session id can collide with it. */
export const HOOK_LOG = '.hooks.log';
/** When the log passes this size it is moved to `.hooks.log.1` (replacing the older one). */
export const HOOK_LOG_MAX_BYTES = 256 * 1024;

export function hookLogPath(storeDir: string): string {
  return path.join(path.resolve(storeDir), HOOK_LOG);
}

/** Appends one line; never throws (the hooks call it when something already went wrong). */
export async function appendHookLog(storeDir: string, line: string): Promise<boolean> {
  const file = hookLogPath(storeDir);
  try {
    const size = await stat(file).then((info) => info.size, () => 0);
    if (size > HOOK_LOG_MAX_BYTES) await rename(file, `${file}.1`);
    else if (size === 0) await mkdir(path.dirname(file), { recursive: true });
    await appendFile(file, `${line.replace(/[\r\n]+/g, ' ')}\n`, 'utf8');
    return true;
  } catch {
    return false;
  }
}
