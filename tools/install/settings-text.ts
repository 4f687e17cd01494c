// The text of a Claude Code settings file, without the disk: parsed with its layout, checked for what a
// rewrite would lose, and formatted back in the same layout.
import { SessionError } from '../errors.js';
import { parseJson } from '../json.js';

/** A Claude Code settings file as read: `settings` undefined when there is no file. */
export interface SettingsFile {
  file: string;
  text: string | undefined;
  settings: Record<string, unknown> | undefined;
  /** The file's own layout, kept when it is rewritten: indentation, line ending, byte-order mark. */
  indent: string;
  eol: string;
  bom: boolean;
}

/** Parses a settings file's text (undefined: no file); anything but a JSON object is EINVALID. */
export function parseSettingsText(file: string, text: string | undefined): SettingsFile {
  if (text === undefined) return { file, text, settings: undefined, indent: '  ', eol: '\n', bom: false };
  const bom = text.startsWith('\uFEFF');
  const json = bom ? text.slice(1) : text;
  let settings: unknown;
  try {
    settings = parseJson(json);
  } catch (err) {
    throw new SessionError(
      'EINVALID',
      `${file} is not valid JSON (${(err as Error).message}); refusing to rewrite it`,
      { cause: err, details: { file } },
    );
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new SessionError('EINVALID', `${file} does not hold a JSON object; refusing to rewrite it`, {
      details: { file },
    });
  }
  return {
    file,
    text,
    settings: settings as Record<string, unknown>,
    indent: /^([ \t]+)"/m.exec(json)?.[1] ?? '  ',
    eol: json.includes('\r\n') ? '\r\n' : '\n',
    bom,
  };
}

/** Refuses a settings file that rewriting would change beyond our edit (see lossyJson). */
export function assertRewritable({ file, text }: SettingsFile): void {
  const lossy = text === undefined ? undefined : lossyJson(text.startsWith('\uFEFF') ? text.slice(1) : text);
  if (lossy)
    throw new SessionError(
      'EINVALID',
      `${file}: ${lossy}, which rewriting the file would change; refusing to rewrite it`,
      { details: { file } },
    );
}

/**
 * The settings as the file's text, in the layout of the file they were read from (`text`): what did
 * not change keeps its exact text (a compact line stays compact, `1.50` stays `1.50`), and only the
 * members whose values changed are written anew, in the file's indentation, where they were.
 */
export function formatSettings(
  settings: unknown,
  { indent, eol, bom, text }: Pick<SettingsFile, 'indent' | 'eol' | 'bom'> & { text?: string },
): string {
  if (text !== undefined) {
    const json = bom ? text.slice(1) : text;
    const open = json.search(/\S/);
    const spliced = json[open] === '{' ? spliceObject(json, open, settings, indent, eol) : undefined;
    if (spliced !== undefined)
      return `${bom ? '\uFEFF' : ''}${json.slice(0, open)}${spliced.text}${json.slice(spliced.end)}`;
  }
  // JSON.stringify escapes line breaks inside strings: every "\n" it returns is a line ending.
  return `${bom ? '\uFEFF' : ''}${JSON.stringify(settings, null, indent).replace(/\n/g, eol)}${eol}`;
}

/** One member of an object as written: `before` "key"`colon`value`after`, then `,` or `}`. */
interface Member {
  key: string;
  start: number;
  valueStart: number;
  end: number;
  before: string;
  colon: string;
  after: string;
}

/**
 * The object at `open` rewritten to hold `value`: its members kept, changed, dropped or appended in
 * the object's own layout. Undefined when it cannot be done in place (the keys it keeps change
 * order, it has or gets no member at all, a key appears twice): the caller writes the value anew.
 */
