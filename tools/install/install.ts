import { isAbsolute, join, relative, resolve } from 'node:path';
import { SessionError } from '../errors.js';
import { isInside, type ProjectLocation } from '../store/project.js';
import { dependencyDir, isDependency, PACKAGE_NAME, projectPackage, type ProjectPackage } from './dependency.js';
import { excludeFromGit, removeGitExclude, type ExcludeChange } from './git-exclude.js';
import { locateBuiltHooks, locateBuiltMcpServer, missingFiles } from './hook-files.js';
import { MCP_SERVER_NAME, mcpServerEntry, planMcpInstall, planMcpUninstall, readOnlyRules } from './mcp-config.js';
import {
  homeDir,
  installProject,
  isDirectory,
  projectSettingsPath,
  readPackageJson,
  readSettingsFile,
  sameDirectory,
  userSettingsPath,
} from './settings-file.js';
import { ourEntries, planInstall, planUninstall, type HookEntry, type SettingsPlan } from './plan.js';
import {
  applyingStatusLine,
  combinedStatusLineScript,
  isOurStatusLine,
  planStatusLineInstall,
  planStatusLineUninstall,
  STATUS_LINE_SCRIPT,
  statusLineCommand,
  type StatusLinePlace,
} from './status-line-setting.js';
import { planFile, writeAll, type PlannedChange, type SettingsChange, type SettingsScope } from './settings-changes.js';
import {
  dependencyCommand,
  guardedCommand,
  HOOK_NAMES,
  HOOK_TIMEOUT_SECONDS,
  hookScriptOf,
  type HookName,
} from './registrations.js';
import { checkOptions, type OptionKeys } from '../options.js';

export type { SettingsChange, SettingsScope } from './settings-changes.js';

export interface InstallOptions {
  /** `~/.claude/settings.json` instead of the project's settings. */
  user?: boolean;
  /** The project's shared `.claude/settings.json` even when the command names this machine's path. */
  shared?: boolean;
  /** Allow installing into (or uninstalling from) this package's own repository. */
  allowSelf?: boolean;
  /** Compute everything, write nothing. */
  dryRun?: boolean;
  cwd: string;
  env: Record<string, string | undefined>;
  now?: number;
  /** Where to look for the built hooks from (a file URL or path); default: this code's own file. */
  hooksFrom?: string;
}

/** The MCP server's install: the project's `.mcp.json`, and the rules that let Claude read without asking. */
export interface McpInstallReport extends InstallReport {
  /** `permissions.allow` rules for the read-only tools (for the user's settings; install writes none). */
  permission_rules: string[];
}

export interface InstallReport {
  action: 'install' | 'uninstall';
  /** Where install wrote; for uninstall 'project' (both project files) or 'user'. */
  scope: SettingsScope;
  /** The project and why it is that one (with --user: the project checked for double registration, if any). */
  project: ProjectLocation | null;
  /** The file written (uninstall: the first one changed, else the first one looked at). */
  file: string;
  dry_run: boolean;
  changed: boolean;
  backup: string | null;
  added: HookEntry[];
  removed: HookEntry[];
  /** Every settings file the command looked at to change. */
  files: SettingsChange[];
  /** Things the user should act on: hooks registered twice, a path teammates will not have. */
  warnings: string[];
  /**
   * The clone's `.git/info/exclude`, which keeps `.claude/settings.local.json` out of git: a line added by
   * install, removed by the uninstall that removes the file (null: no local settings file, or not in git).
   */
  git_exclude: ExcludeChange | null;
  /** `file`'s content after the command (what a dry run would write). */
  content: string;
}

/**
 * Merges our hooks into a Claude Code settings file: for a project that depends on the package, its
 * shared settings with a command under `$CLAUDE_PROJECT_DIR`; otherwise its local settings (or the
 * shared ones with `shared`, or the user's with `user`) with this machine's absolute path. Each command
 * is guarded so that a removed package leaves a quiet no-op instead of an error on every event.
 */
