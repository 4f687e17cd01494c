import type { Argv as Yargs } from 'yargs';
import {
  installHooks,
  installMcp,
  installStatusLine,
  type InstallOptions,
  type InstallReport,
  type McpInstallReport,
  type StatusLineInstallReport,
} from '../../install/install.js';
import { SessionError } from '../../errors.js';
import { EXIT } from '../exit-codes.js';
import type { Argv, Context } from '../command-context.js';
import { whyProject } from '../store-origin.js';

export interface InstallArgs {
  user?: boolean;
  shared?: boolean;
  allowSelf?: boolean;
  dryRun?: boolean;
  mcp?: boolean;
  statusline?: boolean;
}

export const command = 'install';
export const describe =
  "Add the Claude Code hooks to the project's .claude/settings.json (a dependency of the project) or " +
  '.claude/settings.local.json (this machine only), or to ~/.claude/settings.json with --user';

export function builder(yargs: Yargs) {
  return yargs
    .option('user', {
      type: 'boolean',
      describe: 'Install into ~/.claude/settings.json (every project) instead of the project',
    })
    .option('shared', {
      type: 'boolean',
      describe: "Write the project's shared .claude/settings.json even when the hooks are a path of this machine",
    })
    .option('allow-self', {
      type: 'boolean',
      describe: "Allow changing the agent-session repository's own settings",
    })
    .option('mcp', {
      type: 'boolean',
      describe: "Add the MCP server to the project's .mcp.json instead (the hooks stay as they are)",
    })
    .option('statusline', {
      type: 'boolean',
      describe: "Set Claude Code's status line to agent-session statusline instead (never replaces another one)",
    })
    .conflicts('mcp', 'statusline')
    .option('dry-run', { type: 'boolean', describe: 'Print the resulting settings file; change nothing' });
}

export async function handler(argv: Argv<InstallArgs>) {
  if (argv.mcp) return printMcpReport(argv.ctx, await installMcp(installOptions(argv)), argv.json === true);
  if (argv.statusline)
    return printStatusLineReport(argv.ctx, await installStatusLine(installOptions(argv)), argv.json === true);
  printReport(argv.ctx, await installHooks(installOptions(argv)), argv.json === true);
}

/** Shared by install --mcp and uninstall --mcp. */
export function printMcpReport(ctx: Context, report: McpInstallReport, json: boolean): void {
  if (json || report.dry_run) return printReport(ctx, report, json);
  const file = report.files[0]!;
  const previous = file.backup ? ` (previous version: ${file.backup})` : '';
  if (report.project) ctx.out(`Project ${report.project.dir} (${whyProject(report.project, ctx.io.cwd)}).`);
  if (report.action === 'install') {
    ctx.out(
      file.changed
        ? `Added the agent-session MCP server to ${file.file}${previous}.`
        : `${file.file}: the agent-session MCP server is already there; nothing changed.`,
    );
    for (const entry of file.added) ctx.out(`  + ${entry.matcher}: ${entry.command}`);
    ctx.out(
      'To let Claude call its read-only tools without asking, add to "permissions" "allow" in ' +
        `~/.claude/settings.json: ${report.permission_rules.map((r) => JSON.stringify(r)).join(', ')}.`,
    );
  } else if (!file!.changed) ctx.out(`${file!.file}: no agent-session MCP server.`);
  else if (file!.removed_file)
    ctx.out(`Removed the agent-session MCP server and ${file!.file}, which held nothing else.`);
  else ctx.out(`Removed the agent-session MCP server from ${file!.file}.`);
  for (const warning of report.warnings) ctx.out(`Warning: ${warning}.`);
}

/**
 * install --statusline: as the hooks' report, or, when a status line that is not ours applies here (in
 * the file or in another settings file), what is there and a script that shows both (exit 3, nothing written).
 */
