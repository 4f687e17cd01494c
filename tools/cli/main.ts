#!/usr/bin/env node
import { fdOutput } from '../stdio.js';
import { runCli } from './run.js';
import type { Terminal } from '../watch/watch-screen.js';

// A reader that went away (`agent-session list | head`) is not an error of ours: drop the rest of the
// output quietly instead of dying on EPIPE with a stack trace, and keep the command's own exit code.
// Any other failure to write (a full disk) is an I/O error: one line on stderr, exit 4.
let outputFailed = false;
const stderr = fdOutput(2, () => undefined);
const stdout = fdOutput(1, (err) => {
  outputFailed = true;
  stderr.write(`agent-session: cannot write the output (${err.code ?? err.message})\n`);
  process.exitCode = 4;
});

// No top-level await: the CLI is bundled as CommonJS, run with V8's code cache (scripts/build.mjs).
void runCli(process.argv.slice(2), {
  stdout: (text) => stdout.write(text),
  // A pipe whose reader lags queues every write in memory: large outputs wait for it instead.
  drain: () => stdout.drain(),
  stderr: (text) => void stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  isTTY: stdout.isTTY,
  columns: stdout.isTTY ? process.stdout.columns : undefined,
  stderrIsTTY: stderr.isTTY,
  terminal: stdout.isTTY ? processTerminal() : undefined,
  signals: {
    on: (name, listener) => process.on(name, listener),
    off: (name, listener) => process.off(name, listener),
    exit: (code) => process.exit(code),
  },
}).then((code) => {
  process.exitCode = outputFailed ? 4 : code;
});

/** The terminal `watch` draws on: stdout's size and resizes, stdin's keys in raw mode (when stdin is a terminal). */
function processTerminal(): Terminal {
  return {
    size: () => ({ columns: process.stdout.columns, rows: process.stdout.rows }),
    write: (text) => void process.stdout.write(text),
    keys: (onKey) => {
      const stdin = process.stdin;
      if (!stdin.isTTY) return () => {};
      stdin.setRawMode(true);
      stdin.setEncoding('utf8');
      stdin.on('data', onKey);
      stdin.resume();
      return () => {
        stdin.off('data', onKey);
        stdin.setRawMode(false);
        stdin.pause();
      };
    },
    onResize: (listener) => {
      process.stdout.on('resize', listener);
      return () => void process.stdout.off('resize', listener);
    },
  };
}
