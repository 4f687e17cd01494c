import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';

/** Export bundles are files the user names, outside the store; written whole or not at all. */
export async function writeBundleFile(file: string, text: string): Promise<void> {
  await writeFileAtomic(path.resolve(file), text).catch((err) => {
    throw toSessionError(err, `writing ${file}`);
  });
}

export async function readBundleFile(file: string): Promise<string> {
  try {
    return await readFile(path.resolve(file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionError('ENOTFOUND', `no bundle file ${file}`, { details: { file } });
    throw toSessionError(err, `reading ${file}`);
  }
}
