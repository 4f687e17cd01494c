import { mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import {
  configError,
  environmentWarnings,
  resolveSettings,
  settingsProblems,
  type ConfigProblem,
  type Settings,
} from '../config.js';
import { SessionError } from '../errors.js';
import { parseJson } from '../json.js';
import { decodeUtf8, readRegularFileSync } from './regular-file.js';
import { builtinModule } from '../builtin.js';

/** A config file is a few settings; a larger one is not read. */
const CONFIG_MAX_BYTES = 1024 * 1024;

interface Locate {
  dir?: string;
  cwd: string;
  env: Record<string, string | undefined>;
}

/** Why a directory is the project: what `status` and `install` print. */
export type ProjectReason = 'CLAUDE_PROJECT_DIR' | 'claude-dir' | 'git' | 'claude-worktree' | 'cwd';

export interface ProjectLocation {
  dir: string;
  reason: ProjectReason;
}

/**
 * The project Claude Code would use: `CLAUDE_PROJECT_DIR`, else the nearest ancestor of cwd with a
 * `.claude/` directory, else the root of the git work tree around cwd, else cwd itself. The search
 * for `.claude/` stops at the work tree's root: a stray `.claude/` above a repository is not its project.
 * A worktree Claude Code made (`<project>/.claude/worktrees/<name>`: a subagent's, whose Bash runs there
 * without CLAUDE_PROJECT_DIR, or `claude -w`) belongs to that project: its sessions are recorded there.
 */
export function locateProject({ cwd, env }: Locate): ProjectLocation {
  if (env.CLAUDE_PROJECT_DIR) return { dir: resolve(env.CLAUDE_PROJECT_DIR), reason: 'CLAUDE_PROJECT_DIR' };
  const start = resolve(cwd);
  // ~/.claude is Claude Code's user settings, not a project: it only counts when we start at home.
  // node:os only when HOME is unset: loading it costs a hook about half a millisecond.
  const home = resolve(env.HOME || builtinModule('node:os').homedir());
  for (let dir = start; ; dir = dirname(dir)) {
    if (isDirectory(join(dir, '.claude')) && (dir === start || !isHome(dir, home)))
      return claudeWorktreeOwner(dir) ?? { dir, reason: 'claude-dir' };
    // A work tree's .git is a directory, or a file in a linked work tree or a submodule.
    if (exists(join(dir, '.git'))) return claudeWorktreeOwner(dir) ?? { dir, reason: 'git' };
    if (dirname(dir) === dir) return { dir: start, reason: 'cwd' };
  }
}

/**
 * The project of a worktree Claude Code made: `dir` is `<X>/.claude/worktrees/<name>`, a linked work tree
 * (its `.git` file names `<common>/worktrees/<n>`) of the repository `X` is a checkout of (`X`'s git
 * directory is `<common>` too: a clone, a linked work tree or a submodule). Up a chain of such worktrees
 * (`claude -w`, then a subagent's worktree inside), the outermost checkout of that repository wins.
 */
function claudeWorktreeOwner(path: string): ProjectLocation | undefined {
  if (claudeWorktreeParent(path) === undefined) return undefined;
  // git names real paths: a project reached through a link is compared by its real path.
  const dir = realPath(path);
  const common = dir === undefined ? undefined : linkedWorktreeCommonDir(dir);
  if (dir === undefined || common === undefined) return undefined;
  let owner: string | undefined;
  for (let at = claudeWorktreeParent(dir); at !== undefined; at = claudeWorktreeParent(at)) {
    if (gitCommonDir(at) === common) owner = at;
  }
  return owner === undefined ? undefined : { dir: owner, reason: 'claude-worktree' };
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** `X` when `dir` is `X/.claude/worktrees/<name>`. */
function claudeWorktreeParent(dir: string): string | undefined {
  const worktrees = dirname(dir);
  const claude = dirname(worktrees);
  return basename(worktrees) === 'worktrees' && basename(claude) === '.claude' ? dirname(claude) : undefined;
}

/** `<common>` when `dir` is a linked work tree: its `.git` file says `gitdir: <common>/worktrees/<n>`. */
function linkedWorktreeCommonDir(dir: string): string | undefined {
  const gitdir = gitdirOf(dir);
  if (gitdir === undefined || basename(dirname(gitdir)) !== 'worktrees') return undefined;
  return realPath(dirname(dirname(gitdir)));
}

/**
 * The git directory shared by every work tree of the repository `dir` is a checkout of: `.git` itself,
 * or where its `.git` file points (a submodule, `--separate-git-dir`), or for a linked work tree the
 * `commondir` it names. Undefined when `dir` is no checkout.
 */
function gitCommonDir(dir: string): string | undefined {
  const own = join(dir, '.git');
  try {
    if (statSync(own).isDirectory()) return realPath(own);
  } catch {
    return undefined;
  }
  const gitdir = gitdirOf(dir);
  if (gitdir === undefined) return undefined;
  let common = gitdir;
  try {
    common = resolve(gitdir, readFileSync(join(gitdir, 'commondir'), 'utf8').trim());
  } catch {
    // No commondir: the git directory is the repository's own (a submodule, --separate-git-dir).
  }
  return realPath(common);
}

/** The path a `.git` file names (`gitdir: <path>`, relative to `dir`), undefined when there is none. */
function gitdirOf(dir: string): string | undefined {
  let text: string;
  try {
    const file = join(dir, '.git');
    if (!statSync(file).isFile()) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const gitdir = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  return gitdir ? resolve(dir, gitdir) : undefined;
}

/** Whether `inner` lies strictly inside directory `outer` (by their paths). */
export function isInside(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

export function findProjectDir(locate: Locate): string {
  return locateProject(locate).dir;
}

/** Whether `dir` is the home directory, also when HOME is a symlink (the working directory never is one). */
function isHome(dir: string, home: string): boolean {
  if (dir === home) return true;
  try {
    return realpathSync(dir) === realpathSync(home);
  } catch {
    return false;
  }
}

/**
 * `--dir` / `dir`, else `AGENT_SESSION_DIR`, else `<project>/.claude/session`. A CLAUDE_PROJECT_DIR
 * naming no directory is refused (EINVALID): a store made there would be one nobody looks at.
 */
export function resolveStoreDir(locate: Locate): string {
  const store = locateStore(locate);
  const project = store.project;
  if (project?.reason === 'CLAUDE_PROJECT_DIR' && !isDirectory(project.dir)) {
    throw new SessionError(
      'EINVALID',
      `CLAUDE_PROJECT_DIR names no directory: ${project.dir} (Claude Code sets it to the project it runs in; ` +
        'unset it, or set it to the project directory)',
      { details: { env: 'CLAUDE_PROJECT_DIR', dir: project.dir } },
    );
  }
  return store.dir;
}

/** `AGENT_SESSION_CONFIG`, else `<project>/.claude/agent-session.json`. */
export function configFilePath(locate: Locate): string {
  if (locate.env.AGENT_SESSION_CONFIG) return resolve(locate.cwd, locate.env.AGENT_SESSION_CONFIG);
  return join(findProjectDir(locate), '.claude', 'agent-session.json');
}

/**
 * The config file's path and parsed content (undefined when the project has none). A file that
 * `AGENT_SESSION_CONFIG` names must exist: a variable pointing nowhere is a mistake, not "no config".
 */
export function loadConfigFile(locate: Locate): { file: string; value: unknown } {
  const file = configFilePath(locate);
  const value = readConfigFile(file);
  if (value === undefined && locate.env.AGENT_SESSION_CONFIG) {
    throw configError({
      message: `AGENT_SESSION_CONFIG names no file: ${file}`,
      file,
      env: 'AGENT_SESSION_CONFIG',
      severity: 'error',
    });
  }
  return { file, value };
}

/** The settings in effect for `locate`: `options` over the environment over the config file (EINVALID if bad). */
export function loadSettings(locate: Locate, options?: Partial<Settings>): Settings {
  const config = loadConfigFile(locate);
  return resolveSettings({ options, env: locate.env, file: config.value, fileName: config.file });
}

/**
 * Everything wrong with the settings `Sessions.open` would resolve for `locate`, without throwing
 * (what `status` and `doctor` report): the config file (named by AGENT_SESSION_CONFIG but missing,
 * unreadable, not JSON), its unknown keys and bad values, bad environment values, and, as warnings,
 * `AGENT_SESSION_*` variables that look misspelt. Empty when the settings are fine.
 */
export function configProblems(locate: Locate, options?: Partial<Settings>): ConfigProblem[] {
  let loaded: { file: string; value: unknown };
  try {
    loaded = loadConfigFile(locate);
  } catch (err) {
    const { message, details } = err as SessionError;
    return [{ ...details, message, severity: 'error' }, ...environmentWarnings(locate.env)];
  }
  const sources = { options, env: locate.env, file: loaded.value, fileName: loaded.file };
  return [...settingsProblems(sources), ...environmentWarnings(locate.env)];
}

/** The parsed config file, or undefined when there is none. A broken file is an error, not ignored. */
export function readConfigFile(file: string): unknown {
  let text: string;
  try {
    // A link is followed (the user may keep it elsewhere), but only to a regular file: a FIFO would hang every hook.
    const data = readRegularFileSync(file, { maxBytes: CONFIG_MAX_BYTES, follow: true });
    if (data === undefined) return undefined;
    text = decodeUtf8(data, file);
  } catch (err) {
    const message = `cannot read config file ${file}: ${(err as Error).message}`;
    throw configError({ message, file, severity: 'error' }, err);
  }
  try {
    return parseJson(text);
  } catch (err) {
    const message = `config file ${file} is not valid JSON: ${(err as Error).message}`;
    throw configError({ message, file, severity: 'error' }, err);
  }
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** A fresh project directory (with `.claude/`) under the system temp dir, for the demo. */
export function makeTempProject(): string {
  const dir = mkdtempSync(join(builtinModule('node:os').tmpdir(), 'agent-session-demo-'));
  mkdirSync(join(dir, '.claude'));
  return dir;
}

/** Where the store is and why: what `status` prints and a read command names when it is missing. */
export interface StoreLocation {
  dir: string;
  reason: '--dir' | 'AGENT_SESSION_DIR' | 'project';
  /** The project the default store is under (reason `project`). */
  project?: ProjectLocation;
}

/** `--dir` / `dir`, else `AGENT_SESSION_DIR`, else `<project>/.claude/session`. */
export function locateStore(locate: Locate): StoreLocation {
  if (locate.dir) return { dir: resolve(locate.cwd, locate.dir), reason: '--dir' };
  if (locate.env.AGENT_SESSION_DIR)
    return { dir: resolve(locate.cwd, locate.env.AGENT_SESSION_DIR), reason: 'AGENT_SESSION_DIR' };
  const project = locateProject(locate);
  return { dir: join(project.dir, '.claude', 'session'), reason: 'project', project };
}

/**
 * Whether anything is at the store's path (the hooks create it at the first delegation). A file
 * there is no missing store: reading it fails, and says why.
 */
export function storeExists(dir: string): boolean {
  return exists(dir);
}