const INSTALL_KEYS: OptionKeys<InstallOptions> = {
  user: true,
  shared: true,
  allowSelf: true,
  dryRun: true,
  cwd: true,
  env: true,
  now: true,
  hooksFrom: true,
};

export async function installHooks(options: InstallOptions): Promise<InstallReport> {
  checkOptions(options, INSTALL_KEYS, 'installHooks');
  if (options.user && options.shared)
    throw new SessionError(
      'EINVALID',
      "--user and --shared name different files (~/.claude/settings.json, the project's .claude/settings.json): " +
        'give one of them',
    );
  const hooks = locateBuiltHooks(HOOK_NAMES, options.hooksFrom);
  const located = await targetProject(options);
  const project = located?.location ?? null;
  const { scope, command, warnings } = options.user
    ? { scope: 'user' as const, command: (name: HookName) => guardedCommand(hooks[name]), warnings: [] }
    : await projectForm(located!.location.dir, located!.pkg, hooks, options.shared === true);
  const commands = Object.fromEntries(HOOK_NAMES.map((name) => [name, command(name)])) as Record<HookName, string>;
  const file = scope === 'user' ? userSettingsPath(options.env) : projectSettingsPath(project!.dir, scope === 'local');
  const change = await planFile(file, scope, (old) => planInstall(old, commands, HOOK_TIMEOUT_SECONDS), false);
  warnings.push(...(await doubleRegistrations(file, project, options.env, commands)));
  if (scope === 'user' && project && isInside(hooks.pre_delegate, project.dir)) {
    warnings.push(
      `the user hooks run the copy of agent-session inside ${project.dir}: removing that project or its ` +
        'node_modules turns them off in every project (install the package globally, npm install -g ' +
        'agent-session, and run agent-session install --user from there)',
    );
  }
  if (!options.dryRun) await writeAll([change], options.now);
  const exclude = scope === 'local' ? await keepOutOfGit(file, options, warnings) : null;
  return report('install', scope, project, options, [change.report], warnings, exclude);
}

/**
 * Which file of the project and which command: a dependency's shared settings under
 * `$CLAUDE_PROJECT_DIR`, else this machine's path in the local settings (or, when asked, the shared ones).
 */
async function projectForm(
  dir: string,
  pkg: ProjectPackage,
  hooks: Record<HookName, string>,
  shared: boolean,
): Promise<{ scope: SettingsScope; command: (name: HookName) => string; warnings: string[] }> {
  if (await isDependency(dir, pkg, hooks.pre_delegate)) {
    const built = HOOK_NAMES.map((name) => join(dependencyDir(dir), 'dist', 'hooks', `${name}.js`));
    const missing = await missingFiles(built);
    const warning =
      `${missing.join(', ')} not found: ` +
      "the hooks do nothing until the project's dependencies are installed (npm install)";
    const warnings = missing.length > 0 ? [warning] : [];
    return { scope: 'project', command: dependencyCommand, warnings };
  }
  const command = (name: HookName) => guardedCommand(hooks[name]);
  if (!shared) return { scope: 'local', command, warnings: [] };
  const warning =
    `${projectSettingsPath(dir)} now names ${hooks.pre_delegate} and its sibling, paths of this machine: ` +
    'a teammate who gets this file has no hooks unless the package is at the same path there';
  return { scope: 'project', command, warnings: [warning] };
}

/**
 * The status line's install: `refused` when a status line that is not ours applies here, in the target file
 * or another settings file Claude Code reads (`place`), left as it was.
 */
export interface StatusLineInstallReport extends InstallReport {
  refused: { file: string; place: StatusLinePlace; command: string; ours: string; combined: string } | null;
}

/**
 * Sets the `statusLine` of the same settings file, with the same command form, as `installHooks` would
 * choose for the hooks. A status line that is not ours is never replaced nor hidden: not in that file,
 * and not in another file Claude Code reads here, whose line would either be drawn instead of ours or be
 * overridden by it (for everyone who gets a shared file). The report says so (`refused`), with a script
 * that shows both.
 */
