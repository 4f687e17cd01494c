import { SessionError, toSessionError } from '../errors.js';
import { gitignorePath, readGitignore, writeGitignore } from './gitignore-file.js';
import { locateBuiltHooks } from './hook-files.js';
import { checkReplaceable } from './replace-file.js';
import {
  homeDir,
  installProjectDir,
  isDirectory,
  projectSettingsPath,
  readSettingsFile,
  sameDirectory,
  userSettingsPath,
  writeSettingsFile,
} from './settings-file.js';
import { assertRewritable, formatSettings } from './settings-text.js';
import { planGitignore } from './gitignore.js';
import { planInstall, planUninstall, type HookEntry, type SettingsPlan } from './plan.js';
import { HOOK_NAMES, HOOK_TIMEOUT_SECONDS, nodeCommand, type HookName } from './registrations.js';

export interface InstallOptions {
  /** `~/.claude/settings.json` instead of the project's `.claude/settings.json`. */
  user?: boolean;
  /** Compute everything, write nothing. */
  dryRun?: boolean;
  cwd: string;
  env: Record<string, string | undefined>;
  now?: number;
  /** Where to look for the built hooks from (a file URL or path); default: this code's own file. */
  hooksFrom?: string;
}

export interface InstallReport {
  action: 'install' | 'uninstall';
  scope: 'project' | 'user';
  file: string;
  dry_run: boolean;
  changed: boolean;
  /** The copy of the old file made before changing it (null: nothing changed, no old file, or a dry run). */
  backup: string | null;
  added: HookEntry[];
  removed: HookEntry[];
  /** The project's .gitignore (install into a project only). */
  gitignore: { file: string; changed: boolean } | null;
  /** The settings file's content after the command (what a dry run would write). */
  content: string;
}

/** Merges our hooks into a Claude Code settings file, run as `node <absolute path of the built hook>`. */
export async function installHooks(options: InstallOptions): Promise<InstallReport> {
  const hooks = locateBuiltHooks(HOOK_NAMES, options.hooksFrom);
  const commands = Object.fromEntries(HOOK_NAMES.map((name) => [name, nodeCommand(hooks[name])])) as Record<
    HookName,
    string
  >;
  return apply('install', options, (old) => planInstall(old, commands, HOOK_TIMEOUT_SECONDS));
}

/** Removes exactly our entries from a Claude Code settings file (wherever the package was). */
export function uninstallHooks(options: InstallOptions): Promise<InstallReport> {
  return apply('uninstall', options, planUninstall);
}

/**
 * Reads and plans everything first (the settings file, and for a project install its .gitignore),
 * then writes: .gitignore first, put back as it was if the settings file then cannot be written.
 */
async function apply(
  action: InstallReport['action'],
  options: InstallOptions,
  plan: (old: Record<string, unknown> | undefined) => SettingsPlan,
): Promise<InstallReport> {
  const scope = options.user ? 'user' : 'project';
  const projectDir = options.user ? undefined : await checkedProjectDir(options);
  const file = projectDir === undefined ? userSettingsPath(options.env) : projectSettingsPath(projectDir);
  const before = await readSettingsFile(file);
  const { settings, changed, added, removed } = plan(before.settings);
  if (changed) assertRewritable(before);
  const content = changed ? formatSettings(settings, before) : (before.text ?? '');
  // The store is kept out of git on install into a project.
  const ignoreFile = action === 'install' && projectDir !== undefined ? gitignorePath(projectDir) : undefined;
  const ignoreOld = ignoreFile === undefined ? undefined : await readGitignore(ignoreFile);
  const ignore = ignoreFile === undefined ? undefined : planGitignore(ignoreOld);
  let backup: string | null = null;
  if (options.dryRun !== true) {
    // Both files checked before either is written; the undo covers what no check can foresee (a full disk).
    if (ignoreFile && ignore?.changed) await checkReplaceable(ignoreFile, ignoreOld);
    if (changed) await checkReplaceable(file, before.text);
    const undo = ignoreFile && ignore?.changed ? await writeGitignore(ignoreFile, ignoreOld, ignore.text) : undefined;
    try {
      if (changed) backup = await writeSettingsFile(before, content, options.now ?? Date.now());
    } catch (err) {
      await undo?.().catch((undoErr: Error) => {
        const first = toSessionError(err, `cannot write ${file}`);
        throw new SessionError(first.code, `${first.message}; and ${undoErr.message}`, { cause: err });
      });
      throw err;
    }
  }
  const gitignore = ignoreFile === undefined ? null : { file: ignoreFile, changed: ignore!.changed };
  return { action, scope, file, dry_run: options.dryRun === true, changed, backup, added, removed, gitignore, content };
}

/** The project to install into, which must exist, and must not be the home directory (that is --user). */
async function checkedProjectDir(options: InstallOptions): Promise<string> {
  const dir = installProjectDir(options);
  const where = options.env.CLAUDE_PROJECT_DIR ? ` (CLAUDE_PROJECT_DIR)` : '';
  if (!(await isDirectory(dir)))
    throw new SessionError('EINVALID', `the project directory ${dir}${where} does not exist or is not a directory`);
  if (await sameDirectory(dir, homeDir(options.env))) {
    throw new SessionError(
      'EINVALID',
      `the project would be your home directory ${dir}${where}, ` +
        'whose .claude/settings.json is your user settings: use install --user, or run it in a project',
    );
  }
  return dir;
}
