// Claude Code's settings files (`~/.claude/settings.json`, `<project>/.claude/settings.json`) on disk:
// where they are, reading them, and replacing one with a backup of the old content beside it.
import { constants } from 'node:fs';
import { copyFile, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { findProjectDir } from '../store/project.js';
import { readOptional, replaceTextFile } from './replace-file.js';
import { parseSettingsText, type SettingsFile } from './settings-text.js';

type Env = Record<string, string | undefined>;

export function homeDir(env: Env): string {
  return resolve(env.HOME || env.USERPROFILE || homedir());
}

/** `~/.claude/settings.json`, HOME taken from `env`. */
export function userSettingsPath(env: Env): string {
  return join(homeDir(env), '.claude', 'settings.json');
}

/**
 * The project to install into: as the store finds it (`CLAUDE_PROJECT_DIR`, else the nearest
 * ancestor with `.claude/`, where `~/.claude/`, the user's settings, marks no project).
 */
export function installProjectDir({ cwd, env }: { cwd: string; env: Env }): string {
  return findProjectDir({ cwd, env });
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

export function projectSettingsPath(projectDir: string): string {
  return join(projectDir, '.claude', 'settings.json');
}

/** Reads and parses a settings file; a missing file is a value, anything but a JSON object is EINVALID. */
export async function readSettingsFile(file: string): Promise<SettingsFile> {
  return parseSettingsText(file, await readOptional(file));
}

/**
 * Replaces the file read as `before` with `text`: a backup of the old content next to it first
 * (`settings.json.bak-<UTC time>`), then the new content (see replaceTextFile). Returns the backup path.
 */
export async function writeSettingsFile(before: SettingsFile, text: string, now: number): Promise<string | null> {
  return replaceTextFile(before.file, before.text, text, () =>
    before.text === undefined ? Promise.resolve(null) : backUp(before.file, now),
  );
}

async function backUp(file: string, now: number): Promise<string> {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('.', '');
  for (let n = 1; ; n++) {
    const backup = `${file}.bak-${stamp}${n === 1 ? '' : `-${n}`}`;
    try {
      await copyFile(file, backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 100) throw err;
    }
  }
}