export async function installStatusLine(options: InstallOptions): Promise<StatusLineInstallReport> {
  checkOptions(options, INSTALL_KEYS, 'installStatusLine');
  if (options.user && options.shared)
    throw new SessionError(
      'EINVALID',
      "--user and --shared name different files (~/.claude/settings.json, the project's .claude/settings.json): " +
        'give one of them',
    );
  const script = locateBuiltHooks([STATUS_LINE_SCRIPT], options.hooksFrom)[STATUS_LINE_SCRIPT];
  const located = await targetProject(options);
  const project = located?.location ?? null;
  const { scope, command, warnings } = options.user
    ? { scope: 'user' as const, command: guardedCommand(script), warnings: [] as string[] }
    : await statusLineForm(located!.location.dir, located!.pkg, script, options.shared === true);
  const file = scope === 'user' ? userSettingsPath(options.env) : projectSettingsPath(project!.dir, scope === 'local');
  let foreign: string | null = null;
  const change = await planFile(
    file,
    scope,
    (old) => {
      const plan = planStatusLineInstall(old, command);
      foreign = plan.foreign;
      return plan;
    },
    false,
  );
  const elsewhere = foreign === null ? await foreignStatusLine(file, project, options.env) : null;
  const theirs = foreign === null ? elsewhere : { file, place: scope, command: foreign as string };
  const refused = theirs && { ...theirs, ours: command, combined: combinedStatusLineScript(theirs.command, command) };
  if (!options.dryRun && !refused) await writeAll([change], options.now);
  const exclude = scope === 'local' && !refused ? await keepOutOfGit(file, options, warnings) : null;
  return { ...report('install', scope, project, options, [change.report], warnings, exclude), refused };
}

/**
 * A status line that is not ours in another settings file Claude Code reads here (the user's, the
 * project's two), the one that applies first. A file that cannot be read or parsed is Claude Code's
 * problem to report (status does), not a status line.
 */
async function foreignStatusLine(
  file: string,
  project: ProjectLocation | null,
  env: InstallOptions['env'],
): Promise<{ file: string; place: StatusLinePlace; command: string } | null> {
  const places: [StatusLinePlace, string][] = [['user', userSettingsPath(env)]];
  if (project)
    places.push(['project', projectSettingsPath(project.dir)], ['local', projectSettingsPath(project.dir, true)]);
  const reads = [];
  for (const [place, other] of places) {
    if (resolve(other) === resolve(file)) continue;
    const settings = await readSettingsFile(other).then(
      (s) => s.settings,
      () => undefined,
    );
    if (settings?.statusLine !== undefined && !isOurStatusLine(settings.statusLine))
      reads.push({ place, file: other, settings });
  }
  const found = applyingStatusLine(reads);
  return found ? { file: found.file, place: found.place, command: statusLineCommand(found.settings.statusLine) } : null;
}

/** As `projectForm`, for the status line's one script. */
async function statusLineForm(
  dir: string,
  pkg: ProjectPackage,
  script: string,
  shared: boolean,
): Promise<{ scope: SettingsScope; command: string; warnings: string[] }> {
  if (await isDependency(dir, pkg, script)) {
    const built = join(dependencyDir(dir), 'dist', 'hooks', `${STATUS_LINE_SCRIPT}.js`);
    const warnings =
      (await missingFiles([built])).length > 0
        ? [`${built} not found: the status line is empty until the project's dependencies are installed (npm install)`]
        : [];
    return { scope: 'project', command: dependencyCommand(STATUS_LINE_SCRIPT), warnings };
  }
  const command = guardedCommand(script);
  if (!shared) return { scope: 'local', command, warnings: [] };
  const warning =
    `${projectSettingsPath(dir)} now names ${script}, a path of this machine: ` +
    'a teammate who gets this file has no status line unless the package is at the same path there';
  return { scope: 'project', command, warnings: [warning] };
}

