import { readAudit } from '../audit/read.js';
import { SessionError } from '../errors.js';
import { breather, throwIfInterrupted } from '../safe-points.js';
import { faultPoint } from '../store/fault-points.js';
import { assertValidId } from '../ids.js';
import { parseRecord, type SessionRecord } from '../record.js';
import { sep } from 'node:path';
import type { SessionContext } from '../session-context.js';
import { BundleFile } from './bundle-file.js';
import { readRecordText, STATE_FILE, type StoreProblem } from '../store/store.js';
import { subtreeNodes } from '../trees/hierarchy.js';
import { BundleWriter } from './bundle.js';
import { checkOptions, type OptionKeys } from '../options.js';

export interface ExportOptions {
  /** Export this session and all its descendants. */
  id?: string;
  /** Export the whole store. */
  all?: boolean;
  /** Write the bundle to this file: streamed into a temp file beside it, fsynced, then renamed into place. */
  file?: string;
  /** Or stream the bundle's text to this function as it is written (stdout). */
  out?: (text: string) => void;
  /** Aborting it stops the export at the next record (EINTERRUPTED); a file is then left as it was. */
  signal?: AbortSignal;
  /** Called as records are written: `done` of `total`. */
  onProgress?: (done: number, total: number) => void;
}

export interface ExportResult {
  file: string | null;
  sessions: number;
  audit_entries: number;
  /** The bundle's checksum (its last line). */
  checksum: string;
  /** The bundle's text, when neither `file` nor `out` was given. */
  text?: string;
  /** Records that could not be read and were left out (only with `all`). */
  problems: StoreProblem[];
  /** Sessions listed when the export began and gone when it came to them (deleted, cleaned up): only with `all`. */
  removed_meanwhile: string[];
}

/**
 * A portable bundle of a session and its descendants (or of the store): records and their audit
 * entries, written as they are read (each record once), in the line format of tools/transfer/bundle.ts.
 */
const EXPORT_KEYS: OptionKeys<ExportOptions> = {
  id: true,
  all: true,
  file: true,
  out: true,
  signal: true,
  onProgress: true,
};

export async function exportSessions(sessions: SessionContext, options: ExportOptions): Promise<ExportResult> {
  checkOptions(options, EXPORT_KEYS, 'exportSessions');
  if (Boolean(options.all) === (options.id !== undefined))
    throw new SessionError('EINVALID', 'export needs a session id or --all (not both)');
  // The subtree's records are read (and an unreadable one refused) before anything is written.
  const subtree = options.id === undefined ? undefined : await readSubtree(sessions, options.id);
  const ids = subtree ? subtree.map((r) => r.agent_id) : sessions.store.ids().sort();
  throwIfInterrupted(options.signal, 0, ids.length);
  const chunks: string[] = [];
  const file = options.file === undefined ? undefined : new BundleFile(options.file, sessions.store.dir);
  const emit = file ? (t: string) => file.write(t) : (options.out ?? ((t: string) => void chunks.push(t)));
  try {
    const writer = new BundleWriter(emit);
    writer.header(new Date(sessions.now()).toISOString(), ids.length);
    const problems: StoreProblem[] = [];
    const gone: string[] = [];
    const dir = sessions.store.dir;
    const prefix = dir.endsWith(sep) ? dir : dir + sep;
    // With --all, every session whose parent is not in the store is a root: only the links are kept.
    const parents = new Map<string, string | null>();
    // The reads are synchronous: without a turn of the event loop now and then, a Ctrl-C would be
    // seen only once every record is written.
    const breathe = breather();
    for (const [i, id] of ids.entries()) {
      await breathe();
      throwIfInterrupted(options.signal, i, ids.length);
      await faultPoint('export-record');
      const unreadable = problems.length;
      const record = subtree ? subtree[i]! : readForAll(prefix, id, problems);
      if (record !== undefined) {
        writer.session(record);
        parents.set(record.agent_id, record.parent_session_id);
      } else if (problems.length === unreadable) gone.push(id);
      options.onProgress?.(i + 1, ids.length);
    }
    const { entries } = await readAudit(sessions);
    for (const entry of entries) if (entry.ids.some((id) => parents.has(id))) writer.auditEntry(entry);
    throwIfInterrupted(options.signal, ids.length, ids.length);
    const roots = subtree
      ? [options.id!]
      : [...parents].filter(([, parent]) => parent === null || !parents.has(parent)).map(([id]) => id);
    const checksum = writer.finish(roots);
    file?.commit();
    return {
      file: options.file ?? null,
      sessions: writer.sessions,
      audit_entries: writer.audit,
      checksum,
      ...(file || options.out ? {} : { text: chunks.join('') }),
      problems,
      removed_meanwhile: gone,
    };
  } catch (err) {
    file?.abort();
    throw err;
  }
}

/** The subtree's records, root first, parents before children; a record it cannot read throws its error. */
async function readSubtree(sessions: SessionContext, id: string): Promise<SessionRecord[]> {
  assertValidId(id);
  // The hierarchy's index finds the subtree without reading the whole store.
  const nodes = await subtreeNodes(sessions, id);
  const unreadable = nodes.find((n) => n.record === null);
  // Reading it again throws its own ECORRUPT or EVERSION: a bundle never leaves part of a tree out.
  if (unreadable) await sessions.store.read(unreadable.id);
  return nodes.map((n) => n.record!);
}

/** With --all, a record that cannot be read is left out and reported, never a failure of the export. */
function readForAll(prefix: string, id: string, problems: StoreProblem[]): SessionRecord | undefined {
  const file = `${prefix}${id}${sep}${STATE_FILE}`;
  try {
    // Plain concatenation, as the store's own scan does: ids() only returns valid single path segments.
    const text = readRecordText(file, id);
    return text === undefined ? undefined : parseRecord(text, id);
  } catch (err) {
    const e = err as SessionError;
    problems.push({ id, path: file, code: e.code ?? 'ECORRUPT', message: e.message });
    return undefined;
  }
}
