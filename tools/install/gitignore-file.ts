import { join } from 'node:path';
import { unlink } from 'node:fs/promises';
import { toSessionError } from '../errors.js';
import { readOptional, replaceTextFile, writeTarget } from './replace-file.js';

export function gitignorePath(projectDir: string): string {
  return join(projectDir, '.gitignore');
}

/** The project's .gitignore, or undefined when it has none. */
export function readGitignore(file: string): Promise<string | undefined> {
  return readOptional(file);
}

/**
 * Replaces the .gitignore read as `oldText` (undefined: none) with `text`, as a settings file is
 * replaced (through a symlink, mode kept, read-only refused). Returns how to put the old one back.
 */
export async function writeGitignore(
  file: string,
  oldText: string | undefined,
  text: string,
): Promise<() => Promise<void>> {
  await replaceTextFile(file, oldText, text, () => Promise.resolve());
  return async () => {
    try {
      // A .gitignore created through a symlink: the file created goes, the symlink stays.
      if (oldText === undefined) await unlink(await writeTarget(file));
      else await replaceTextFile(file, text, oldText, () => Promise.resolve());
    } catch (err) {
      throw toSessionError(err, `cannot put ${file} back as it was`);
    }
  };
}
