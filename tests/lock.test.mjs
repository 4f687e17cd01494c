// The store's lock speaks proper-lockfile's on-disk protocol (a directory made with mkdir, kept fresh
// by its holder, taken over once stale). These tests hold it against proper-lockfile itself, in other
// processes, and check takeover, refresh, loss and release on exit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { DIST, ROOT, tempDir } from './helpers/run.mjs';

const require = createRequire(path.join(ROOT, 'package.json'));
const lockfile = require('proper-lockfile');
const LOCK_MODULE = pathToFileURL(path.join(DIST, 'tools', 'store', 'lock.js')).href;
const { withLock, isStaleLockTime, keepLocksFresh, LOCK_STALE_MS } = await import(LOCK_MODULE);
const { withSessionLocks } = await import(pathToFileURL(path.join(DIST, 'tools', 'store', 'subtree-locks.js')).href);
/** Blocks the thread as a synchronous step on a slow disk does: no timer runs meanwhile. */
const block = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** proper-lockfile as the store configured it: one attempt, 2 s stale. Resolves 'locked' or the error code. */
function tryProperLockfile(lockPath) {
  return lockfile.lock(lockPath, { lockfilePath: lockPath, realpath: false, stale: LOCK_STALE_MS, retries: 0 }).then(
    (release) => release().then(() => 'locked'),
    (err) => err.code,
  );
}

/** Runs `code` (an ES module body with `withLock` in scope) in another process; resolves at its first stdout line. */
function child(t, code) {
  const source = `const { withLock } = await import(${JSON.stringify(LOCK_MODULE)});\n${code}`;
  const proc = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => proc.kill('SIGKILL'));
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => proc.once('exit', (code) => resolve({ code, stderr })));
  const ready = new Promise((resolve, reject) => {
    proc.stdout.once('data', (d) => resolve(String(d).trim()));
    exited.then(({ code }) => reject(new Error(`child exited ${code} before it was ready: ${stderr}`)));
  });
  return { proc, ready, exited };
}

test('a lock held by another process keeps proper-lockfile out, and is free again once released', async (t) => {
  const lockPath = path.join(tempDir(t), 'x.lock');
  const holder = child(
    t,
    `await withLock(${JSON.stringify(lockPath)}, { timeoutMs: 1000, what: 'x' }, () => new Promise((resolve) => {
      process.stdout.write('held\\n'); process.stdin.once('data', resolve);
    }));`,
  );
  assert.equal(await holder.ready, 'held');
  assert.equal(await tryProperLockfile(lockPath), 'ELOCKED');
  holder.proc.stdin.end('release\n');
  assert.equal((await holder.exited).code, 0);
  assert.equal(existsSync(lockPath), false, 'the lock directory is removed on release');
  assert.equal(await tryProperLockfile(lockPath), 'locked');
});

test('a proper-lockfile lock keeps this one out until released: ELOCKED names what is locked', async (t) => {
  const lockPath = path.join(tempDir(t), 'y.lock');
  const release = await lockfile.lock(lockPath, { lockfilePath: lockPath, realpath: false, stale: LOCK_STALE_MS });
  let ran = false;
  await assert.rejects(
    withLock(lockPath, { timeoutMs: 150, what: 'session y' }, async () => (ran = true)),
    (err) =>
      err.code === 'ELOCKED' &&
      err.details.reason === 'timeout' &&
      /session y is locked by another process; gave up after 150 ms/.test(err.message),
  );
  assert.equal(ran, false);
  await release();
  assert.equal(await withLock(lockPath, { timeoutMs: 150, what: 'session y' }, async () => 'ran'), 'ran');
});

test(
  "a dead holder's lock (older than the stale time, or dated " +
    'in the future by a clock stepped back) is taken over at once',
  async (t) => {
    for (const offset of [-LOCK_STALE_MS - 3000, 3_600_000]) {
      const lockPath = path.join(tempDir(t), 'dead.lock');
      mkdirSync(lockPath);
      const dated = new Date(Date.now() + offset);
      utimesSync(lockPath, dated, dated);
      const result = await withLock(lockPath, { timeoutMs: 50, what: 'dead' }, async () => statSync(lockPath).mtimeMs);
      assert.ok(Math.abs(result - Date.now()) < LOCK_STALE_MS, `the lock was made anew (offset ${offset})`);
      assert.equal(existsSync(lockPath), false);
    }
  },
);

