import { lstatSync, readdirSync, unlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { TEMP_SUFFIX, writeFileAtomic } from '../store/atomic.js';
import { processRuns } from '../store/pid.js';

/** A temp file whose writer is gone is removed after this long; one untouched for STALE_MS whatever its pid. */
const DEAD_WRITER_MS = 60_000;
const STALE_MS = 3_600_000;

/** Export bundles are files the user names, outside the store; written whole or not at all. */
export async function writeBundleFile(file: string, text: string): Promise<void> {
  const target = resolve(file);
  // An export killed mid-write left its temp file beside the bundle, where no sweep of the store looks.
  removeStaleTemps(target, Date.now());
  await writeFileAtomic(target, text).catch((err) => {
    throw toSessionError(err, `writing ${file}`);
  });
}

export async function readBundleFile(file: string): Promise<string> {
  try {
    return await readFile(resolve(file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new SessionError('ENOTFOUND', `no bundle file ${file}`, { details: { file } });
    throw toSessionError(err, `reading ${file}`);
  }
}

/**
 * Removes `<bundle>.<pid>.<n>.<hex>.tmp` files (writeFileAtomic's names for this bundle) of writers
 * that died, or untouched for an hour. Only regular files of exactly that name; best effort.
 */
function removeStaleTemps(target: string, now: number): string[] {
  const base = basename(target);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dirname(target));
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(`${base}.`) || !name.endsWith(TEMP_SUFFIX)) continue;
    const pid = /^\.(\d+)\.\d+\.[0-9a-f]{12}\.tmp$/.exec(name.slice(base.length))?.[1];
    if (pid === undefined || Number(pid) === process.pid) continue;
    const file = join(dirname(target), name);
    try {
      const info = lstatSync(file);
      const age = now - info.mtimeMs;
      if (!info.isFile() || !(age > STALE_MS || (age > DEAD_WRITER_MS && !processRuns(Number(pid))))) continue;
      unlinkSync(file);
      removed.push(file);
    } catch {
      // Gone meanwhile, or not ours to remove: left alone.
    }
  }
  return removed;
}
