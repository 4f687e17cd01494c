/**
 * The last run of the hooks per Claude Code event (`<store>/.hooks/last-<event>.json`), for `status`.
 * Written at the end of every hook run, so it must cost next to nothing: the record is padded to a
 * fixed size and written over the old one in place (open, one write, close; no fsync). A temp file
 * renamed over the old one would be atomic, but ext4 then flushes the file at once (auto_da_alloc):
 * about 2 ms a run instead of 0.03 ms. A reader that catches a write half done skips that file; two
 * hooks writing at once each write the whole record in one call, which Linux does not interleave.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';
import { decodeUtf8, readRegularFileSync } from './regular-file.js';

/** The area, a dot-name so no session id can collide with it. */
export const HOOK_RUNS_DIR = '.hooks';

/** Every record is this long (spaces after the JSON), so a shorter one replaces every byte of a longer. */
const RECORD_BYTES = 1024;
// No O_TRUNC (see above); O_NOFOLLOW refuses a link planted in a cloned store, O_NONBLOCK a FIFO.
const WRITE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

export interface HookRunRecord {
  /** The Claude Code event (`hook_event_name`), `legacy` for the legacy format, `unknown` when unread. */
  event: string;
  hook: string;
  /** ISO 8601, when the run ended. */
  time: string;
  /** The handler's outcome (`created`, `ignored`, …) or `failed` (then `code` and `message` say why). */
  outcome: string;
  code?: string;
  message?: string;
  /** From the start of the hook's process. */
  duration_ms: number;
  pid: number;
}

/** A file name for any event text: Claude Code's names are letters; anything else is `other`. */
export function hookRunFile(storeDir: string, event: string): string {
  return join(storeDir, HOOK_RUNS_DIR, `last-${/^[A-Za-z]{1,40}$/.test(event) ? event : 'other'}.json`);
}

/**
 * Records a run; false when it could not (no store yet, a link or a file where the area belongs).
 * The store itself is never created here: a run that touched nothing leaves nothing behind.
 */
export function recordHookRun(storeDir: string, run: HookRunRecord): boolean {
  const dir = join(storeDir, HOOK_RUNS_DIR);
  try {
    try {
      // A cloned store may carry a link here: the write would land outside the store.
      if (!lstatSync(dir).isDirectory()) return false;
    } catch {
      mkdirSync(dir);
    }
    let text = JSON.stringify(run);
    if (Buffer.byteLength(text) >= RECORD_BYTES) text = JSON.stringify({ ...run, message: undefined });
    const fd = openSync(hookRunFile(storeDir, run.event), WRITE_FLAGS, 0o644);
    try {
      if (!fstatSync(fd).isFile()) return false;
      writeSync(fd, `${text}${' '.repeat(RECORD_BYTES - 1 - Buffer.byteLength(text))}\n`, 0);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}

/** The recorded runs, one per event, newest first; unreadable files are skipped (they are diagnostics). */
export function readHookRuns(storeDir: string): HookRunRecord[] {
  const dir = join(storeDir, HOOK_RUNS_DIR);
  let names: string[];
  try {
    if (!lstatSync(dir).isDirectory()) return [];
    names = readdirSync(dir).filter((name) => /^last-\w+\.json$/.test(name));
  } catch {
    return [];
  }
  const runs: HookRunRecord[] = [];
  for (const name of names) {
    try {
      const file = join(dir, name);
      const data = readRegularFileSync(file, { maxBytes: RECORD_BYTES });
      const value = data && parseJson(decodeUtf8(data, file));
      if (isPlainObject(value) && typeof value.event === 'string' && typeof value.time === 'string')
        runs.push(value as unknown as HookRunRecord);
    } catch {
      // A record caught half written, or a foreign file: not a run.
    }
  }
  return runs.sort((a, b) => b.time.localeCompare(a.time));
}