/** Removes our status line from the project's settings.json and settings.local.json (or the user's file). */
export async function uninstallStatusLine(options: InstallOptions): Promise<InstallReport> {
  checkOptions(options, INSTALL_KEYS, 'uninstallStatusLine');
  return uninstallFrom(options, planStatusLineUninstall, () => []);
}

/** Removes exactly our entries from the project's settings.json and settings.local.json (or the user's file). */
export async function uninstallHooks(options: InstallOptions): Promise<InstallReport> {
  checkOptions(options, INSTALL_KEYS, 'uninstallHooks');
  // The status line is installed and removed on its own (--statusline): say that it stays, and how it goes.
  return uninstallFrom(options, planUninstall, (changes) =>
    changes
      .filter((c) => isOurStatusLine(c.before.settings?.statusLine))
      .map(
        (c) =>
          `${c.report.file} keeps the agent-session status line, which uninstall leaves: ` +
          `agent-session uninstall --statusline${options.user ? ' --user' : ''} removes it`,
      ),
  );
}

/**
 * An uninstall of what `plan` removes from the user's settings file or the project's two: a project's file
 * left empty goes (the user's stays: Claude Code keeps its own settings there), and a removed
 * settings.local.json leaves the git exclude line it no longer needs.
 */
async function uninstallFrom(
  options: InstallOptions,
  plan: (old: Record<string, unknown> | undefined) => SettingsPlan,
  warningsOf: (changes: PlannedChange[]) => string[],
): Promise<InstallReport> {
  const located = await targetProject(options);
  const project = located?.location ?? null;
  const files: [string, SettingsScope][] = options.user
    ? [[userSettingsPath(options.env), 'user']]
    : [
        [projectSettingsPath(project!.dir), 'project'],
        [projectSettingsPath(project!.dir, true), 'local'],
      ];
  const changes = [];
  for (const [file, scope] of files) changes.push(await planFile(file, scope, plan, scope !== 'user'));
  if (!options.dryRun) await writeAll(changes, options.now);
  const local = changes.find((c) => c.report.scope === 'local' && c.report.removed_file);
  const warnings = warningsOf(changes);
  const exclude = local ? await keepOutOfGit(local.report.file, options, warnings, true) : null;
  return report(
    'uninstall',
    options.user ? 'user' : 'project',
    project,
    options,
    changes.map((c) => c.report),
    warnings,
    exclude,
  );
}

/**
 * Adds the MCP server to the project's `.mcp.json`, every other server's text kept as it was. A
 * dependency of the project is named by its path under the project (the same in every clone; Claude
 * Code starts the server in the project directory); anything else by this machine's absolute path,
 * with a warning, since `.mcp.json` is shared.
 */
