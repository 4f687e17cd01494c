// Keeping `.claude/settings.local.json` (this machine's hook paths) out of git without changing a file
// the team shares: the clone's own exclude file, `<git dir>/info/exclude`, which git reads and never
// commits. Only the two lines written here are ever removed again.
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isTracked } from '../git/work-tree.js';

const MARK = "# agent-session: this machine's Claude Code settings (its hook paths)";

/** What install or uninstall did to the exclude file. */
export interface ExcludeChange {
  file: string;
  /** The line, relative to the work tree's root (`/.claude/settings.local.json`). */
  pattern: string;
  changed: boolean;
  /** Git already tracks the file: no exclude line hides it (install then warns). */
  tracked: boolean;
}

/** Adds the settings file to its clone's exclude file, unless a line there already names it. */
export async function excludeFromGit(settingsFile: string, dryRun: boolean): Promise<ExcludeChange | null> {
  const where = await excludeFileOf(dirname(settingsFile));
  if (!where) return null;
  const pattern = patternFor(where.root, settingsFile);
  if (await isTracked(settingsFile)) return { file: where.file, pattern, changed: false, tracked: true };
  const text = (await readOr(where.file)) ?? '';
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  const named = [pattern, pattern.slice(1), `**${pattern}`, '.claude/settings.local.json', 'settings.local.json'];
  if (lines.some((line) => named.includes(line))) return { file: where.file, pattern, changed: false, tracked: false };
  if (!dryRun) {
    const separator = text === '' || text.endsWith('\n') ? '' : '\n';
    await writeWhole(where.file, `${text}${separator}${MARK}\n${pattern}\n`);
  }
  return { file: where.file, pattern, changed: true, tracked: false };
}

/** Removes the two lines `excludeFromGit` wrote for this settings file (anything else stays). */
export async function removeGitExclude(settingsFile: string, dryRun: boolean): Promise<ExcludeChange | null> {
  const where = await excludeFileOf(dirname(settingsFile));
  if (!where) return null;
  const pattern = patternFor(where.root, settingsFile);
  const text = await readOr(where.file);
  const ours = `${MARK}\n${pattern}\n`;
  const kept = { file: where.file, pattern, changed: false, tracked: false };
  if (text === undefined || !text.includes(ours)) return kept;
  // The exclude file is shared by every work tree of the repository: the line stays while another has the file.
  for (const root of await workTreeRoots(where.commonDir)) {
    if (root !== where.root && (await exists(join(root, relative(where.root, settingsFile))))) return kept;
  }
  if (!dryRun) await writeWhole(where.file, text.replace(ours, ''));
  return { ...kept, changed: true };
}

/** The roots of every work tree of the repository whose git directory is `commonDir`. */
async function workTreeRoots(commonDir: string): Promise<string[]> {
  const roots = basename(commonDir) === '.git' ? [dirname(commonDir)] : [];
  const linked = await readdir(join(commonDir, 'worktrees')).catch(() => [] as string[]);
  for (const name of linked) {
    const gitFile = (await readOr(join(commonDir, 'worktrees', name, 'gitdir')))?.trim();
    if (gitFile) roots.push(dirname(resolve(commonDir, 'worktrees', name, gitFile)));
  }
  return roots;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function patternFor(root: string, file: string): string {
  return `/${relative(root, file).split(sep).join('/')}`;
}

/**
 * The work tree around `dir` (the nearest ancestor with `.git`) and its exclude file. A `.git` file
 * (a linked work tree or a submodule) names the git directory; a linked work tree's `commondir`
 * names the repository's, which holds `info/exclude`.
 */
async function excludeFileOf(dir: string): Promise<{ root: string; file: string; commonDir: string } | undefined> {
  for (let root = resolve(dir); ; root = dirname(root)) {
    const dotGit = join(root, '.git');
    const info = await stat(dotGit).catch(() => undefined);
    if (info?.isDirectory()) return { root, file: join(dotGit, 'info', 'exclude'), commonDir: dotGit };
    if (info?.isFile()) {
      const gitDir = /^gitdir:\s*(.+?)\s*$/m.exec((await readOr(dotGit)) ?? '')?.[1];
      if (!gitDir) return undefined;
      const resolved = isAbsolute(gitDir) ? gitDir : resolve(root, gitDir);
      const common = (await readOr(join(resolved, 'commondir')))?.trim();
      const commonDir = common ? resolve(resolved, common) : resolved;
      return { root, file: join(commonDir, 'info', 'exclude'), commonDir };
    }
    if (dirname(root) === root) return undefined;
  }
}

async function readOr(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Temp file and rename: a reader (git) sees the old text or the new, never half of it. */
async function writeWhole(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.agent-session-${process.pid}.tmp`;
  try {
    await writeFile(temp, text, { flag: 'wx' });
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
