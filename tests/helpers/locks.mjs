// A lock held by another process, for tests of what waits for it, gives up on it or takes it over.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanEnv, DIST, ROOT } from './run.mjs';

const LOCK_MODULE = pathToFileURL(path.join(DIST, 'tools', 'store', 'lock.js')).href;

const TAKE = {
  // The store's own lock, kept fresh by its holder for as long as it holds it.
  store: (lockPath) => `
    const { withLock } = await import(${JSON.stringify(LOCK_MODULE)});
    await withLock(${JSON.stringify(lockPath)}, { timeoutMs: 5000, what: 'test' }, () => new Promise((resolve) => {
      process.stdout.write('held\\n');
      process.stdin.once('data', resolve);
    }));`,
  // proper-lockfile's, as another tool speaking the same on-disk protocol would hold it (2 s stale).
  'proper-lockfile': (lockPath) => `
    const { createRequire } = await import('node:module');
    const lockfile = createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))})('proper-lockfile');
    const lockPath = ${JSON.stringify(lockPath)};
    const release = await lockfile.lock(lockPath, { lockfilePath: lockPath, realpath: false, stale: 2000 });
    process.stdout.write('held\\n');
    process.stdin.once('data', () => release().then(() => process.exit(0)));`,
};

/**
 * Holds the lock directory `lockPath` from another process (`by`: 'store' or 'proper-lockfile') and
 * resolves once it is held: `release()` lets go of it, `kill()` ends the holder with SIGKILL and
 * leaves the lock behind to go stale. The holder is killed when the test ends.
 */
export async function holdLock(t, lockPath, { by = 'store' } = {}) {
  mkdirSync(path.dirname(lockPath), { recursive: true });
  const child = spawn(process.execPath, ['--input-type=module', '-e', TAKE[by](lockPath)], {
    env: cleanEnv(),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve);
    exited.then((code) => reject(new Error(`the lock holder exited (${code}) before it held ${lockPath}`)));
  });
  return {
    async release() {
      child.stdin.end('release\n');
      await exited;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