export async function installMcp(options: InstallOptions): Promise<McpInstallReport> {
  checkOptions(options, INSTALL_KEYS, 'installMcp');
  if (options.user)
    throw new SessionError(
      'EINVALID',
      "--mcp installs into the project's .mcp.json; Claude Code keeps user MCP servers in ~/.claude.json, " +
        'which agent-session does not edit (claude mcp add --scope user)',
    );
  const server = locateBuiltMcpServer(options.hooksFrom);
  if (!server)
    throw new SessionError('EIO', 'this build of agent-session has no MCP server (dist/bin/agent-session-mcp.js)');
  const { location, pkg } = (await targetProject(options))!;
  const dir = location.dir;
  const warnings: string[] = [];
  let file = server;
  if (await isDependency(dir, pkg, server)) {
    file = relative(dir, join(dependencyDir(dir), 'dist', 'bin', 'agent-session-mcp.js'));
    if ((await missingFiles([join(dir, file)])).length > 0)
      warnings.push(`${file} not found: the server starts once the project's dependencies are installed (npm install)`);
  } else {
    warnings.push(
      `${mcpJsonPath(dir)} now names ${server}, a path of this machine: a teammate who gets this file has no ` +
        'server unless the package is at the same path there (make agent-session a dependency of the project)',
    );
  }
  let foreign = false;
  let malformed = false;
  const change = await planFile(
    mcpJsonPath(dir),
    'project',
    (old) => {
      const plan = planMcpInstall(old, mcpServerEntry(file));
      foreign = plan.foreign;
      malformed = plan.malformed ?? false;
      return plan;
    },
    false,
  );
  if (malformed)
    throw new SessionError(
      'EINVALID',
      `${mcpJsonPath(dir)}: "mcpServers" is not a JSON object of servers; refusing to rewrite it`,
    );
  if (foreign)
    throw new SessionError(
      'EINVALID',
      `${mcpJsonPath(dir)} already has a server named "${MCP_SERVER_NAME}" that does not run agent-session; ` +
        'refusing to replace it',
    );
  if (!options.dryRun) await writeAll([change], options.now);
  return {
    ...report('install', 'project', location, options, [change.report], warnings, null),
    permission_rules: readOnlyRules(),
  };
}

/** Removes exactly our server from the project's `.mcp.json` (the file too, when nothing else is left). */
export async function uninstallMcp(options: InstallOptions): Promise<McpInstallReport> {
  checkOptions(options, INSTALL_KEYS, 'uninstallMcp');
  if (options.user)
    throw new SessionError('EINVALID', "--mcp uninstalls from the project's .mcp.json; --user has none");
  const { location } = (await targetProject(options))!;
  const change = await planFile(mcpJsonPath(location.dir), 'project', planMcpUninstall, true);
  if (!options.dryRun) await writeAll([change], options.now);
  return {
    ...report('uninstall', 'project', location, options, [change.report], [], null),
    permission_rules: readOnlyRules(),
  };
}

function mcpJsonPath(projectDir: string): string {
  return join(projectDir, '.mcp.json');
}

/**
 * The local settings file named in (or, once it is gone, taken out of) the clone's exclude file. The
 * settings are written by then: a failure here is a warning saying what to do, not an error.
 */
async function keepOutOfGit(
  file: string,
  options: InstallOptions,
  warnings: string[],
  remove = false,
): Promise<ExcludeChange | null> {
  try {
    const change = await (remove ? removeGitExclude : excludeFromGit)(file, options.dryRun === true);
    if (change?.tracked)
      warnings.push(
        `git tracks ${file}, so this machine's hook paths in it would be committed for everyone: ` +
          'untrack it (git rm --cached .claude/settings.local.json, then commit), or make agent-session a ' +
          'dependency of the project (npm install --save-dev agent-session) and install again',
      );
    return change;
  } catch (err) {
    const what = remove ? 'remove the line for' : 'add';
    warnings.push(
      `could not ${what} ${file} in the repository's .git/info/exclude (${(err as Error).message}); ` +
        (remove
          ? 'remove it yourself'
          : 'add .claude/settings.local.json to your .gitignore: it holds paths of this machine'),
    );
    return null;
  }
}

function report(
  action: InstallReport['action'],
  scope: SettingsScope,
  project: ProjectLocation | null,
  options: InstallOptions,
  files: SettingsChange[],
  warnings: string[],
  gitExclude: ExcludeChange | null,
): InstallReport {
  const main = files.find((f) => f.changed) ?? files[0]!;
  // A worktree Claude Code made (a subagent's, claude -w) is no project of its own: say whose files change.
  const inWorktree =
    project?.reason === 'claude-worktree' && scope !== 'user'
      ? [
          `run inside a worktree Claude Code made: this ${action} is of the project ${project.dir}, ` +
            'for every conversation and teammate using it',
        ]
      : [];
  return {
    action,
    scope,
    project,
    file: main.file,
    dry_run: options.dryRun === true,
    changed: files.some((f) => f.changed),
    backup: main.backup,
    added: files.flatMap((f) => f.added),
    removed: files.flatMap((f) => f.removed),
    files,
    warnings: [...warnings, ...inWorktree],
    git_exclude: gitExclude,
    content: main.content,
  };
}

