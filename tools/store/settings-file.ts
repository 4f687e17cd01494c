import { constants } from 'node:fs';
import { copyFile, mkdir, readFile, readlink, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { parseJson } from '../json.js';
import { writeFileAtomic } from './atomic.js';
import { findProjectDir } from './project.js';

type Env = Record<string, string | undefined>;

/** A Claude Code settings file as read: `settings` undefined when there is no file. */
export interface SettingsFile {
  file: string;
  text: string | undefined;
  settings: Record<string, unknown> | undefined;
  /** The file's own layout, kept when it is rewritten: indentation, line ending, byte-order mark. */
  indent: string;
  eol: string;
  bom: boolean;
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
 * ancestor with `.claude/`, where `~/.claude/`, the user's settings, marks no project).
 */
export function installProjectDir({ cwd, env }: { cwd: string; env: Env }): string {
  return findProjectDir({ cwd, env });
}

/** Whether two paths are one directory, symlinks resolved (compared as given when one cannot be resolved). */
export async function sameDirectory(a: string, b: string): Promise<boolean> {
  const real = (dir: string) => realpath(dir).catch(() => path.resolve(dir));
  return (await real(a)) === (await real(b));
}

export function isDirectory(dir: string): Promise<boolean> {
  return stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

export function projectSettingsPath(projectDir: string): string {
  return path.join(projectDir, '.claude', 'settings.json');
}

/** Reads and parses a settings file; a missing file is a value, anything but a JSON object is EINVALID. */
export async function readSettingsFile(file: string): Promise<SettingsFile> {
  const text = await readOptional(file);
  if (text === undefined) return { file, text, settings: undefined, indent: '  ', eol: '\n', bom: false };
  const bom = text.startsWith('\uFEFF');
  const json = bom ? text.slice(1) : text;
  let settings: unknown;
  try {
    settings = parseJson(json);
  } catch (err) {
    throw new SessionError(
      'EINVALID',
      `${file} is not valid JSON (${(err as Error).message}); refusing to rewrite it`,
      { cause: err, details: { file } },
    );
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new SessionError('EINVALID', `${file} does not hold a JSON object; refusing to rewrite it`, {
      details: { file },
    });
  }
  return {
    file,
    text,
    settings: settings as Record<string, unknown>,
    indent: /^([ \t]+)"/m.exec(json)?.[1] ?? '  ',
    eol: json.includes('\r\n') ? '\r\n' : '\n',
    bom,
  };
}

/** Refuses a settings file that rewriting would change beyond our edit (see lossyJson). */
export function assertRewritable({ file, text }: SettingsFile): void {
  const lossy = text === undefined ? undefined : lossyJson(text.startsWith('\uFEFF') ? text.slice(1) : text);
  if (lossy)
    throw new SessionError(
      'EINVALID',
      `${file}: ${lossy}, which rewriting the file would change; refusing to rewrite it`,
      { details: { file } },
    );
}

/** The settings as the file's text, in the layout of the file they were read from. */
export function formatSettings(
  settings: unknown,
  { indent, eol, bom }: Pick<SettingsFile, 'indent' | 'eol' | 'bom'>,
): string {
  // JSON.stringify escapes line breaks inside strings: every "\n" it returns is a line ending.
  return `${bom ? '\uFEFF' : ''}${JSON.stringify(settings, null, indent).replace(/\n/g, eol)}${eol}`;
}

/**
 * What JSON.parse followed by JSON.stringify would not give back, in valid JSON text: a key twice in
 * one object (only the last is kept), a number that a double cannot hold (12345678901234567890, 1e400).
 * Undefined when the round trip keeps every value (`1.50` becoming `1.5` is the same value).
 */
export function lossyJson(json: string): string | undefined {
  const objects: (Set<string> | null)[] = [];
  let expectKey = false;
  for (const [token] of json.matchAll(/"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|[{}[\],]/g)) {
    const c = token[0];
    if (c === '{' || c === '[') objects.push(c === '{' ? new Set() : null);
    else if (c === '}' || c === ']') objects.pop();
    else if (c === '"' && expectKey) {
      const keys = objects.at(-1)!;
      const key = JSON.parse(token) as string;
      if (keys.has(key)) return `the key ${token} appears twice in one object`;
      keys.add(key);
    } else if (c !== '"' && c !== ',' && canonicalNumber(token) !== canonicalNumber(String(Number(token)))) {
      return `the number ${token} cannot be kept exactly`;
    }
    expectKey = (c === '{' || c === ',') && objects.at(-1) instanceof Set;
  }
  return undefined;
}

/** A decimal number as `<sign><digits>e<exponent>`, zeros trimmed; undefined for Infinity and NaN. */
function canonicalNumber(text: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  const digits = `${m[2]}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  return `${m[1]}${significant}e${Number(m[4] ?? 0) - fraction.length + digits.length - significant.length}`;
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

/**
 * Replaces a text file read as `oldText` (undefined: there was none) with `text`, atomically (temp
 * file, fsync, rename), following a symlink (even one whose target does not exist yet) and keeping
 * the file's mode. Refuses (checkReplaceable) a read-only file, and a file that changed since it was
 * read. `prepare` runs once those checks pass, right before the write (a backup); its result is returned.
 */
export async function replaceTextFile<T>(
  file: string,
  oldText: string | undefined,
  text: string,
  prepare: () => Promise<T>,
): Promise<T> {
  const { target, mode } = await checkReplaceable(file, oldText);
  try {
    await mkdir(path.dirname(target), { recursive: true });
    const prepared = await prepare();
    await writeFileAtomic(target, text, mode === undefined ? {} : { mode, exactMode: true });
    return prepared;
  } catch (err) {
    throw toSessionError(err, `cannot write ${file}`);
  }
}

/**
 * Whether the file read as `oldText` may be replaced: unchanged since it was read, and not read-only.
 * Returns where the write goes (the end of its symlinks) and the mode to keep (none for a new file).
 */
export async function checkReplaceable(
  file: string,
  oldText: string | undefined,
): Promise<{ target: string; mode: number | undefined }> {
  try {
    if ((await readOptional(file)) !== oldText) {
      throw new SessionError(
        'EIO',
        `${file} changed while it was being edited; nothing was written, run the command again`,
        { details: { file } },
      );
    }
    const target = await writeTarget(file);
    const mode = oldText === undefined ? undefined : (await stat(target)).mode & 0o777;
    if (mode !== undefined && (mode & 0o200) === 0) {
      throw new SessionError(
        'EINVALID',
        `${file} is read-only; refusing to change it (make it writable, or edit it by hand)`,
        { details: { file } },
      );
    }
    return { target, mode };
  } catch (err) {
    throw toSessionError(err, `cannot write ${file}`);
  }
}

/** Where writing `file` goes: the file, or the end of its chain of symlinks (which may not exist yet). */
export async function writeTarget(file: string): Promise<string> {
  let target = path.resolve(file);
  for (let hops = 0; hops < 40; hops++) {
    const link = await readlink(target).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EINVAL' || err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (link === undefined) return target;
    target = path.resolve(path.dirname(target), link);
  }
  throw new SessionError('EINVALID', `${file}: too many levels of symbolic links`, { details: { file } });
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
