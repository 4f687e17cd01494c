import type { Settings } from '../config.js';
import { escapeControls } from '../errors.js';
import { Sessions } from '../sessions.js';
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
  /** Whether stderr is a terminal (progress bars go there, never on stdout). */
  stderrIsTTY?: boolean;
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
}

export function makeContext(io: Io): Context {
  const sink = { write: (text: string) => io.stdout(text), drain: io.drain };
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
  };
}

/** yargs passes the parsed arguments plus the context our middleware attaches. */
export type Argv<T> = T & GlobalArgs & { ctx: Context };

function* escapedLines(lines: Iterable<string>): Generator<string> {
  for (const line of lines) yield `${escapeControls(line)}\n`;
}