/**
 * Our hooks found in another settings file Claude Code reads here, that would run a second time:
 * not the very command this install writes (Claude Code runs one command string once, whichever files
 * name it), and not a guarded command whose script is gone (it does nothing).
 */
async function doubleRegistrations(
  file: string,
  project: ProjectLocation | null,
  env: InstallOptions['env'],
  commands: Record<HookName, string>,
): Promise<string[]> {
  const others = [userSettingsPath(env)];
  if (project) others.push(projectSettingsPath(project.dir), projectSettingsPath(project.dir, true));
  const user = userSettingsPath(env);
  const warnings: string[] = [];
  for (const other of others.filter((f) => f !== file)) {
    // A file that cannot be read or parsed is Claude Code's problem to report, not a registration.
    const settings = await readSettingsFile(other).then(
      (s) => s.settings,
      () => undefined,
    );
    const entries = ourEntries(settings);
    const twice = await Promise.all(entries.map((entry) => runsTwice(entry, commands, project?.dir)));
    if (!twice.includes(true)) continue;
    // Uninstall cleans both project files at once: after it, this install has to run again.
    const fix =
      other === user
        ? 'agent-session uninstall --user'
        : file === user
          ? 'agent-session uninstall'
          : 'agent-session uninstall, then this install again';
    warnings.push(
      `${other} also registers the agent-session hooks with another command: Claude Code runs both, ` +
        `so each hook runs twice; remove one (${fix})`,
    );
  }
  return warnings;
}

/** Whether an entry of ours in another file runs besides the command this install writes for its event. */
async function runsTwice(
  entry: HookEntry,
  commands: Record<HookName, string>,
  projectDir: string | undefined,
): Promise<boolean> {
  const found = hookScriptOf({ type: 'command', command: entry.command }, entry.event);
  if (!found || entry.command === commands[found.hook]) return false;
  if (!found.guarded || found.script === null) return true;
  const script = found.script.replace(/\$\{?CLAUDE_PROJECT_DIR\}?/g, projectDir ?? '$CLAUDE_PROJECT_DIR');
  return !isAbsolute(script) || (await missingFiles([script])).length === 0;
}

/**
 * The project, which must exist, must not be the home directory (that is --user) and must not be this
 * package's own repository (unless allowed). With `user`, the project around cwd if there is one.
 */
async function targetProject(
  options: InstallOptions,
): Promise<{ location: ProjectLocation; pkg: ProjectPackage } | undefined> {
  const location = installProject(options);
  const { dir } = location;
  const where = location.reason === 'CLAUDE_PROJECT_DIR' ? ` (CLAUDE_PROJECT_DIR)` : '';
  const exists = await isDirectory(dir);
  const isHome = exists && (await sameDirectory(dir, homeDir(options.env)));
  if (options.user) return exists && !isHome ? { location, pkg: projectPackage(undefined) } : undefined;
  if (!exists)
    throw new SessionError('EINVALID', `the project directory ${dir}${where} does not exist or is not a directory`);
  if (isHome) {
    throw new SessionError(
      'EINVALID',
      `the project would be your home directory ${dir}${where}, ` +
        'whose .claude/settings.json is your user settings: use install --user, or run it in a project',
    );
  }
  const pkg = projectPackage(await readPackageJson(dir));
  if (pkg.name === PACKAGE_NAME && !options.allowSelf) {
    throw new SessionError(
      'EINVALID',
      `${dir} is the ${PACKAGE_NAME} repository itself, whose .claude/settings.json already runs the hooks it ` +
        'builds; refusing to change its settings (pass --allow-self to do it anyway)',
    );
  }
  return { location, pkg };
}
