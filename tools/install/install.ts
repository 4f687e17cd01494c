import { gitignorePath, readGitignore, writeGitignore } from '../store/gitignore-file.js';
import { locateBuiltHooks } from '../store/hook-files.js';
import { formatSettings, installProjectDir, projectSettingsPath, readSettingsFile, userSettingsPath, writeSettingsFile } from '../store/settings-file.js';
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
  const commands = Object.fromEntries(HOOK_NAMES.map((name) => [name, nodeCommand(hooks[name])])) as Record<HookName, string>;
  const report = await apply('install', options, (old) => planInstall(old, commands, HOOK_TIMEOUT_SECONDS));
  if (report.scope === 'project') report.gitignore = await ignoreStore(installProjectDir(options), options.dryRun === true);
  return report;
}

/** Removes exactly our entries from a Claude Code settings file (wherever the package was). */
export function uninstallHooks(options: InstallOptions): Promise<InstallReport> {
  return apply('uninstall', options, planUninstall);
}

async function apply(action: InstallReport['action'], options: InstallOptions, plan: (old: Record<string, unknown> | undefined) => SettingsPlan): Promise<InstallReport> {
  const scope = options.user ? 'user' : 'project';
  const file = options.user ? userSettingsPath(options.env) : projectSettingsPath(installProjectDir(options));
  const before = await readSettingsFile(file);
  const { settings, changed, added, removed } = plan(before.settings);
  const content = changed ? formatSettings(settings, before.indent) : (before.text ?? '');
  const write = changed && options.dryRun !== true;
  const backup = write ? await writeSettingsFile(before, content, options.now ?? Date.now()) : null;
  return { action, scope, file, dry_run: options.dryRun === true, changed, backup, added, removed, gitignore: null, content };
}

/** Keeps the store (`.claude/session/`) out of git. */
async function ignoreStore(projectDir: string, dryRun: boolean): Promise<{ file: string; changed: boolean }> {
  const file = gitignorePath(projectDir);
  const { text, changed } = planGitignore(await readGitignore(file));
  if (changed && !dryRun) await writeGitignore(file, text);
  return { file, changed };
}
