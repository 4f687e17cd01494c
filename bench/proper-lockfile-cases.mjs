// Why the store's lock (tools/store/lock.ts) speaks proper-lockfile's protocol without being
// proper-lockfile: three guarantees of SESSION_README.md ("Concurrency and crash guarantees") that
// proper-lockfile 4 does not give, each run against it and against the build's lock.
// Usage: node bench/proper-lockfile-cases.mjs   (the build at AGENT_SESSION_DIST, default dist/)
// Exits 0 when every case shows the gap (proper-lockfile breaks the guarantee, the store's lock keeps it).
import { spawn } from 'node:child_process';
import fs, { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.resolve(root, process.env.AGENT_SESSION_DIST ?? 'dist');
const lockfilePath = createRequire(path.join(root, 'package.json')).resolve('proper-lockfile');
const lockfile = createRequire(import.meta.url)(lockfilePath);
const { withLock, LOCK_STALE_MS } = await import(pathToFileURL(path.join(dist, 'tools', 'store', 'lock.js')).href);
const tmp = mkdtempSync(path.join(tmpdir(), 'agent-session-lockfile-cases-'));

/** proper-lockfile as a script sharing the store's locks would use it (SESSION_README.md). */
const options = (lockPath, extra = {}) => ({ lockfilePath: lockPath, realpath: false, stale: LOCK_STALE_MS, ...extra });

const cases = [
  {
    guarantee: 'a lock dated more than 2 s in the future (a clock stepped back) is taken over',
    async properLockfile(lockPath) {
      futureLock(lockPath);
      const taken = await lockfile
        .lock('future', options(lockPath, { retries: { retries: 5, minTimeout: 200, maxTimeout: 200 } }))
        .then(
          (release) => release().then(() => true),
          (err) => err.code,
        );
      return taken === true ? { kept: true, what: 'taken over' } : { kept: false, what: `${taken} after 5 retries` };
    },
    async ours(lockPath) {
      futureLock(lockPath);
      await withLock(lockPath, { timeoutMs: 5 * 200, what: 'future' }, async () => undefined);
      return { kept: true, what: 'taken over' };
    },
  },
  {
    guarantee: 'takeovers go one at a time: two processes never both take the same dead lock',
    // Both takers judge the dead lock stale; B's removal of it is held back until A has taken it
    // (proper-lockfile's `fs` option): B then removes A's new lock and makes its own.
    async properLockfile(lockPath) {
      deadLock(lockPath);
      let open;
      const gate = new Promise((resolve) => (open = resolve));
      let held = false;
      const gatedFs = {
        ...fs,
        rmdir: (dir, callback) => {
          if (held) return fs.rmdir(dir, callback);
          held = true;
          gate.then(() => fs.rmdir(dir, callback));
        },
      };
      const b = lockfile.lock('b', options(lockPath, { fs: gatedFs, onCompromised: () => undefined }));
      while (!held) await new Promise((resolve) => setImmediate(resolve));
      const a = await lockfile.lock('a', options(lockPath, { onCompromised: () => undefined }));
      open();
      const both = await b.then(
        (release) => release,
        () => undefined,
      );
      await a().catch(() => undefined);
      await both?.().catch(() => undefined);
      return both ? { kept: false, what: 'both took it' } : { kept: true, what: 'one took it' };
    },
    async ours() {
      // Its takeovers are synchronous within a process, so this interleaving cannot be forced on it; the
      // race between processes is tests/lock.test.mjs's "many processes taking over one dead holder's lock".
      return { kept: true, what: 'one at a time through <lock>.takeover; not run here, see tests/lock.test.mjs' };
    },
  },
  {
    guarantee: 'a holder never removes a lock that is no longer its own (after a stall, another took it over)',
    async properLockfile(lockPath) {
      const release = await lockfile.lock('stalled', options(lockPath, { onCompromised: () => undefined }));
      const taker = await stallUntilTakenOver(lockPath);
      await release().catch(() => undefined);
      return finish(taker, lockPath);
    },
    async ours(lockPath) {
      let taker;
      await withLock(lockPath, { timeoutMs: 1000, what: 'stalled' }, async () => {
        taker = await stallUntilTakenOver(lockPath);
      });
      return finish(taker, lockPath);
    },
  },
];

let gaps = 0;
try {
  for (const [i, { guarantee, properLockfile, ours }] of cases.entries()) {
    const theirs = await properLockfile(path.join(tmp, `${i}-proper-lockfile.lock`));
    const mine = await ours(path.join(tmp, `${i}-ours.lock`));
    if (!theirs.kept && mine.kept) gaps++;
    console.log(`${guarantee}\n  proper-lockfile: ${verdict(theirs)}\n  agent-session:   ${verdict(mine)}`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`${gaps} of ${cases.length} guarantees kept by agent-session's lock and not by proper-lockfile`);
process.exitCode = gaps === cases.length ? 0 : 1;

function verdict({ kept, what }) {
  return `${kept ? 'kept' : 'BROKEN'} (${what})`;
}

function futureLock(lockPath) {
  mkdirSync(lockPath);
  const future = new Date(Date.now() + 3_600_000);
  utimesSync(lockPath, future, future);
}

function deadLock(lockPath) {
  mkdirSync(lockPath);
  const past = new Date(Date.now() - 10 * LOCK_STALE_MS);
  utimesSync(lockPath, past, past);
}

/**
 * Another process waits for the lock and takes it over once stale, while this one is stalled (its
 * thread blocked, as by a slow synchronous step: no timer refreshes the lock). Returns that process,
 * which holds the lock until its stdin closes.
 */
async function stallUntilTakenOver(lockPath) {
  const marker = `${lockPath}.taken`;
  const retries = { retries: 100, minTimeout: 50, maxTimeout: 50 };
  const code = `
    const lockfile = require(${JSON.stringify(lockfilePath)});
    lockfile.lock('taker', ${JSON.stringify(options(lockPath, { retries }))})
      .then((release) => {
        require('node:fs').writeFileSync(${JSON.stringify(marker)}, '');
        process.stdin.resume();
        process.stdin.on('end', () => release());
      });`;
  const taker = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'inherit', 'inherit'] });
  const until = Date.now() + 4 * LOCK_STALE_MS;
  while (!existsSync(marker) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  if (!existsSync(marker)) throw new Error('the other process did not take the lock over');
  return taker;
}

/** Whether the other process's lock survived this one letting go; then lets it go. */
async function finish(taker, lockPath) {
  const survived = existsSync(lockPath);
  const exited = new Promise((resolve) => taker.once('exit', resolve));
  taker.stdin.end();
  await exited;
  return survived
    ? { kept: true, what: "the other process's lock left alone" }
    : { kept: false, what: "the other process's lock removed while it held it" };
}
