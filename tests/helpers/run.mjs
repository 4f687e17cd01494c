// Where the built code is, and how tests run it. Set AGENT_SESSION_DIST to test another build
// (parallel work builds into .build/<name> with `node scripts/build.mjs --out .build/<name> --fast`).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = path.resolve(ROOT, process.env.AGENT_SESSION_DIST ?? 'dist');
export const CLI = path.join(DIST, 'bin', 'agent-session.js');
/** How our texts name the CLI for a project without the package in its node_modules: the build's file. */
export const CLI_COMMAND = `node ${CLI}`;
/** `text` as a regular expression matching it literally. */
export const literally = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
export const PRE_DELEGATE = path.join(DIST, 'hooks', 'pre_delegate.js');
export const SUBAGENT_STOP = path.join(DIST, 'hooks', 'subagent_stop.js');
export const FIXTURES = path.join(ROOT, 'tests', 'fixtures');

/** The built library (dist/tools/index.js). */
export function loadLibrary() {
  return import(pathToFileURL(path.join(DIST, 'tools', 'index.js')).href);
}

/** A temp directory removed when the test ends (`t` is node:test's context). */
export function tempDir(t, prefix = 'agent-session-test-') {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Environment for child processes: no inherited agent-session or Claude variables unless given. Nor
 * NODE_EXTRA_CA_CERTS: nothing the tests start makes a TLS connection, and reading a system's
 * certificate bundle at every Node start costs about 50 ms of CPU, several times a bare start.
 */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AGENT_SESSION_') && !key.startsWith('CLAUDE') && key !== 'NODE_EXTRA_CA_CERTS')
      env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Runs a node script to completion: resolves {code, signal, stdout, stderr}. With `timeoutMs`, a
 * child still running then is killed (SIGKILL): a hang fails the test instead of stalling it.
 */
export function runNode(script, args = [], { cwd, env = cleanEnv(), input, timeoutMs } = {}) {
  return new Promise((resolve, reject) => {
    const limit = timeoutMs === undefined ? {} : { timeout: timeoutMs, killSignal: 'SIGKILL' };
    const child = spawn(process.execPath, [script, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], ...limit });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

/** Runs the built `agent-session` CLI. */
export function runCli(args, options = {}) {
  return runNode(CLI, args, options);
}

/**
 * Runs the built CLI on the store `dir` from the store's parent directory, which is also HOME (no
 * project config or user settings of this machine apply). `env` adds variables to cleanEnv()'s;
 * `timeoutMs` kills a run still going then and fails as hung. Resolves {code, signal, stdout, stderr,
 * json}: `json` is stdout parsed; with `--json` among the arguments, stdout that is not one JSON
 * document throws.
 */
export async function cli(dir, args, { env = {}, cwd = path.dirname(dir), input, timeoutMs } = {}) {
  const result = await runCli(['--dir', dir, ...args], {
    cwd,
    env: cleanEnv({ HOME: path.dirname(dir), ...env }),
    input,
    timeoutMs,
  });
  if (timeoutMs !== undefined)
    assert.equal(result.signal, null, `agent-session ${args.join(' ')} hung (killed after ${timeoutMs} ms)`);
  let json;
  if (args.includes('--json') && result.stdout !== '') json = JSON.parse(result.stdout);
  else {
    try {
      json = JSON.parse(result.stdout);
    } catch {
      json = undefined;
    }
  }
  return { ...result, json };
}

/** `cli` with --json that must succeed: its exit code 0 (else the stderr fails the test), its parsed stdout. */
export async function cliJson(dir, args, options) {
  const result = await cli(dir, [...args, '--json'], options);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** Runs the thunks, at most `limit` at a time; their results in order. */
export async function pool(thunks, limit = 4) {
  const results = [];
  let next = 0;
  const worker = async () => {
    while (next < thunks.length) {
      const i = next++;
      results[i] = await thunks[i]();
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  return results;
}
