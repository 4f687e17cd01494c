// The one place that decides whether output is coloured and how wide the terminal is. Colour only on a
// terminal, never when piped and never with NO_COLOR (no-color.org). FORCE_COLOR can only turn it off
// (`0`, `false`): CI services and Node's own test runner set FORCE_COLOR=1 for every child process, and a
// script reading our piped text must never get escape codes. Text comes in as plain text and goes out
// wrapped in SGR codes, so every width is measured on the text before it is coloured.

/** What colourFor and terminalWidth look at: process.stdout, or a fake one. */
export interface TerminalStream {
  isTTY?: boolean;
  columns?: number;
}

export interface Palette {
  /** False for the identity palette: callers can keep the output exactly as it was before colour existed. */
  readonly enabled: boolean;
  phase(phase: string, text: string): string;
  outcome(outcome: string, text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

const SGR = {
  bold: '1',
  dim: '2',
  red: '31',
  green: '32',
  yellow: '33',
  blue: '34',
  magenta: '35',
  cyan: '36',
} as const;

/** Working phases in cyan, paused ones in yellow (approval, where a person must act, in magenta), ends by outcome. */
const PHASE_COLOURS: Record<string, string> = {
  initializing: SGR.blue,
  investigating: SGR.yellow,
  planning: SGR.yellow,
  approval: `${SGR.bold};${SGR.magenta}`,
  executing: SGR.cyan,
  validating: SGR.cyan,
  completed: SGR.green,
  failed: `${SGR.bold};${SGR.red}`,
  abandoned: SGR.dim,
};

const OUTCOME_COLOURS: Record<string, string> = {
  completed: SGR.green,
  failed: `${SGR.bold};${SGR.red}`,
  abandoned: SGR.yellow,
};

const IDENTITY: Palette = {
  enabled: false,
  phase: (_p, text) => text,
  outcome: (_o, text) => text,
  dim: (text) => text,
  bold: (text) => text,
};

/** Whether to colour: on a terminal, unless NO_COLOR (any non-empty value), FORCE_COLOR=0|false or TERM=dumb. */
export function colourWanted(stream: TerminalStream, env: Record<string, string | undefined>): boolean {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export function colourFor(stream: TerminalStream, env: Record<string, string | undefined>): Palette {
  if (!colourWanted(stream, env)) return IDENTITY;
  const wrap = (code: string | undefined, text: string) => (code && text ? `\u001b[${code}m${text}\u001b[0m` : text);
  return {
    enabled: true,
    phase: (p, text) => wrap(PHASE_COLOURS[p], text),
    outcome: (o, text) => wrap(OUTCOME_COLOURS[o], text),
    dim: (text) => wrap(SGR.dim, text),
    bold: (text) => wrap(SGR.bold, text),
  };
}

/** The terminal's columns; Infinity (nothing is cut) when the stream is not a terminal or does not say. */
export function terminalWidth(stream: TerminalStream): number {
  return stream.isTTY && stream.columns !== undefined && stream.columns > 0 ? stream.columns : Infinity;
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
// Hangul jamo, CJK, kana, Hangul syllables, compatibility ideographs, full-width forms.
const EAST_ASIAN_WIDE = new RegExp(
  '^[\\u1100-\\u115f\\u2e80-\\u303e\\u3041-\\u33ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\ua000-\\ua4cf' +
    '\\uac00-\\ud7a3\\uf900-\\ufaff\\ufe30-\\ufe4f\\uff00-\\uff60\\uffe0-\\uffe6]$',
  'u',
);
const PICTOGRAPH = /^\p{Extended_Pictographic}$/u;

/** Columns one character takes: 0 for combining marks and joiners, 2 for CJK, Hangul, full-width forms and emoji. */
function charWidth(char: string): number {
  const code = char.codePointAt(0)!;
  // ASCII first: nearly every character of a purpose or an id.
  if (code >= 0x20 && code < 0x7f) return 1;
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0;
  if (ZERO_WIDTH.test(char)) return 0;
  if (code < 0x1100) return 1;
  // Pictographs below U+1F000 (the arrows, (c), most dingbats) show as text, one column wide, in most terminals.
  if (code >= 0x1f000) return code >= 0x20000 || PICTOGRAPH.test(char) ? 2 : 1;
  return EAST_ASIAN_WIDE.test(char) ? 2 : 1;
}

/** Columns `text` takes on a terminal, colour codes left out. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text.replace(ANSI, '')) width += charWidth(char);
  return width;
}

/** `text` cut to at most `width` columns, ending in "…" when something was cut (plain text, no colour codes). */
export function cutToWidth(text: string, width: number): string {
  if (!Number.isFinite(width) || displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const char of text) {
    const w = charWidth(char);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return `${out}\u2026`;
}

/** `text` padded with spaces to `width` columns by its display width (colour codes do not count). */
export function padToWidth(text: string, width: number): string {
  const missing = width - displayWidth(text);
  return missing > 0 ? text + ' '.repeat(missing) : text;
}