function spliceObject(
  json: string,
  open: number,
  value: unknown,
  indent: string,
  eol: string,
): { text: string; end: number } | undefined {
  const { members, close } = scanObject(json, open);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const old = new Map(members.map((m) => [m.key, m]));
  const kept = members.filter((m) => keys.includes(m.key)).map((m) => m.key);
  if (old.size !== members.length || members.length === 0 || keys.length === 0) return undefined;
  if (kept.join('\0') !== keys.filter((k) => old.has(k)).join('\0')) return undefined;
  const last = members[members.length - 1]!;
  // A member's indentation: what follows the last line break before it (none in a one-line object).
  const memberIndent = last.before.includes('\n') ? last.before.slice(last.before.lastIndexOf('\n') + 1) : undefined;
  const written = (v: unknown) =>
    memberIndent === undefined ? JSON.stringify(v) : JSON.stringify(v, null, indent).replace(/\n/g, eol + memberIndent);
  const parts = keys.map((key) => {
    const next = (value as Record<string, unknown>)[key];
    const m = old.get(key);
    if (!m) return `${last.before}${JSON.stringify(key)}${last.colon}${written(next)}`;
    const between = m === last ? '' : m.after;
    const current = json.slice(m.valueStart, m.end);
    if (JSON.stringify(JSON.parse(current)) === JSON.stringify(next))
      return `${json.slice(m.start - m.before.length, m.end)}${between}`;
    const inner = json[m.valueStart] === '{' ? spliceObject(json, m.valueStart, next, indent, eol) : undefined;
    const text = inner ? `${inner.text}${json.slice(inner.end, m.end)}` : written(next);
    return `${m.before}${json.slice(m.start, m.valueStart)}${text}${between}`;
  });
  return { text: `{${parts.join(',')}${last.after}}`, end: close + 1 };
}

/** The members of the (valid JSON) object whose `{` is at `open`, and where its `}` is. */
function scanObject(json: string, open: number): { members: Member[]; close: number } {
  const members: Member[] = [];
  let i = open + 1;
  for (;;) {
    const gap = skipSpace(json, i);
    if (json[gap] === '}') return { members, close: gap };
    const keyEnd = endOfValue(json, gap);
    const colonEnd = skipSpace(json, skipSpace(json, keyEnd) + 1);
    const end = endOfValue(json, colonEnd);
    const next = skipSpace(json, end);
    members.push({
      key: JSON.parse(json.slice(gap, keyEnd)) as string,
      start: gap,
      valueStart: colonEnd,
      end,
      before: json.slice(i, gap),
      colon: json.slice(keyEnd, colonEnd),
      after: json.slice(end, next),
    });
    if (json[next] === '}') return { members, close: next };
    i = next + 1;
  }
}

function skipSpace(json: string, i: number): number {
  while (i < json.length && ' \t\r\n'.includes(json[i]!)) i++;
  return i;
}

/** Where the JSON value starting at `i` ends (one past its last character). */
function endOfValue(json: string, i: number): number {
  if (json[i] === '"') return stringEnd(json, i);
  if (json[i] !== '{' && json[i] !== '[') return /^[^\s,\]}]+/.exec(json.slice(i, i + 400))![0].length + i;
  let depth = 0;
  for (; i < json.length; i++) {
    const c = json[i];
    if (c === '"') i = stringEnd(json, i) - 1;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
  }
  return i;
}

function stringEnd(json: string, i: number): number {
  for (i++; json[i] !== '"'; i++) if (json[i] === '\\') i++;
  return i + 1;
}

/**
 * What JSON.parse followed by JSON.stringify would not give back, in valid JSON text: a key twice in
 * one object (only the last is kept), a number that a double cannot hold (12345678901234567890, 1e400).
 * Undefined when the round trip keeps every value (`1.50` becoming `1.5` is the same value).
 */
function lossyJson(json: string): string | undefined {
  const objects: (Set<string> | null)[] = [];
  let expectKey = false;
  for (const [token] of json.matchAll(/"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|[{}[\],]/g)) {
    const c = token[0];
    if (c === '{' || c === '[') objects.push(c === '{' ? new Set() : null);
    else if (c === '}' || c === ']') objects.pop();
    else if (c === '"' && expectKey) {
      const keys = objects.at(-1)!;
      const key = JSON.parse(token) as string;
      if (keys.has(key)) return `the key ${token} appears twice in one object`;
      keys.add(key);
    } else if (c !== '"' && c !== ',' && canonicalNumber(token) !== canonicalNumber(String(Number(token)))) {
      return `the number ${token} cannot be kept exactly`;
    }
    expectKey = (c === '{' || c === ',') && objects.at(-1) instanceof Set;
  }
  return undefined;
}

/** A decimal number as `<sign><digits>e<exponent>`, zeros trimmed; undefined for Infinity and NaN. */
function canonicalNumber(text: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  const digits = `${m[2]}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  return `${m[1]}${significant}e${Number(m[4] ?? 0) - fraction.length + digits.length - significant.length}`;
}
