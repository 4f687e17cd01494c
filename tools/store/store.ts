import { existsSync, readdirSync, statSync } from 'node:fs';
import { lstat, mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { assertValidId, isValidId } from '../ids.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../json.js';
import { parseRecord, SCHEMA_VERSION, serializeRecord, type SessionRecord } from '../record.js';
import { writeFileAtomic } from './atomic.js';
import { withLock } from './lock.js';
import { assertArea, decodeUtf8, ensureAreaSync, readRegularFileSync } from './regular-file.js';
import { randomHex } from '../random.js';
import { ensureStoreSync } from './store-root.js';

export const STATE_FILE = 'state.json';
/** Store-level areas start with "." so that no session id can name them. */
const LOCKS_DIR = '.locks';
const REMOVING_DIR = '.removing';
/** Temp files of record writes, `<id>.state.json.<pid>.<n>.<hex>.tmp`: one readdir finds the strays. */
export const TEMP_DIR = '.tmp';
/**
 * A record is a few KiB; one this large is refused (read: ECORRUPT, write: EINVALID), never slowly parsed
 * under a lock.
 */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

export interface StoreProblem {
  id: string;
  path: string;
  code: string;
  message: string;
}

interface ScanResult {
  records: SessionRecord[];
  problems: StoreProblem[];
}

/** Runs under the lock right after a write (the audit trail: its order per session is the order of the writes). */
type AfterWrite = (record: SessionRecord, previous?: SessionRecord) => void | Promise<void>;

interface StoreOptions {
  lockTimeoutMs: number;
}

/** The only module that turns ids into paths and reads or writes session records. */
export class SessionStore {
  readonly dir: string;
  /** `dir` and a separator: a session's directory is this and its id. */
  private readonly prefix: string;
  private readonly lockTimeoutMs: number;

  constructor(dir: string, options: StoreOptions) {
    this.dir = resolve(dir);
    this.prefix = this.dir.endsWith(sep) ? this.dir : `${this.dir}${sep}`;
    this.lockTimeoutMs = options.lockTimeoutMs;
  }

  statePath(id: string): string {
    return `${this.sessionDir(id)}${sep}${STATE_FILE}`;
  }

  /** The record, or undefined when there is no such session. Never creates anything. */
  async read(id: string): Promise<SessionRecord | undefined> {
    return this.readSync(id);
  }

  /** `read` for a caller reading many records in a row (a subtree): no turn of the event loop each. */
  readSync(id: string): SessionRecord | undefined {
    const file = this.statePath(id);
    const text = readRecordText(file, id);
    return text === undefined ? undefined : parseRecord(text, id);
  }

  /** When the record was last written (one stat), or undefined when there is none. */
  modifiedAt(id: string): number | undefined {
    try {
      return statSync(this.statePath(id)).mtimeMs;
    } catch {
      return undefined;
    }
  }

  /** Whether a session directory of this id exists (one stat; its record is not read). */
  has(id: string): boolean {
    return existsSync(this.sessionDir(id));
  }

  /** Writes a new record; EEXIST when the id is taken. Runs under the id's lock, as does `afterWrite`. */
  async create(record: SessionRecord, afterWrite?: AfterWrite): Promise<SessionRecord> {
    const id = record.agent_id;
    return this.locked(id, async (check) => {
      const dir = this.sessionDir(id);
      await this.ensureDir(dir);
      if ((await this.read(id)) !== undefined) {
        throw new SessionError('EEXIST', `session ${id} already exists`, { details: { id } });
      }
      await this.commit(id, record, check).catch(async (err) => {
        // No record was written (a full disk, an unwritable .tmp/): leave no empty session directory.
        await rmdir(dir).catch(() => undefined);
        throw err;
      });
      await afterWrite?.(record);
      return record;
    });
  }

  /** Lock, read, apply, write, unlock. `change` returns the new record, or the same object for no write. */
  async update(
    id: string,
    change: (record: SessionRecord) => SessionRecord | Promise<SessionRecord>,
    afterWrite?: AfterWrite,
  ): Promise<SessionRecord> {
    return this.locked(id, async (check) => {
      const current = await this.read(id);
      if (!current) throw notFound(id);
      const next = await change(current);
      if (next !== current) {
        await this.commit(id, next, check);
        await afterWrite?.(next, current);
      }
      return next;
    });
  }

  /** Removes a session if `stillWanted` agrees under the lock; returns whether it did. */
  async remove(id: string, stillWanted: (record: SessionRecord) => boolean): Promise<boolean> {
    return this.locked(id, async (check) => {
      const current = await this.read(id);
      if (!current || !stillWanted(current)) return false;
      check();
      // Renamed away first, so a crash mid-way never leaves a half-removed session in place.
      const parking = join(this.dir, REMOVING_DIR, `${id}.${randomHex(8)}`);
      assertArea(dirname(parking));
      await this.ensureDir(dirname(parking));
      await rename(this.sessionDir(id), parking).catch((err) => {
        throw toSessionError(err, `removing session ${id}`);
      });
      await rm(parking, { recursive: true, force: true });
      return true;
    });
  }

  /** Every record in the store; unreadable ones come back as problems, never as a failure of the scan. */
  scan(): ScanResult {
    const records: SessionRecord[] = [];
    const problems = this.scanEach((record) => void records.push(record));
    return { records, problems };
  }

  /**
   * Hands each readable record to `visit` as it is read, and returns the unreadable ones as problems.
   * A caller that keeps only a few fields of each holds one record at a time, not the whole store
   * (100,000 records take hundreds of MB). `ids`, when given, are the names `ids()` returned.
   */
  scanEach(visit: (record: SessionRecord) => void, ids: string[] = this.ids()): StoreProblem[] {
    const problems: StoreProblem[] = [];
    // Plain concatenation (ids are single path segments), as in sessionDir.
    for (const id of ids) {
      const file = `${this.prefix}${id}${sep}${STATE_FILE}`;
      let record: SessionRecord;
      try {
        const text = readRecordText(file, id);
        // A directory without state.json is a create in progress (or one that crashed): not a session.
        if (text === undefined) continue;
        record = parseRecord(text, id);
      } catch (err) {
        const e = err as SessionError;
        problems.push({ id, path: file, code: e.code ?? 'ECORRUPT', message: e.message });
        continue;
      }
      visit(record);
    }
    return problems;
  }

  /**
   * The readable records of the sessions written since `since` (at most `cap`), and at least of the
   * `limit` written last, newest first: a bounded read for the start of a conversation. A record is
   * written by a rename into its directory, which dates the directory, so one stat per session orders
   * and selects them without reading any record.
   */
  recent(limit: number, since = Infinity, cap = limit): SessionRecord[] {
    const prefix = this.prefix;
    const dated = this.ids().flatMap((id) => {
      try {
        return [{ id, at: statSync(`${prefix}${id}`).mtimeMs }];
      } catch {
        return [];
      }
    });
    dated.sort((a, b) => b.at - a.at);
    const within = dated.findIndex(({ at }) => at < since);
    const count = Math.min(Math.max(limit, within === -1 ? dated.length : within), Math.max(cap, limit));
    return dated.slice(0, count).flatMap(({ id }) => {
      try {
        const text = readRecordText(`${prefix}${id}${sep}${STATE_FILE}`, id);
        return text === undefined ? [] : [parseRecord(text, id)];
      } catch {
        // Unreadable records are for doctor and list to report; this read only looks for paused work.
        return [];
      }
    });
  }

  /**
   * Names in the store that can be session ids (never the store's own, such as audit.1.jsonl); empty when
   * the store does not exist yet.
   */
  ids(): string[] {
    let entries;
    try {
      entries = readdirSync(this.dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw toSessionError(err, `reading the store ${this.dir}`);
    }
    return entries.filter((entry) => entry.isDirectory() && isValidId(entry.name)).map((entry) => entry.name);
  }

  /**
   * Concatenated, not joined: the store's directory is resolved already, and path.join's normalizing,
   * called for every id of a loop (the status line's, list's), gets hot enough that V8 spends
   * milliseconds of a short process optimizing it.
   */
  private sessionDir(id: string): string {
    assertValidId(id);
    // Belt and braces: the id pattern already rules out separators, "." and "..".
    if (id.includes(sep) || id === '.' || id === '..')
      throw new SessionError('EINVALID', `session id ${id} leaves the store`);
    return `${this.prefix}${id}`;
  }

  private async commit(id: string, record: SessionRecord, check: () => void): Promise<void> {
    const dir = this.sessionDir(id);
    const info = await lstat(dir).catch((err) => {
      throw toSessionError(err, `writing session ${id}`);
    });
    // A symlinked session directory could point outside the store: refuse to write through it.
    if (!info.isDirectory()) throw new SessionError('ECORRUPT', `session ${id}: ${dir} is not a plain directory`);
    const text = serializeRecord(record);
    refuseUnreadable(id, text);
    check();
    const tempDir = join(this.dir, TEMP_DIR);
    // One lstat: a `.tmp` that is a link would put every record's temp file outside the store.
    ensureAreaSync(tempDir);
    const options = { tempDir, tempName: `${id}.${STATE_FILE}`, beforeRename: check };
    await writeFileAtomic(join(dir, STATE_FILE), text, options).catch((err) => {
      throw toSessionError(err, `writing session ${id}`);
    });
    // The write upgraded a legacy record (serializeRecord stamps the version): callers get what is on disk.
    record.schema_version = SCHEMA_VERSION;
  }

  private async locked<T>(id: string, fn: (check: () => void) => Promise<T>): Promise<T> {
    const lockPath = join(this.dir, LOCKS_DIR, `${id}.lock`);
    assertValidId(id);
    ensureStoreSync(this.dir);
    ensureAreaSync(dirname(lockPath));
    return withLock(lockPath, { timeoutMs: this.lockTimeoutMs, what: `session ${id}` }, fn);
  }

  private async ensureDir(dir: string): Promise<void> {
    await mkdir(dir, { recursive: true }).catch((err) => {
      throw toSessionError(err, `creating ${dir}`);
    });
  }
}

/**
 * The text of a record file, undefined when there is none. A FIFO, device, directory or symbolic
 * link, a file over MAX_RECORD_BYTES and invalid UTF-8 are ECORRUPT (never blocked on, never
 * followed, never rewritten with U+FFFD); other failures EIO. Synchronous: one open, fstat, read.
 */
export function readRecordText(file: string, id: string): string | undefined {
  let data: Buffer | undefined;
  try {
    data = readRegularFileSync(file, { maxBytes: MAX_RECORD_BYTES });
    return data === undefined ? undefined : decodeUtf8(data, file);
  } catch (err) {
    if (err instanceof SessionError)
      throw new SessionError(err.code, `session ${id} is corrupt: ${err.message}`, {
        cause: err,
        details: { id, ...err.details },
      });
    throw toSessionError(err, `reading ${file}`);
  }
}

/** A record this store could not read back is refused before it is written. */
function refuseUnreadable(id: string, text: string): void {
  // Length first: counting the bytes of every record would cost each write a pass over it.
  if (text.length * 3 > MAX_RECORD_BYTES && Buffer.byteLength(text) > MAX_RECORD_BYTES) {
    throw new SessionError(
      'EINVALID',
      `session ${id}: the record would be ${Buffer.byteLength(text)} bytes, ` +
        `over the ${MAX_RECORD_BYTES / 1048576} MiB a record may have`,
      { details: { id } },
    );
  }
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new SessionError(
      'EINVALID',
      `session ${id}: the record would be nested deeper than ${MAX_JSON_DEPTH} levels`,
      { details: { id } },
    );
  }
}

export function notFound(id: string): SessionError {
  return new SessionError('ENOTFOUND', `no session ${id}`, { details: { id } });
}
