import type { Hash } from 'node:crypto';
import { parseLine, type AuditEntry } from '../audit/entry.js';
import { SessionError } from '../errors.js';
import { isValidId } from '../ids.js';
import { JsonTooDeepError, parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';
import { parseRecord, type SessionRecord } from '../record.js';
import { builtinModule } from '../builtin.js';

const BUNDLE_FORMAT = 'agent-session-bundle';
/** The version `export` writes: JSON Lines, checksummed as it is written (version 1, one document, is still read). */
export const BUNDLE_VERSION = 2;

/** A version 1 bundle: one JSON document (still imported; `export` writes version 2). */
export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  format_version: 1;
  exported_at: string;
  roots: string[];
  sessions: SessionRecord[];
  audit: AuditEntry[];
  /** `sha256:<hex>` over the JSON text of every other field, in this order. */
  checksum: string;
}

/** What a bundle holds, one item at a time, as it is read. */
export type BundleItem = { session: SessionRecord } | { audit: AuditEntry };

/** What a bundle says of itself, known once it has been read to its end and its checksum verified. */
export interface BundleSummary {
  format_version: number;
  exported_at: string;
  roots: string[];
  checksum: string;
}

/**
 * Writes a version 2 bundle through `emit`, one line at a time, hashing exactly what it emits:
 *   {"format":"agent-session-bundle","format_version":2,"exported_at":"…","session_count":N}
 *   {"session":<record>}            one per session
 *   {"audit":<entry>}               one per audit entry, its line as in audit.jsonl
 *   {"roots":[…],"session_count":n,"audit_count":m}
 *   {"checksum":"sha256:<hex>"}     over the bytes of every line above, newlines included
 */
export class BundleWriter {
  private readonly hash: Hash = sha256Hash();
  sessions = 0;
  audit = 0;

  constructor(private readonly emit: (text: string) => void) {}

  /** `expected`: how many sessions the export means to write (for an importer's progress; the records count). */
  header(exportedAt: string, expected: number): void {
    this.line(
      JSON.stringify({
        format: BUNDLE_FORMAT,
        format_version: BUNDLE_VERSION,
        exported_at: exportedAt,
        session_count: expected,
      }),
    );
  }

  session(record: SessionRecord): void {
    this.sessions++;
    this.line(`{"session":${JSON.stringify(record)}}`);
  }

  auditEntry(entry: AuditEntry): void {
    this.audit++;
    this.line(`{"audit":${JSON.stringify(entry)}}`);
  }

  /** The last lines; returns the checksum. */
  finish(roots: string[]): string {
    this.line(JSON.stringify({ roots, session_count: this.sessions, audit_count: this.audit }));
    const checksum = `sha256:${this.hash.digest('hex')}`;
    this.emit(`${JSON.stringify({ checksum })}\n`);
    return checksum;
  }

  private line(text: string): void {
    const line = `${text}\n`;
    this.hash.update(line, 'utf8');
    this.emit(line);
  }
}

/**
 * Reads a version 2 bundle line by line (`line` takes each line's bytes, without its newline): checks
 * the header (a newer format_version → EVERSION), each record (schema; newer → EVERSION), each audit
 * entry's own hash, and, at `finish`, that the checksum line came last and matches (→ ECORRUPT).
 */
export class BundleReader {
  private readonly hash: Hash = sha256Hash();
  private lineNo = 0;
  private headerSeen = false;
  private counts: { sessions: number; audit: number } | undefined;
  private checksum: string | undefined;
  private readonly seen = new Set<string>();
  private sessionCount = 0;
  private auditCount = 0;
  exportedAt = '';
  /** The header's count of sessions (what the export meant to write): for progress only. */
  expected = 0;
  roots: string[] = [];

  line(bytes: Buffer): BundleItem | undefined {
    this.lineNo++;
    if (this.checksum !== undefined) {
      if (bytes.length === 0) return undefined;
      throw corrupt(`line ${this.lineNo} follows the checksum line`);
    }
    const text = bytes.toString('utf8');
    if (!this.headerSeen) {
      this.header(parseBundleText(text));
      this.hash.update(bytes).update('\n');
      return undefined;
    }
    if (text.startsWith('{"session":') && text.endsWith('}')) {
      if (this.counts) throw corrupt(`line ${this.lineNo} follows the roots line`);
      this.hash.update(bytes).update('\n');
      return { session: this.session(text.slice('{"session":'.length, -1)) };
    }
    if (text.startsWith('{"audit":') && text.endsWith('}')) {
      if (this.counts) throw corrupt(`line ${this.lineNo} follows the roots line`);
      this.hash.update(bytes).update('\n');
      const parsed = parseLine(text.slice('{"audit":'.length, -1));
      if (!('entry' in parsed)) throw corrupt(`line ${this.lineNo}: an audit entry fails its own hash`);
      this.auditCount++;
      return { audit: parsed.entry };
    }
    const raw = parseBundleText(text);
    if (isPlainObject(raw) && typeof raw.checksum === 'string' && Object.keys(raw).length === 1) {
      this.checksum = raw.checksum;
      return undefined;
    }
    if (!isPlainObject(raw) || !Array.isArray(raw.roots) || this.counts)
      throw corrupt(`line ${this.lineNo} is neither a session, an audit entry, the roots nor the checksum`);
    if (!raw.roots.every(isValidId)) throw corrupt('a root is not a valid session id');
    this.roots = raw.roots as string[];
    this.counts = { sessions: Number(raw.session_count), audit: Number(raw.audit_count) };
    this.hash.update(bytes).update('\n');
    return undefined;
  }

