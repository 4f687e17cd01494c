/**
 * Reads the state of a git work tree through the `git` executable (an external process, kept apart
 * from the store). Used by delete to refuse destroying the only pointer to unsaved work.
 */
import { basename, dirname } from 'node:path';

export interface WorkState {
  dir: string;
  /** `dir` is the root of its work tree, not a folder inside one. */
  isRoot: boolean;
  head: string | null;
  branch: string | null;
  upstream: string | null;
  /** `git status --porcelain` lines of tracked files with changes (staged or not). */
  changed: string[];
  untracked: string[];
  /** Commits not on the upstream (or, without one, on no remote; 0 when there is no remote at all). */
  unpushed: number;
}

const TIMEOUT_MS = 15_000;

/** The work tree's state, or undefined when `dir` is not inside a git work tree (or git is missing). */
export async function inspectWork(dir: string): Promise<WorkState | undefined> {
  const [inside, prefix] = (await git(dir, ['rev-parse', '--is-inside-work-tree', '--show-prefix']))
    ?.toString()
    .split('\n') ?? [undefined, undefined];
  if (inside?.trim() !== 'true') return undefined;
  const status = (await git(dir, ['status', '--porcelain=v1', '-z', '--untracked-files=all'])) ?? Buffer.alloc(0);
  const lines = status.toString('utf8').split('\0').filter(Boolean);
  const untracked = lines.filter((l) => l.startsWith('?? ')).map((l) => l.slice(3));
  const changed = lines.filter((l) => !l.startsWith('?? ') && /^[ MADRCUT?!]{2} /.test(l));
  const head = text(await git(dir, ['rev-parse', '--verify', '-q', 'HEAD']));
  const branch = text(await git(dir, ['symbolic-ref', '--short', '-q', 'HEAD']));
  const upstream = text(await git(dir, ['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{u}']));
  const unpushed = head ? await countUnpushed(dir, upstream) : 0;
  return { dir, isRoot: !prefix?.trim(), head, branch, upstream, changed, untracked, unpushed };
}

export function hasUnsavedWork(state: WorkState): boolean {
  return state.changed.length > 0 || state.untracked.length > 0 || state.unpushed > 0;
}

/** `git diff HEAD --binary`: every uncommitted change to tracked files, staged or not. */
export async function capturePatch(state: WorkState): Promise<Buffer> {
  if (!state.head) return (await git(state.dir, ['diff', '--cached', '--binary'])) ?? Buffer.alloc(0);
  return (await git(state.dir, ['diff', 'HEAD', '--binary'])) ?? Buffer.alloc(0);
}

async function countUnpushed(dir: string, upstream: string | null): Promise<number> {
  if (upstream) return Number(text(await git(dir, ['rev-list', '--count', '@{u}..HEAD'])) ?? 0);
  const remotes = text(await git(dir, ['remote']));
  if (!remotes) return 0;
  return Number(text(await git(dir, ['rev-list', '--count', 'HEAD', '--not', '--remotes'])) ?? 0);
}

/** Whether git tracks `file` (in the index of the work tree around it); false outside git or without git. */
export async function isTracked(file: string): Promise<boolean> {
  return (await git(dirname(file), ['ls-files', '--error-unmatch', '--', basename(file)])) !== undefined;
}

function text(out: Buffer | undefined): string | null {
  const value = out?.toString('utf8').trim();
  return value ? value : null;
}

/** stdout of a successful git command, undefined on any failure (not a repo, no upstream, no git). */
async function git(dir: string, args: string[]): Promise<Buffer | undefined> {
  // Loaded on first use: child_process (with net and dgram) costs every hook and command ~3 ms of start-up otherwise.
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-C', dir, ...args],
      {
        encoding: 'buffer',
        timeout: TIMEOUT_MS,
        maxBuffer: 256 * 1024 * 1024,
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
      },
      (err, stdout) => resolve(err ? undefined : stdout),
    );
  });
}
