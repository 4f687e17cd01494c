// Runs every tests/**/*.test.mjs with node:test (Node 20's --test does not expand globs).
// --fast leaves out tests/e2e/, the scenarios that run the real Claude Code CLI.
// --typecheck runs tsc's type check (no output files) alongside the tests, for a build made with --fast.
// Other arguments filter by substring of the path: node scripts/test.mjs cli hooks
import { spawn } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const fast = args.includes('--fast');
const typecheck = args.includes('--typecheck');
const filters = args.filter((a) => a !== '--fast' && a !== '--typecheck');
const realClient = path.join('tests', 'e2e') + path.sep;
const files = readdirSync(path.join(root, 'tests'), { recursive: true })
  .filter((f) => f.endsWith('.test.mjs'))
  .map((f) => path.join('tests', f))
  .filter((f) => !fast || !f.startsWith(realClient))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}

// The longest files start first, so that the run does not end waiting for one started last: each
// file's time in the last run that ran it is kept in .build/ (a file not run yet counts as longest).
// Before a first run, scripts/test-durations.json (a copy of that file from a full run) gives the order.
const durationsFile = path.join(root, '.build', 'test-durations.json');
const known = readJson(durationsFile) ?? readJson(path.join(root, 'scripts', 'test-durations.json')) ?? {};
const order = (f) => known[f] ?? Infinity;
files.sort((a, b) => order(b) - order(a) || a.localeCompare(b));

// Most files spend much of their time waiting (for a lock to go stale, a child to reach a point, the
// disk), so twice as many files as cores run at once.
const concurrency = 2 * availableParallelism();
// Nothing but the real-client scenarios makes a TLS connection, and reading a system's certificate
// bundle (NODE_EXTRA_CA_CERTS) costs each Node process about 0.1 s of CPU at start.
const env = { ...process.env };
if (!files.some((f) => f.startsWith(realClient))) delete env.NODE_EXTRA_CA_CERTS;
const tempDir = testTempDir();
if (tempDir) env.TMPDIR = tempDir;
// Ctrl-C reaches the test processes too: this one waits for them to end, then removes the temp files.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => (interrupted = true));
mkdirSync(path.dirname(durationsFile), { recursive: true });
const measured = `${durationsFile}.${process.pid}.run`;
const reporter = process.stdout.isTTY ? 'spec' : 'tap';
const tests = run(
  process.execPath,
  [
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-reporter=${reporter}`,
    '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(root, 'scripts', 'test-durations.mjs')}`,
    `--test-reporter-destination=${measured}`,
    ...files,
  ],
  'inherit',
);
// Incremental: tsc keeps what it learnt in .build/ and checks again only what changed since.
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const tscArgs = ['-p', root, '--noEmit', '--incremental', '--tsBuildInfoFile', path.join(root, '.build', 'typecheck')];
const types = typecheck ? run(process.execPath, [tsc, ...tscArgs], 'pipe') : undefined;

const testsStatus = (await tests).status;
saveDurations();
if (tempDir && !process.env.AGENT_SESSION_TEST_TMPDIR) rmSync(tempDir, { recursive: true, force: true });
if (interrupted) process.exit(130);
let status = testsStatus;
if (types) {
  const { status: typesStatus, output } = await types;
  if (typesStatus !== 0) {
    process.stderr.write(`${output}\ntsc: the type check failed (exit ${typesStatus})\n`);
    status ||= 1;
  }
}
process.exit(status);

/** Runs a child to its end: resolves {status, output} (output only when `stdio` is 'pipe'). */
function run(command, commandArgs, stdio) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd: root, env, stdio: stdio === 'inherit' ? 'inherit' : 'pipe' });
    let output = '';
    child.stdout?.setEncoding('utf8').on('data', (d) => (output += d));
    child.stderr?.setEncoding('utf8').on('data', (d) => (output += d));
    child.on('error', (err) => resolve({ status: 1, output: `${command}: ${err.message}` }));
    child.on('close', (code, signal) => resolve({ status: code ?? (signal ? 1 : 0), output }));
  });
}

/**
 * Where the tests make their projects and stores (TMPDIR of every test process): the directory named by
 * AGENT_SESSION_TEST_TMPDIR, else a new one in /dev/shm when it is a RAM file system with 2 GiB free.
 * There a file's fsync returns at once: the tests check what the files hold and what survives a
 * killed process, not the disk, and a run's thousands of fsyncs were a sixth of its time. Else TMPDIR.
 */
function testTempDir() {
  const chosen = process.env.AGENT_SESSION_TEST_TMPDIR;
  if (chosen) {
    mkdirSync(chosen, { recursive: true });
    return path.resolve(chosen);
  }
  try {
    const fs = statfsSync('/dev/shm');
    const TMPFS_MAGIC = 0x01021994;
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < 2 * 1024 ** 3) return undefined;
    return mkdtempSync('/dev/shm/agent-session-tests-');
  } catch {
    return undefined;
  }
}

/** Merges this run's file times into the kept ones (written whole: temp, rename). */
function saveDurations() {
  const latest = readJson(measured);
  rmSync(measured, { force: true });
  if (!latest) return;
  const temp = `${durationsFile}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ ...(readJson(durationsFile) ?? {}), ...latest }, null, 2)}\n`);
  renameSync(temp, durationsFile);
}

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}
