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

/** The settings as the file's text, in the layout of the file they were read from. */
export function formatSettings(
  settings: unknown,
  { indent, eol, bom }: Pick<SettingsFile, 'indent' | 'eol' | 'bom'>,
): string {
  // JSON.stringify escapes line breaks inside strings: every "\n" it returns is a line ending.
  return `${bom ? '\uFEFF' : ''}${JSON.stringify(settings, null, indent).replace(/\n/g, eol)}${eol}`;
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
