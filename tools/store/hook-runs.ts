/**
 * The last run of the hooks per Claude Code event (`<store>/.hooks/last-<event>.json`), for `status`.
 * Written at the end of every hook run, so it must cost next to nothing: one lstat, one write, one
 * rename, no fsync (a torn file after a power cut only loses a diagnostic). Never throws.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';
import { decodeUtf8, readRegularFileSync } from './regular-file.js';

/** The area, a dot-name so no session id can collide with it. */
export const HOOK_RUNS_DIR = '.hooks';

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

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
    const file = hookRunFile(storeDir, run.event);
    const temp = `${file}.${process.pid}.tmp`;
    // O_NOFOLLOW: a link planted at the temp's name is refused, not written through.
    const fd = openSync(temp, WRITE_FLAGS, 0o644);
    try {
      writeSync(fd, `${JSON.stringify(run)}\n`);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
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
      const data = readRegularFileSync(file, { maxBytes: 64 * 1024 });
      const value = data && parseJson(decodeUtf8(data, file));
      if (isPlainObject(value) && typeof value.event === 'string' && typeof value.time === 'string')
        runs.push(value as unknown as HookRunRecord);
    } catch {
      // A torn or foreign file: not a run.
    }
  }
  return runs.sort((a, b) => b.time.localeCompare(a.time));
}
