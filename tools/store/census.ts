/**
 * One synchronous pass over the session records for cleanup: each record read and parsed (as
 * SessionStore.scan does), what the caller keeps of it (a few fields: records are not held by the
 * hundred thousand), and its size. No directory is listed: temp files live in `.tmp/` (found by
 * strays.ts with one readdir), so a session directory holds state.json and nothing the store wrote.
 */
import { sep } from 'node:path';
import type { SessionError } from '../errors.js';
import { parseRecord, type SessionRecord } from '../record.js';
import { readRecordText, STATE_FILE, type StoreProblem } from './store.js';

interface CensusProblem extends StoreProblem {
  /** The parent a record of a newer schema names (it stays in the store, under that parent). */
  parent?: string | null;
}

interface Census<T> {
  /** What `keep` took of each readable record. */
  records: T[];
  problems: CensusProblem[];
  /**
   * Bytes of each state.json read (parsed or not): a dry run's estimate. Other files in a session
   * directory (put there by hand, or temp files of versions before `.tmp/`) are not counted here; a
   * real purge moves and counts them with the session.
   */
  bytes: Map<string, number>;
}

export function census<T>(storeDir: string, ids: string[], keep: (record: SessionRecord) => T): Census<T> {
  const result: Census<T> = { records: [], problems: [], bytes: new Map() };
  // Plain concatenation (ids are single path segments), as in SessionStore.scan.
  const prefix = storeDir.endsWith(sep) ? storeDir : storeDir + sep;
  for (const id of ids) {
    const file = `${prefix}${id}${sep}${STATE_FILE}`;
    let text: string | undefined;
    try {
      // A FIFO, link or device is ECORRUPT here as in SessionStore.read: cleanup quarantines it.
      text = readRecordText(file, id);
    } catch (err) {
      const e = err as SessionError;
      result.problems.push({ id, path: file, code: e.code, message: e.message });
      continue;
    }
    // A directory without state.json is a create in progress (or one that crashed): not a session.
    if (text === undefined) continue;
    result.bytes.set(id, Buffer.byteLength(text));
    try {
      result.records.push(keep(parseRecord(text, id)));
    } catch (err) {
      const e = err as SessionError;
      const problem: CensusProblem = { id, path: file, code: e.code ?? 'ECORRUPT', message: e.message };
      if (e.code === 'EVERSION') problem.parent = parentOf(text);
      result.problems.push(problem);
    }
  }
  return result;
}

/** `parent_session_id` of a record parseRecord refused as too new (it did parse as a JSON object). */
function parentOf(text: string): string | null {
  const parent = (JSON.parse(text) as { parent_session_id?: unknown }).parent_session_id;
  return typeof parent === 'string' ? parent : null;
}