test(
  'a lock held past the stale time is kept fresh by its holder, so nobody takes it over',
  { timeout: 20_000 },
  async (t) => {
    const lockPath = path.join(tempDir(t), 'long.lock');
    const holdMs = LOCK_STALE_MS + 1500;
    const holder = child(
      t,
      `await withLock(${JSON.stringify(lockPath)}, { timeoutMs: 1000, what: 'x' }, async () => {
      process.stdout.write('held\\n');
      await new Promise((resolve) => setTimeout(resolve, ${holdMs}));
    });`,
    );
    assert.equal(await holder.ready, 'held');
    const heldSince = Date.now();
    // Try while the holder still holds it, after more than the stale time: the holder has touched it.
    const attempts = [];
    while (Date.now() - heldSince < holdMs - 700) {
      attempts.push(await tryProperLockfile(lockPath));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.ok(attempts.length >= 5, `tried ${attempts.length} times`);
    assert.deepEqual([...new Set(attempts)], ['ELOCKED']);
    assert.ok(Date.now() - statSync(lockPath).mtimeMs < LOCK_STALE_MS, 'the mtime was refreshed');
    assert.equal((await holder.exited).code, 0);
  },
);

test(
  'a holder whose steps each block for most of a second (a slow disk) keeps its lock from check to check',
  { timeout: 20_000 },
  async (t) => {
    const lockPath = path.join(tempDir(t), 'slow.lock');
    // Each step blocks the thread like a synchronous fsync on a slow disk: no timer can refresh the lock
    // meanwhile (nor in the hooks, whose file calls are synchronous), only the checks between the steps.
    const slowStep = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 0.45 * LOCK_STALE_MS);
    let steps = 0;
    await withLock(lockPath, { timeoutMs: 1000, what: 'session slow' }, async (check) => {
      for (let i = 0; i < 4; i++) {
        slowStep();
        check();
        steps++;
      }
    });
    assert.equal(steps, 4, 'no check said the lock was lost');
    assert.equal(existsSync(lockPath), false, 'released');
  },
);

test(
  'holding many session locks: check(id) looks at that lock, check() at all, and both keep every lock fresh',
  { timeout: 20_000 },
  async (t) => {
    const dir = tempDir(t);
    const ids = Array.from({ length: 200 }, (_, i) => `s${String(i).padStart(3, '0')}`);
    const lockOf = (id) => path.join(dir, '.locks', `${id}.lock`);
    await withSessionLocks(dir, ids, 2000, async (check) => {
      assert.equal(readdirSync(path.join(dir, '.locks')).length, 200);
      // Steps that each block (no timer can run) for twice the stale time in all, one session each:
      // the other 199 locks are kept fresh by the checks alone, so nobody may take them over.
      const until = Date.now() + 2 * LOCK_STALE_MS;
      for (let i = 0; Date.now() < until; i++) {
        block(LOCK_STALE_MS / 10);
        check(ids[i % 10]);
      }
      // Looked at before anything is awaited: a refresh timer could not have helped.
      for (const id of ['s050', 's199'])
        assert.equal(isStaleLockTime(statSync(lockOf(id)).mtimeMs), false, `${id} stayed fresh`);
      // Another process took s107's lock over (removed it, made its own).
      rmdirSync(lockOf('s107'));
      mkdirSync(lockOf('s107'));
      const theirs = new Date(Date.now() + 5000);
      utimesSync(lockOf('s107'), theirs, theirs);
      check('s003');
      const takenOver = (err) =>
        err.code === 'ELOCKED' && err.details.reason === 'taken-over' && err.message.includes('session s107');
      assert.throws(() => check(), takenOver);
      assert.throws(() => check('s107'), takenOver);
      check('s003');
    });
    assert.deepEqual(
      readdirSync(path.join(dir, '.locks')),
      ['s107.lock'],
      "every lock released but the other process's",
    );
  },
);

