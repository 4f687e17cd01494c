import path from 'node:path';
import { toSessionError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';
import { readOptional } from './settings-file.js';

export function gitignorePath(projectDir: string): string {
  return path.join(projectDir, '.gitignore');
}

/** The project's .gitignore, or undefined when it has none. */
export function readGitignore(file: string): Promise<string | undefined> {
  return readOptional(file);
}

export async function writeGitignore(file: string, text: string): Promise<void> {
  await writeFileAtomic(file, text).catch((err) => {
    throw toSessionError(err, `cannot write ${file}`);
  });
}
