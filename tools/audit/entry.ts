import { sha256Hex } from './sha256.js';
import { parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';
import { formatTimestamp, parseTimestamp } from '../time.js';

/** Version of one audit line's layout. */
const AUDIT_VERSION = 1;
/**
 * Lines are kept under this size so that one `write` on an O_APPEND descriptor puts a whole line in
 * the file without interleaving (Linux local file systems; see SESSION_README.md, "Audit trail").
 */
const MAX_LINE_BYTES = 4096;
/** Details larger than this (as JSON) are replaced by a short description of what was there. */
const MAX_DETAILS_BYTES = 2048;

type AuditActor = 'cli' | 'hook' | 'api' | 'mcp' | 'dashboard';

export interface AuditEntry {
  v: number;
  time: string;
  action: string;
  ids: string[];
  actor: AuditActor;
  pid: number;
  details: Record<string, unknown>;
  /** Present when one change named too many sessions for one line: [index, count], 1-based. */
  part?: [number, number];
  hash: string;
}

interface AuditInput {
  time: number;
  action: string;
  ids: string[];
  actor: AuditActor;
  pid: number;
  details: Record<string, unknown>;
}

/** A bad line: `reason` is `torn` (incomplete), `unparseable`, `hash` (edited) or `invalid`. */
export interface AuditProblem {
  file: string;
  line: number;
  reason: 'torn' | 'unparseable' | 'hash' | 'invalid';
  /** sha256 of the bad bytes: how `doctor --repair` acknowledges a line it has quarantined. */
  digest: string;
  text: string;
}

/** The lines (each ending in "\n") recording one change; several only when its ids do not fit in one. */
export function formatEntry(input: AuditInput): string[] {
  const details = fitDetails(input.details);
  const base = {
    v: AUDIT_VERSION,
    time: formatTimestamp(input.time),
    action: input.action,
    ids: input.ids,
    actor: input.actor,
    pid: input.pid,
    details,
  };
  const whole = seal(base);
  if (Buffer.byteLength(whole) <= MAX_LINE_BYTES) return [whole];
  // 24 bytes covers `"part":[NNNN,NNNN],` and the sealing overhead is inside `seal(empty)`.
  const budget = MAX_LINE_BYTES - Buffer.byteLength(seal({ ...base, ids: [] })) - 24;
  const chunks: string[][] = [[]];
  let used = 0;
  for (const id of input.ids) {
    const size = Buffer.byteLength(JSON.stringify(id)) + 1;
    const last = chunks[chunks.length - 1]!;
    if (used + size > budget && last.length > 0) {
      chunks.push([id]);
      used = size;
    } else {
      last.push(id);
      used += size;
    }
  }
  return chunks.map((ids, i) => seal({ ...base, ids, part: [i + 1, chunks.length] }));
}

function seal(base: object): string {
  const body = JSON.stringify(base);
  const hash = sha256(body);
  return `${body.slice(0, -1)},"hash":"${hash}"}\n`;
}

function fitDetails(details: Record<string, unknown>): Record<string, unknown> {
  const text = JSON.stringify(details ?? {});
  const bytes = Buffer.byteLength(text);
  if (bytes <= MAX_DETAILS_BYTES) return JSON.parse(text) as Record<string, unknown>;
  return { truncated: true, bytes, keys: Object.keys(details).slice(0, 20) };
}

export function sha256(text: string): string {
  return sha256Hex(text);
}

/**
 * Parses and verifies one line (without its "\n"). The hash covers the exact bytes of the line
 * with `,"hash":"…"` removed, so any edit, even of white space, is detected.
 */
/**
 * The line's hash, when it ends with `,"hash":"<64 hex digits>"}`: looked at where it must be (the last
 * TAIL_LENGTH characters) rather than searched for along the whole line.
 */
function hashTail(text: string): { index: number; 1: string } | null {
  const index = text.length - TAIL_LENGTH;
  if (index < 0 || !text.startsWith(TAIL_START, index) || !text.endsWith('"}')) return null;
  const hex = text.slice(index + TAIL_START.length, -2);
  return HEX_64.test(hex) ? { index, 1: hex } : null;
}
const TAIL_START = ',"hash":"';
/** `,"hash":"` + 64 hex digits + `"}`. */
const TAIL_LENGTH = TAIL_START.length + 64 + 2;
const HEX_64 = /^[0-9a-f]{64}$/;

export function parseLine(text: string): { entry: AuditEntry } | { reason: AuditProblem['reason'] } {
  const match = hashTail(text);
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch {
    return { reason: text.startsWith('{') && !text.endsWith('}') ? 'torn' : 'unparseable' };
  }
  if (!match) return { reason: 'hash' };
  const body = `${text.slice(0, match.index)}}`;
  if (sha256(body) !== match[1]) return { reason: 'hash' };
  if (!isEntry(raw)) return { reason: 'invalid' };
  return { entry: raw };
}

function isEntry(raw: unknown): raw is AuditEntry {
  return (
    isPlainObject(raw) &&
    typeof raw.v === 'number' &&
    parseTimestamp(raw.time) !== undefined &&
    typeof raw.action === 'string' &&
    Array.isArray(raw.ids) &&
    raw.ids.every((id) => typeof id === 'string') &&
    typeof raw.actor === 'string' &&
    typeof raw.pid === 'number' &&
    isPlainObject(raw.details)
  );
}

/** A line where a torn fragment was followed by a whole entry: the whole entry at its end, if any. */
export function recoverTail(text: string): AuditEntry | undefined {
  const start = text.lastIndexOf(`{"v":${AUDIT_VERSION},"time":`);
  if (start <= 0) return undefined;
  const parsed = parseLine(text.slice(start));
  return 'entry' in parsed ? parsed.entry : undefined;
}

export interface AuditFilter {
  session?: string;
  /** Epoch milliseconds: entries at or after this instant. */
  since?: number;
  action?: string;
}

export function matches(entry: AuditEntry, filter: AuditFilter): boolean {
  if (filter.session !== undefined && !entry.ids.includes(filter.session)) return false;
  if (filter.action !== undefined && entry.action !== filter.action) return false;
  if (filter.since !== undefined && (parseTimestamp(entry.time) ?? 0) < filter.since) return false;
  return true;
}
