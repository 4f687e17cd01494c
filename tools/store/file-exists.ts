import { statSync } from 'node:fs';

/** Whether a file exists (Claude Code's transcripts live outside the store; they are only checked). */
export function fileExists(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
