/**
 * One synchronous pass over every session directory for cleanup: each record read and parsed (as
 * SessionStore.scan does), each directory's size, and the stray temp files in it. One readdir and one
 * read per session, instead of a scan plus a walk per session for sizes and strays.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { SessionError } from '../errors.js';
import { parseRecord, type SessionRecord } from '../record.js';
import { TEMP_SUFFIX } from './atomic.js';
import { STATE_FILE, type StoreProblem } from './store.js';
import type { StrayFile } from './sweep.js';
import { diskBytesSync } from './trash.js';

export interface Census {
  records: SessionRecord[];
  problems: StoreProblem[];
  /** Bytes of each session directory, readable or not. */
  bytes: Map<string, number>;
  /** `state.json.*.tmp` files older than `minAgeMs`. */
  temps: StrayFile[];
}

export function census(storeDir: string, ids: string[], now: number, minAgeMs: number): Census {
  const result: Census = { records: [], problems: [], bytes: new Map(), temps: [] };
  for (const id of ids) {
    const dir = path.join(storeDir, id);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    let bytes = 0;
    for (const name of names) {
      if (name === STATE_FILE) continue;
      const file = path.join(dir, name);
      bytes += diskBytesSync(file);
      if (name.startsWith(`${STATE_FILE}.`) && name.endsWith(TEMP_SUFFIX)) {
        const mtime = mtimeOf(file);
        if (mtime !== undefined && now - mtime > minAgeMs) result.temps.push({ path: file, kind: 'temp', age_ms: Math.round(now - mtime) });
      }
    }
    result.bytes.set(id, bytes);
    // A directory without state.json is a create in progress (or one that crashed): not a session.
    if (!names.includes(STATE_FILE)) continue;
    const file = path.join(dir, STATE_FILE);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      result.problems.push({ id, path: file, code: 'EIO', message: `cannot read ${file}: ${(err as NodeJS.ErrnoException).code}` });
      continue;
    }
    result.bytes.set(id, bytes + Buffer.byteLength(text));
    try {
      result.records.push(parseRecord(text, id));
    } catch (err) {
      const e = err as SessionError;
      result.problems.push({ id, path: file, code: e.code ?? 'ECORRUPT', message: e.message });
    }
  }
  return result;
}

function mtimeOf(file: string): number | undefined {
  try {
    return lstatSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
