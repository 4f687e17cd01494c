import { createHash } from 'node:crypto';
import { parseLine, type AuditEntry } from '../audit/entry.js';
import { SessionError } from '../errors.js';
import { isValidId } from '../ids.js';
import { JsonTooDeepError, parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';
import { parseRecord, type SessionRecord } from '../record.js';

const BUNDLE_FORMAT = 'agent-session-bundle';
export const BUNDLE_VERSION = 1;

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  format_version: number;
  exported_at: string;
  /** The sessions named to export (all roots of the store for `--all`). */
  roots: string[];
  /** Records, parents before their children. */
  sessions: SessionRecord[];
  /** Audit entries naming any of the sessions, oldest first, each still carrying its own hash. */
  audit: AuditEntry[];
  /** `sha256:<hex>` over the JSON text of every other field, in this order. */
  checksum: string;
}

export function makeBundle(content: Omit<Bundle, 'format' | 'format_version' | 'checksum'>): Bundle {
  const body = {
    format: BUNDLE_FORMAT,
    format_version: BUNDLE_VERSION,
    exported_at: content.exported_at,
    roots: content.roots,
    sessions: content.sessions,
    audit: content.audit,
  };
  return { ...body, checksum: checksumOf(body) } as Bundle;
}

function checksumOf(body: object): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(body)).digest('hex')}`;
}

/**
 * Checks a parsed bundle: its format (newer → EVERSION), its checksum (→ ECORRUPT), each record
 * (schema; newer → EVERSION) and each audit entry's own hash. Returns the records, parsed.
 */
export function verifyBundle(raw: unknown): { bundle: Bundle; records: SessionRecord[] } {
  if (!isPlainObject(raw) || raw.format !== BUNDLE_FORMAT) throw corrupt('it is not an agent-session bundle');
  const version = raw.format_version;
  if (!Number.isInteger(version) || (version as number) < 1) throw corrupt('format_version is not a whole number >= 1');
  if ((version as number) > BUNDLE_VERSION) {
    throw new SessionError(
      'EVERSION',
      `the bundle has format_version ${version}, newer than this agent-session understands ` +
        `(${BUNDLE_VERSION}); upgrade agent-session`,
      {
        details: { format_version: version },
      },
    );
  }
  const { checksum, ...body } = raw;
  if (typeof checksum !== 'string' || checksum !== checksumOf(body))
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
  return { bundle: raw as unknown as Bundle, records };
}

export function parseBundleText(text: string): unknown {
  try {
    return parseJson(text);
  } catch (err) {
    if (err instanceof JsonTooDeepError) throw corrupt(`it is ${err.message}`, err);
    throw corrupt(`it is not valid JSON (${(err as Error).message})`, err);
  }
}

function corrupt(why: string, cause?: unknown): SessionError {
  return new SessionError('ECORRUPT', `bundle refused: ${why}`, { cause });
}
