/**
 * One synchronous pass over the session records for cleanup: each record read and parsed (as
 * SessionStore.scan does), and its size. No directory is listed: temp files live in `.tmp/` (found by
 * sweep.ts with one readdir), so a session directory holds state.json and nothing the store wrote.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SessionError } from '../errors.js';
import { parseRecord, type SessionRecord } from '../record.js';
import { STATE_FILE, type StoreProblem } from './store.js';

export interface CensusProblem extends StoreProblem {
  /** The parent a record of a newer schema names (it stays in the store, under that parent). */
  parent?: string | null;
}

export interface Census {
  records: SessionRecord[];
  problems: CensusProblem[];
  /**
   * Bytes of each state.json read (parsed or not): a dry run's estimate. Other files in a session
   * directory (put there by hand, or temp files of versions before `.tmp/`) are not counted here; a
   * real purge moves and counts them with the session.
   */
  bytes: Map<string, number>;
}

export function census(storeDir: string, ids: string[]): Census {
  const result: Census = { records: [], problems: [], bytes: new Map() };
  // Plain concatenation (ids are single path segments), as in SessionStore.scan.
  const prefix = storeDir.endsWith(path.sep) ? storeDir : storeDir + path.sep;
  for (const id of ids) {
    const file = `${prefix}${id}${path.sep}${STATE_FILE}`;
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A directory without state.json is a create in progress (or one that crashed): not a session.
      if (code === 'ENOENT') continue;
      result.problems.push({ id, path: file, code: 'EIO', message: `cannot read ${file}: ${code}` });
      continue;
    }
    result.bytes.set(id, data.length);
    try {
      result.records.push(parseRecord(data.toString('utf8'), id));
    } catch (err) {
      const e = err as SessionError;
      const problem: CensusProblem = { id, path: file, code: e.code ?? 'ECORRUPT', message: e.message };
      if (e.code === 'EVERSION') problem.parent = parentOf(data);
      result.problems.push(problem);
    }
  }
  return result;
}

/** `parent_session_id` of a record parseRecord refused as too new (it did parse as a JSON object). */
function parentOf(data: Buffer): string | null {
  const parent = (JSON.parse(data.toString('utf8')) as { parent_session_id?: unknown }).parent_session_id;
  return typeof parent === 'string' ? parent : null;
}
