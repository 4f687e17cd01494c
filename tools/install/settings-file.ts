// Claude Code's settings files (`~/.claude/settings.json`, `<project>/.claude/settings.json` and
// `settings.local.json`) on disk: where they are, reading them, replacing one with a backup of the old
// content in a directory git ignores, and removing one left empty.
import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, realpath, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { toSessionError } from '../errors.js';
import { locateProject, type ProjectLocation } from '../store/project.js';
import { checkReplaceable, readOptional, replaceTextFile } from './replace-file.js';
import { parseSettingsText, type SettingsFile } from './settings-text.js';
import { builtinModule } from '../builtin.js';

type Env = Record<string, string | undefined>;

export function homeDir(env: Env): string {
  return resolve(env.HOME || env.USERPROFILE || builtinModule('node:os').homedir());
}

/** `~/.claude/settings.json`, HOME taken from `env`. */
export function userSettingsPath(env: Env): string {
  return join(homeDir(env), '.claude', 'settings.json');
}

/**
 * The project to install into, and why it is that one: as the store and Claude Code find it
 * (`CLAUDE_PROJECT_DIR`, else the nearest ancestor with `.claude/` inside the git work tree, else the
 * work tree's root, else the current directory).
 */
export function installProject({ cwd, env }: { cwd: string; env: Env }): ProjectLocation {
  return locateProject({ cwd, env });
}

/** Whether two paths are one directory, symlinks resolved (compared as given when one cannot be resolved). */
export async function sameDirectory(a: string, b: string): Promise<boolean> {
  const real = (dir: string) => realpath(dir).catch(() => resolve(dir));
  return (await real(a)) === (await real(b));
}

export function isDirectory(dir: string): Promise<boolean> {
  return stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** `.claude/settings.json` (shared, committed) or `.claude/settings.local.json` (this machine's, not committed). */
export function projectSettingsPath(projectDir: string, local = false): string {
  return join(projectDir, '.claude', local ? 'settings.local.json' : 'settings.json');
}

/** The project's package.json text, or undefined when it has none. */
export function readPackageJson(projectDir: string): Promise<string | undefined> {
  return readOptional(join(projectDir, 'package.json'));
}

/** Reads and parses a settings file; a missing file is a value, anything but a JSON object is EINVALID. */
export async function readSettingsFile(file: string): Promise<SettingsFile> {
  return parseSettingsText(file, await readOptional(file));
}

/**
 * Replaces the file read as `before` with `text`: a backup of the old content first
 * (`.agent-session-backups/settings.json.bak-<UTC time>` beside it), then the new content (see
 * replaceTextFile). Returns the backup path.
 */
export async function writeSettingsFile(before: SettingsFile, text: string, now: number): Promise<string | null> {
  return replaceTextFile(before.file, before.text, text, () =>
    before.text === undefined ? Promise.resolve(null) : backUp(before.file, now),
  );
}

/**
 * The directory of a settings file's backups, ignored by git through its own `.gitignore`: beside it, or
 * for the project's `.mcp.json` in `.claude/` beside it, so that the project's root gains nothing.
 */
export function backupDir(file: string): string {
  const dir = dirname(file);
  return basename(file) === '.mcp.json' ? join(dir, '.claude', BACKUP_DIR) : join(dir, BACKUP_DIR);
}

const BACKUP_DIR = '.agent-session-backups';

async function backUp(file: string, now: number): Promise<string> {
  const dir = backupDir(file);
  await mkdir(dir, { recursive: true });
  // Backups hold the settings as they were (permissions, env values): never something to commit.
  await writeFile(join(dir, '.gitignore'), '*\n', { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('.', '');
  for (let n = 1; ; n++) {
    const backup = join(dir, `${basename(file)}.bak-${stamp}${n === 1 ? '' : `-${n}`}`);
    try {
      await copyFile(file, backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 100) throw err;
    }
  }
}

/**
 * Whether a settings file left holding nothing may be removed instead of rewritten: a regular file,
 * not a symlink (whose target may be kept elsewhere on purpose).
 */
export async function isPlainFile(file: string): Promise<boolean> {
  return lstat(file).then(
    (s) => s.isFile(),
    () => false,
  );
}

/**
 * Removes the settings file read as `before` (checked unchanged and writable first), then its
 * directory when that is left empty. Returns how to put the file back.
 */
export async function removeSettingsFile(before: SettingsFile): Promise<() => Promise<void>> {
  const { file, text } = before;
  const { mode } = await checkReplaceable(file, text);
  try {
    await unlink(file);
  } catch (err) {
    throw toSessionError(err, `cannot remove ${file}`);
  }
  // Only an empty directory goes: anything else in .claude/ (the store, other files) keeps it.
  await rmdir(dirname(file)).catch(() => undefined);
  return async () => {
    try {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text ?? '', { flag: 'wx', mode });
    } catch (err) {
      throw toSessionError(err, `cannot put ${file} back as it was`);
    }
  };
}
