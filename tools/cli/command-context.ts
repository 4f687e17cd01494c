import type { Settings } from '../config.js';
import { escapeControls } from '../errors.js';
import { Sessions } from '../sessions.js';
import type { Terminal } from '../watch/watch-screen.js';
import { colourFor, terminalWidth, type Palette } from './colour.js';
import { writeJson, writePieces } from './json-output.js';

export type StopSignal = 'SIGINT' | 'SIGTERM';

/** How the CLI hears SIGINT/SIGTERM and exits at once; the bin passes `process`'s, tests a fake. */
interface SignalSource {
  on(name: StopSignal, listener: () => void): void;
  off(name: StopSignal, listener: () => void): void;
  exit(code: number): void;
}

/** What the CLI needs from the outside world; tests pass a fake one. */
export interface Io {
  /** False when the reader lags (a pipe): then `drain`, when given, waits until it has caught up. */
  stdout(text: string): boolean | void;
  drain?: () => Promise<void>;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
  now?: () => number;
  isTTY?: boolean;
  /** The terminal's columns when stdout is one. */
  columns?: number;
  /** Whether stderr is a terminal (progress bars go there, never on stdout). */
  stderrIsTTY?: boolean;
  /** Keys, size and resizes of the terminal, for `watch`; the bin gives it when stdout is a terminal. */
  terminal?: Terminal;
  /** SIGINT/SIGTERM for the bulk commands (see interruptible.ts); without it they cannot be interrupted. */
  signals?: SignalSource;
}

interface GlobalArgs {
  dir?: string;
  json?: boolean;
}

export interface Context {
  io: Io;
  exitCode: number;
  open(args: GlobalArgs, settings?: Partial<Settings>): Sessions;
  /** Writes one line (adds the newline). */
  out(line: string): void;
  /** Writes many lines as `out` does, in a few large writes, waiting for a slow reader (a listing of 100,000). */
  outLines(lines: Iterable<string>): Promise<void>;
  /** Writes `value` as the single JSON document of stdout. */
  json(value: unknown): Promise<void>;
  warn(line: string): void;
  /** Colour and width for text on stdout: the identity palette and no width limit when it is not a terminal. */
  readonly style: { palette: Palette; width: number };
  /**
   * Writes lines that may carry the palette's colour codes; their data must already have gone through
   * `escapeControls`. Without colour it is `outLines`, byte for byte.
   */
  outStyled(lines: Iterable<string>): Promise<void>;
}

export function makeContext(io: Io): Context {
  const sink = { write: (text: string) => io.stdout(text), drain: io.drain };
  const stream = { isTTY: io.isTTY, columns: io.columns };
  const style = { palette: colourFor(stream, io.env), width: terminalWidth(stream) };
  return {
    io,
    exitCode: 0,
    open: (args, settings) =>
      Sessions.open({ dir: args.dir, cwd: io.cwd, env: io.env, now: io.now, settings, actor: 'cli' }),
    // Text for people: a record's purpose or agent name can hold line breaks or terminal escapes.
    out: (line) => io.stdout(`${escapeControls(line)}\n`),
    outLines: (lines) => writePieces(escapedLines(lines), sink),
    json: (value) => writeJson(value, sink),
    warn: (line) => io.stderr(`agent-session: ${escapeControls(line)}\n`),
    style,
    outStyled: (lines) =>
      style.palette.enabled ? writePieces(endedLines(lines), sink) : writePieces(escapedLines(lines), sink),
  };
}

/** yargs passes the parsed arguments plus the context our middleware attaches. */
export type Argv<T> = T & GlobalArgs & { ctx: Context };

function* escapedLines(lines: Iterable<string>): Generator<string> {
  for (const line of lines) yield `${escapeControls(line)}\n`;
}

function* endedLines(lines: Iterable<string>): Generator<string> {
  for (const line of lines) yield `${line}\n`;
}