test(
  'holding many session locks: a signal aborted while they are taken stops the taking there; ' +
    'the step never runs and every lock taken is let go of',
  { timeout: 20_000 },
  async (t) => {
    const dir = tempDir(t);
    const ids = Array.from({ length: 2000 }, (_, i) => `s${String(i).padStart(4, '0')}`);
    const stop = new AbortController();
    let calls = 0;
    let takenAtAbort;
    // Called every 64 locks: Ctrl-C comes once about 190 are taken.
    const companion = () => {
      if (++calls !== 3) return;
      takenAtAbort = readdirSync(path.join(dir, '.locks')).length;
      stop.abort();
    };
    let ran = false;
    await assert.rejects(
      withSessionLocks(dir, ids, 10_000, async () => (ran = true), stop.signal, companion),
      (err) => {
        assert.equal(err.code, 'EINTERRUPTED');
        assert.deepEqual(err.details, { done: 0, total: 2000 });
        return true;
      },
    );
    assert.ok(takenAtAbort > 100 && takenAtAbort < 200, `${takenAtAbort} taken when aborted`);
    assert.equal(ran, false, 'the step ran after the signal');
    assert.deepEqual(readdirSync(path.join(dir, '.locks')), [], 'every lock taken is let go of');
    // Aborted before the call: it stops after the first lock.
    const before = new AbortController();
    before.abort();
    let companionCalls = 0;
    await assert.rejects(
      withSessionLocks(
        dir,
        ids,
        10_000,
        async () => (ran = true),
        before.signal,
        () => companionCalls++,
      ),
      { code: 'EINTERRUPTED' },
    );
    assert.equal(ran, false);
    assert.equal(companionCalls, 0, 'over 64 locks were taken');
    assert.deepEqual(readdirSync(path.join(dir, '.locks')), []);
  },
);

test(
  'holding many session locks while a step awaits past the stale time: all stay fresh, nobody takes one over',
  { timeout: 20_000 },
  async (t) => {
    const dir = tempDir(t);
    const ids = Array.from({ length: 100 }, (_, i) => `s${String(i).padStart(3, '0')}`);
    const lockOf = (id) => path.join(dir, '.locks', `${id}.lock`);
    await withSessionLocks(dir, ids, 2000, async (check) => {
      const since = Date.now();
      const attempts = [];
      for (let i = 0; Date.now() - since < LOCK_STALE_MS + 1000; i++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        attempts.push(await tryProperLockfile(lockOf(ids[(i * 37) % ids.length])));
      }
      assert.ok(attempts.length >= 10, `tried ${attempts.length} times`);
      assert.deepEqual([...new Set(attempts)], ['ELOCKED']);
      for (const id of ids) assert.equal(isStaleLockTime(statSync(lockOf(id)).mtimeMs), false, `${id} stayed fresh`);
      check();
    });
    assert.deepEqual(readdirSync(path.join(dir, '.locks')), [], 'every lock released');
  },
);

