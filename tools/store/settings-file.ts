import { constants } from 'node:fs';
import { copyFile, mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { writeFileAtomic } from './atomic.js';
import { findProjectDir } from './project.js';

type Env = Record<string, string | undefined>;

/** A Claude Code settings file as read: `settings` undefined when there is no file. */
export interface SettingsFile {
  file: string;
  text: string | undefined;
  settings: Record<string, unknown> | undefined;
  /** The file's own indentation, kept when it is rewritten. */
  indent: string;
}

export function homeDir(env: Env): string {
  return path.resolve(env.HOME || env.USERPROFILE || homedir());
}

/** `~/.claude/settings.json`, HOME taken from `env`. */
export function userSettingsPath(env: Env): string {
  return path.join(homeDir(env), '.claude', 'settings.json');
}

/**
 * The project to install into: as the store finds it (`CLAUDE_PROJECT_DIR`, else the nearest
 * ancestor with `.claude/`), except that `~/.claude/` (the user's settings) never marks a project.
 */
export function installProjectDir({ cwd, env }: { cwd: string; env: Env }): string {
  const found = findProjectDir({ cwd, env });
  const home = homeDir(env);
  const start = path.resolve(cwd);
  if (!env.CLAUDE_PROJECT_DIR && found === home && start !== home) return start;
  return found;
}

export function projectSettingsPath(projectDir: string): string {
  return path.join(projectDir, '.claude', 'settings.json');
}

/** Reads and parses a settings file; a missing file is a value, anything but a JSON object is EINVALID. */
export async function readSettingsFile(file: string): Promise<SettingsFile> {
  const text = await readOptional(file);
  if (text === undefined) return { file, text, settings: undefined, indent: '  ' };
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (err) {
    throw new SessionError('EINVALID', `${file} is not valid JSON (${(err as Error).message}); refusing to rewrite it`, { cause: err, details: { file } });
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new SessionError('EINVALID', `${file} does not hold a JSON object; refusing to rewrite it`, { details: { file } });
  }
  return { file, text, settings: settings as Record<string, unknown>, indent: /^([ \t]+)"/m.exec(text)?.[1] ?? '  ' };
}

export function formatSettings(settings: unknown, indent: string): string {
  return `${JSON.stringify(settings, null, indent)}\n`;
}

/**
 * Replaces the file read as `before` with `text`: a backup of the old content next to it first
 * (`settings.json.bak-<UTC time>`), then an atomic write that keeps the file's mode and follows a
 * symlink to its target. Refuses when the file changed since it was read. Returns the backup path.
 */
export async function writeSettingsFile(before: SettingsFile, text: string, now: number): Promise<string | null> {
  const { file } = before;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    if ((await readOptional(file)) !== before.text) {
      throw new SessionError('EIO', `${file} changed while it was being edited; nothing was written, run the command again`, { details: { file } });
    }
    const backup = before.text === undefined ? null : await backUp(file, now);
    const target = before.text === undefined ? file : await realpath(file);
    const mode = before.text === undefined ? 0o644 : (await stat(target)).mode & 0o777;
    await writeFileAtomic(target, text, { mode });
    return backup;
  } catch (err) {
    throw toSessionError(err, `cannot write ${file}`);
  }
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

/** A text file's content, or undefined when it does not exist. */
export async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw toSessionError(err, `cannot read ${file}`);
  }
}
