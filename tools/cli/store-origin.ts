import { resolve } from 'node:path';
import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import type { Sessions } from '../sessions.js';
import { locateStore, storeExists, type ProjectLocation, type StoreLocation } from '../store/project.js';
import type { Argv, Io } from './command-context.js';

/** Why this directory is the project, in words, seen from the working directory `cwd`. */
export function whyProject({ dir, reason }: ProjectLocation, cwd: string): string {
  switch (reason) {
    case 'CLAUDE_PROJECT_DIR':
      return 'from CLAUDE_PROJECT_DIR';
    case 'claude-dir':
      return dir === resolve(cwd)
        ? 'the nearest directory with .claude/'
        : `nearest directory with .claude/ above ${cwd}`;
    case 'git':
      return `git work tree root of ${cwd}`;
    case 'claude-worktree':
      return `${cwd} is in a worktree Claude Code made under ${dir}/.claude/worktrees/`;
    case 'cwd':
      return 'the current directory: no .claude/ or git work tree above it';
  }
}

/** Why this directory is the store, in words. */
export function whyStore(store: StoreLocation, cwd: string, { short = false } = {}): string {
  if (store.reason !== 'project') return `from ${store.reason}`;
  if (short) return 'the default under the project';
  return `the default under the project ${store.project!.dir} (${whyProject(store.project!, cwd)})`;
}

/**
 * Opens the store for a command that reads it, or throws ENOTFOUND when it does not exist: a store
 * that is not there is no empty store (a wrong --dir, or a project where no delegation happened yet).
 */
export function openExisting(argv: Argv<object>, id?: string): Sessions {
  // A bad id is a usage error (exit 2) wherever the store is.
  if (id !== undefined) assertValidId(id);
  const sessions = argv.ctx.open(argv);
  if (!storeExists(sessions.store.dir)) throw missingStore(argv.ctx.io, argv.dir);
  return sessions;
}

export function missingStore(io: Io, dir: string | undefined): SessionError {
  const store = locateStore({ dir, cwd: io.cwd, env: io.env });
  return new SessionError(
    'ENOTFOUND',
    `no sessions have been recorded here yet: the store ${store.dir} does not exist (${whyStore(store, io.cwd)})`,
    { details: { store: store.dir, reason: store.reason } },
  );
}