test(
  'holding many session locks: a stall past the trusted time ' +
    'fails the next check of any session, and no stale lock is left',
  { timeout: 20_000 },
  async (t) => {
    const dir = tempDir(t);
    const ids = Array.from({ length: 20 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    await assert.rejects(
      withSessionLocks(dir, ids, 2000, async (check) => {
        check('s05');
        block(LOCK_STALE_MS);
        check('s05');
      }),
      (err) => err.code === 'ELOCKED' && err.details.reason === 'stale' && err.message.includes('session s00'),
    );
    // Nobody took them over meanwhile: each is removed (through the takeover guard), not left stale.
    assert.deepEqual(readdirSync(path.join(dir, '.locks')), []);
  },
);

test(
  'holding many session locks: a synchronous stretch past the stale time that calls keepLocksFresh ' +
    'between its steps keeps every lock fresh, as another process sees them',
  { timeout: 20_000 },
  async (t) => {
    const dir = tempDir(t);
    const ids = Array.from({ length: 20 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    await withSessionLocks(dir, ids, 2000, async (check) => {
      check('s05');
      // Steps of 20 ms (a file creation each on a loaded disk), 1.5 stale times in all, no timer between.
      const end = Date.now() + LOCK_STALE_MS * 1.5;
      while (Date.now() < end) {
        block(20);
        keepLocksFresh();
      }
      for (const id of ids) {
        const mtimeMs = statSync(path.join(dir, '.locks', `${id}.lock`)).mtimeMs;
        assert.equal(isStaleLockTime(mtimeMs), false, `${id} is not stale`);
      }
      check('s05');
      check();
    });
    assert.deepEqual(readdirSync(path.join(dir, '.locks')), []);
  },
);

test('a lock taken over meanwhile fails the check before a commit, and the new holder keeps it', async (t) => {
  const lockPath = path.join(tempDir(t), 'taken.lock');
  let committed = false;
  await assert.rejects(
    withLock(lockPath, { timeoutMs: 100, what: 'session z' }, async (check) => {
      // Another process decided it was stale: removed it and made its own.
      rmdirSync(lockPath);
      mkdirSync(lockPath);
      const theirs = new Date(Date.now() + 5000);
      utimesSync(lockPath, theirs, theirs);
      check();
      committed = true;
    }),
    (err) => err.code === 'ELOCKED' && err.details.reason === 'taken-over' && err.message.includes('session z'),
  );
  assert.equal(committed, false);
  assert.equal(existsSync(lockPath), true, "the other process's lock is left alone");
});

test(
  'a process that exits while holding a lock removes it; ' + 'one killed with SIGKILL leaves it to go stale',
  async (t) => {
    const dir = tempDir(t);
    const exiting = path.join(dir, 'exit.lock');
    const early = child(
      t,
      `await withLock(${JSON.stringify(exiting)}, { timeoutMs: 1000, what: 'x' }, async () => {
      process.stdout.write('held\\n'); process.exit(3);
    });`,
    );
    await early.ready;
    assert.equal((await early.exited).code, 3);
    assert.equal(existsSync(exiting), false);

    const killed = path.join(dir, 'killed.lock');
    const victim = child(
      t,
      `await withLock(${JSON.stringify(killed)}, { timeoutMs: 1000, what: 'x' }, () => new Promise(() => {
      process.stdout.write('held\\n'); setInterval(() => {}, 1000);
    }));`,
    );
    await victim.ready;
    victim.proc.kill('SIGKILL');
    await victim.exited;
    assert.equal(existsSync(killed), true);
    assert.equal(await tryProperLockfile(killed), 'ELOCKED', 'fresh until the stale time passes');
  },
);

test('a lock whose directory cannot be made is an error naming what was being locked', async (t) => {
  const lockPath = path.join(tempDir(t), 'missing-parent', 'x.lock');
  await assert.rejects(
    withLock(lockPath, { timeoutMs: 100, what: 'session q' }, async () => 'ran'),
    (err) => err.code !== 'ELOCKED' && /locking session q/.test(err.message),
  );
});

test(
  'a holder stalled past the stale time leaves the new holder’s lock alone when it lets go',
  { timeout: 20_000 },
  async (t) => {
    const lockPath = path.join(tempDir(t), 'stall.lock');
    // A takes the lock, blocks its event loop (no refresh) past the stale time, and returns without a check.
    const stalled = child(
      t,
      `await withLock(${JSON.stringify(lockPath)}, { timeoutMs: 1000, what: 'x' }, async () => {
      process.stdout.write('held\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${LOCK_STALE_MS + 1500});
    });`,
    );
    assert.equal(await stalled.ready, 'held');
    // B waits for the lock, takes it over once stale, and holds it until told to let go.
    const taker = child(
      t,
      `await withLock(${JSON.stringify(lockPath)}, { timeoutMs: 8000, what: 'x' }, () => new Promise((resolve) => {
      process.stdout.write('took\\n'); process.stdin.once('data', resolve);
    }));`,
    );
    assert.equal(await taker.ready, 'took');
    assert.equal((await stalled.exited).code, 0);
    assert.equal(existsSync(lockPath), true, 'B’s lock is still there after A let go');
    assert.equal(await tryProperLockfile(lockPath), 'ELOCKED');
    taker.proc.stdin.end('go\n');
    assert.equal((await taker.exited).code, 0);
    assert.equal(existsSync(lockPath), false);
  },
);

test(
  'many processes taking over one dead holder’s lock at once: each gets it in turn, none loses it',
  { timeout: 60_000 },
  async (t) => {
    for (let round = 0; round < 3; round++) {
      const dir = tempDir(t);
      const lockPath = path.join(dir, 'dead.lock');
      const counter = path.join(dir, 'counter');
      writeFileSync(counter, '0');
      mkdirSync(lockPath);
      const past = new Date(Date.now() - 10_000);
      utimesSync(lockPath, past, past);
      // All start at the same instant (each thread blocked until then), so their takeovers collide.
      const start = Date.now() + 1500;
      const workers = Array.from({ length: 8 }, () =>
        child(
          t,
          `const fs = await import('node:fs');
        process.stdout.write('ready\\n');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.max(0, ${start} - Date.now()));
        await withLock(${JSON.stringify(lockPath)}, { timeoutMs: 10000, what: 'counter' }, async (check) => {
          const n = Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8'));
          await new Promise((resolve) => setTimeout(resolve, 5));
          check();
          fs.writeFileSync(${JSON.stringify(counter)}, String(n + 1));
        });`,
        ),
      );
      const results = await Promise.all(workers.map((w) => w.exited));
      assert.deepEqual(
        results.map((r) => r.code),
        Array(8).fill(0),
        results.map((r) => r.stderr).join('\n'),
      );
      assert.equal(readFileSync(counter, 'utf8'), '8');
      assert.equal(existsSync(lockPath), false);
      assert.deepEqual(
        readdirSync(dir).filter((f) => f.endsWith('.takeover')),
        [],
      );
    }
  },
);
