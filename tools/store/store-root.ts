/**
 * The store directory itself and its own `.gitignore`. The store sits inside the project
 * (`<project>/.claude/session/`), whatever registered the hooks (a project, user or plugin install,
 * or none: the CLI or the library alone), and its records quote prompts, last messages and
 * transcript paths: `git add -A` must not pick them up. So the store ignores itself, with no edit
 * to the project's own `.gitignore`.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const STORE_IGNORE = '.gitignore';
export const STORE_IGNORE_TEXT = "# agent-session's session store: git ignores all of it\n*\n";

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY;
const REWRITE = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Stores this process has made sure of: the check runs once per process and store. */
const checked = new Set<string>();

/**
 * Makes the store directory when it is missing and writes its `.gitignore` when that is missing
 * (or empty: a write cut short). Every module that creates something in the store calls this
 * first, so the file is there from the moment the store is, and an older store gets it from its
 * next write. Once per process and store; the usual cost is one lstat. Never throws: a store that
 * cannot be written (read-only, say) is reported by the write that follows, and hooks fail open.
 * An existing file is never changed, so a user who wants the store in git edits it.
 */
export function ensureStoreSync(storeDir: string): void {
  if (checked.has(storeDir)) return;
  checked.add(storeDir);
  const file = join(storeDir, STORE_IGNORE);
  try {
    // throwIfNoEntry: the common case (the file is there) builds no exception.
    const info = lstatSync(file, { throwIfNoEntry: false });
    if (info === undefined) {
      mkdirSync(storeDir, { recursive: true });
      writeIgnore(file, CREATE);
    } else if (info.isFile() && info.size === 0) {
      writeIgnore(file, REWRITE);
    }
  } catch {
    // EEXIST: another process wrote it first. Anything else: the caller's own write reports it.
  }
}

function writeIgnore(file: string, flags: number): void {
  const fd = openSync(file, flags, 0o644);
  try {
    // One write of a few bytes at offset 0: two processes writing at once write the same bytes.
    writeSync(fd, STORE_IGNORE_TEXT, 0);
  } finally {
    closeSync(fd);
  }
}