  /** At the end of the file: the bundle is whole and unchanged, or ECORRUPT. */
  finish(): BundleSummary {
    if (!this.headerSeen) throw corrupt('it is empty');
    if (this.checksum === undefined || this.counts === undefined)
      throw corrupt('it ends before its checksum line (it was truncated)');
    if (this.checksum !== `sha256:${this.hash.digest('hex')}`)
      throw corrupt('its checksum does not match its content (it was changed or truncated)');
    if (this.counts.sessions !== this.sessionCount || this.counts.audit !== this.auditCount)
      throw corrupt('its counts of sessions and audit entries do not match its lines');
    return { format_version: BUNDLE_VERSION, exported_at: this.exportedAt, roots: this.roots, checksum: this.checksum };
  }

  private header(raw: unknown): void {
    if (!isPlainObject(raw) || raw.format !== BUNDLE_FORMAT) throw corrupt('it is not an agent-session bundle');
    checkVersion(raw.format_version);
    if (raw.format_version !== BUNDLE_VERSION) throw corrupt('its first line is not a version 2 header');
    this.exportedAt = String(raw.exported_at);
    this.expected = Number.isSafeInteger(raw.session_count) ? (raw.session_count as number) : 0;
    this.headerSeen = true;
  }

  private session(text: string): SessionRecord {
    // The record is parsed (and checked against its id) once: its id is read off the text first.
    const id = /"agent_id":"([^"\\]*)"/.exec(text)?.[1];
    if (!isValidId(id)) throw corrupt(`the session on line ${this.lineNo} has no valid agent_id`);
    let record: SessionRecord;
    try {
      record = parseRecord(text, id);
    } catch (err) {
      const e = err as SessionError;
      throw new SessionError(e.code === 'EVERSION' ? 'EVERSION' : 'ECORRUPT', `bundle refused: ${e.message}`, {
        cause: err,
        details: e.details,
      });
    }
    if (this.seen.has(record.agent_id)) throw corrupt('it lists a session twice');
    this.seen.add(record.agent_id);
    this.sessionCount++;
    return record;
  }
}

/** Whether parsed JSON is a whole version 1 bundle (rather than a version 2 header line). */
export function isWholeBundle(raw: unknown): boolean {
  return isPlainObject(raw) && 'sessions' in raw && Array.isArray(raw.sessions);
}

/**
 * Checks a version 1 bundle, parsed: its format (newer → EVERSION), its checksum (→ ECORRUPT), each
 * record (schema; newer → EVERSION) and each audit entry's own hash.
 */
export function verifyBundleV1(raw: unknown): {
  summary: BundleSummary;
  records: SessionRecord[];
  audit: AuditEntry[];
} {
  if (!isPlainObject(raw) || raw.format !== BUNDLE_FORMAT) throw corrupt('it is not an agent-session bundle');
  checkVersion(raw.format_version);
  if (raw.format_version !== 1) throw corrupt(`a version ${raw.format_version} bundle is not one JSON document`);
  const { checksum, ...body } = raw;
  if (typeof checksum !== 'string' || checksum !== checksumV1(body))
    throw corrupt('its checksum does not match its content (it was changed or truncated)');
  if (!Array.isArray(raw.sessions) || !Array.isArray(raw.audit) || !Array.isArray(raw.roots))
    throw corrupt('sessions, audit or roots is not a list');
  const records = raw.sessions.map((r) => {
    const id = isPlainObject(r) ? r.agent_id : undefined;
    if (!isValidId(id)) throw corrupt(`a session has no valid agent_id`);
    return parseRecord(JSON.stringify(r), id);
  });
  const ids = new Set(records.map((r) => r.agent_id));
  if (ids.size !== records.length) throw corrupt('it lists a session twice');
  for (const entry of raw.audit) {
    if (!('entry' in parseLine(JSON.stringify(entry)))) throw corrupt('an audit entry fails its own hash');
  }
  const bundle = raw as unknown as Bundle;
  return {
    summary: { format_version: 1, exported_at: bundle.exported_at, roots: bundle.roots, checksum },
    records,
    audit: bundle.audit,
  };
}

function checksumV1(body: object): string {
  return `sha256:${sha256Hash().update(JSON.stringify(body)).digest('hex')}`;
}

/** node:crypto, loaded on first use: at start-up it would cost every CLI run about 3 ms; export and import need it. */
function sha256Hash(): Hash {
  return builtinModule('node:crypto').createHash('sha256');
}

function checkVersion(version: unknown): void {
  if (!Number.isInteger(version) || (version as number) < 1) throw corrupt('format_version is not a whole number >= 1');
  if ((version as number) > BUNDLE_VERSION) {
    throw new SessionError(
      'EVERSION',
      `the bundle has format_version ${version}, newer than this agent-session understands ` +
        `(${BUNDLE_VERSION}); upgrade agent-session`,
      { details: { format_version: version } },
    );
  }
}

export function parseBundleText(text: string): unknown {
  try {
    return parseJson(text);
  } catch (err) {
    if (err instanceof JsonTooDeepError) throw corrupt(`it is ${err.message}`, err);
    if (text.trim() === '') throw corrupt('the file is empty', err);
    throw corrupt(`it is not valid JSON (${(err as Error).message})`, err);
  }
}

export function corrupt(why: string, cause?: unknown): SessionError {
  return new SessionError('ECORRUPT', `bundle refused: ${why}`, { cause });
}