function printStatusLineReport(ctx: Context, report: StatusLineInstallReport, json: boolean): void {
  const { refused } = report;
  if (refused) ctx.exitCode = EXIT.refused;
  if (json || !refused) return printReport(ctx, report, json, 'status line');
  if (report.project) ctx.out(`Project ${report.project.dir} (${whyProject(report.project, ctx.io.cwd)}).`);
  if (refused.file === report.file)
    ctx.out(`${refused.file} already has a status line that is not agent-session's; left as it is:`);
  else {
    // Claude Code draws the status line of the first file that has one: local, then project, then user.
    const rank = (place: string) => ['local', 'project', 'user'].indexOf(place);
    const shared = report.scope === 'project' ? ' and for all who get that file' : '';
    const effect =
      rank(refused.place) < rank(report.scope)
        ? `Claude Code draws it instead of one in ${report.file}`
        : `one in ${report.file} would replace it here${shared}`;
    ctx.out(`${refused.file} has a status line that is not agent-session's (${effect}); nothing written:`);
  }
  ctx.out(`  ${refused.command}`);
  const saveAs = refused.place === 'user' ? '~/.claude/statusline.sh' : '.claude/statusline.sh';
  ctx.out(`To show both, save this script (for example as ${saveAs}, executable) and make it the "statusLine"`);
  ctx.out(`command in ${refused.file} instead; it prints the other line, then ours after " | ":`);
  ctx.out('');
  for (const line of refused.combined.split('\n')) ctx.out(`  ${line}`);
  if (refused.file !== report.file) {
    ctx.out('');
    ctx.out(`Or remove the "statusLine" from ${refused.file} and run this install again.`);
  }
}

/** Shared by install and uninstall: the flags and the command's working directory, environment and clock. */
export function installOptions(argv: Argv<InstallArgs>, command = 'install'): InstallOptions {
  const { io } = argv.ctx;
  // --dir is every command's option, but the hooks find their store from the project they run in.
  if (argv.dir !== undefined) {
    throw new SessionError(
      'EINVALID',
      `${command} does not take --dir: the hooks find the store from the project they run in ` +
        '(to keep it elsewhere, set AGENT_SESSION_DIR in the "env" of the settings file)',
    );
  }
  const { user, shared, allowSelf, dryRun } = argv;
  return { user, shared, allowSelf, dryRun, cwd: io.cwd, env: io.env, now: io.now?.() };
}

/** Shared by install and uninstall: the JSON report, the file for a dry run, else one line per fact. */
export function printReport(ctx: Context, report: InstallReport, json: boolean, what = 'hooks'): void {
  const { content, files, ...rest } = report;
  if (json) {
    const shown = report.dry_run ? files : files.map(({ content: _, ...file }) => file);
    // A report of a few lines: written before json() returns, nothing left to wait for.
    void ctx.json(report.dry_run ? { ...rest, files: shown, content } : { ...rest, files: shown });
    return;
  }
  if (report.dry_run) return printDryRun(ctx, report);
  if (report.project) ctx.out(`Project ${report.project.dir} (${whyProject(report.project, ctx.io.cwd)}).`);
  for (const file of files) {
    // An unchanged file's content is its text: empty only when there is no such file (an empty one is not JSON).
    if (!file.changed && report.action === 'uninstall')
      ctx.out(`${file.file}: ${file.content === '' ? 'no such file' : `no agent-session ${what}`}.`);
    else if (!file.changed) ctx.out(`${file.file}: ${what} already installed; nothing changed.`);
    else if (file.removed_file) ctx.out(`Removed the agent-session ${what} and ${file.file}, which held nothing else.`);
    else {
      const verb =
        report.action === 'install'
          ? `Installed the agent-session ${what} in`
          : `Removed the agent-session ${what} from`;
      ctx.out(`${verb} ${file.file}${file.backup ? ` (previous version: ${file.backup})` : ''}.`);
    }
    for (const entry of file.added)
      ctx.out(`  + ${entry.event}${entry.matcher ? ` [${entry.matcher}]` : ''}: ${entry.command}`);
    for (const entry of file.removed)
      ctx.out(`  - ${entry.event}${entry.matcher ? ` [${entry.matcher}]` : ''}: ${entry.command}`);
  }
  if (report.action === 'install' && report.scope === 'local' && report.changed)
    ctx.out(
      `agent-session is not a dependency of this project, so the ${what} run${what === 'hooks' ? '' : 's'} ` +
        "this machine's copy: written to " +
        'settings.local.json, which Claude Code reads and git should not share (--shared writes settings.json).',
    );
  const exclude = report.git_exclude;
  if (exclude?.changed)
    ctx.out(
      report.action === 'install'
        ? `Added ${exclude.pattern} to ${exclude.file} (this clone only), so git does not show or commit it.`
        : `Removed ${exclude.pattern} from ${exclude.file}.`,
    );
  for (const warning of report.warnings) ctx.out(`Warning: ${warning}.`);
}

/** The file a dry run would write; with several files changing, each after a `==> file <==` line. */
function printDryRun(ctx: Context, report: InstallReport): void {
  const changing = report.files.filter((f) => f.changed);
  if (changing.length <= 1) {
    ctx.io.stdout(report.content);
    return;
  }
  for (const file of changing)
    ctx.io.stdout(`==> ${file.file} <==\n${file.removed_file ? '(removed)\n' : file.content}`);
}
