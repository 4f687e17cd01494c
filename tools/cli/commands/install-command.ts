import type { Argv as Yargs } from 'yargs';
import { installHooks, type InstallReport } from '../../install/install.js';
import type { Argv, Context } from '../command-context.js';

export interface InstallArgs {
  user?: boolean;
  dryRun?: boolean;
}

export const command = 'install';
export const describe =
  "Add the Claude Code hooks to the project's .claude/settings.json (or ~/.claude/settings.json with --user)";

export function builder(yargs: Yargs) {
  return yargs
    .option('user', {
      type: 'boolean',
      describe: 'Install into ~/.claude/settings.json (every project) instead of the project',
    })
    .option('dry-run', { type: 'boolean', describe: 'Print the resulting settings file; change nothing' });
}

export async function handler(argv: Argv<InstallArgs>) {
  const { ctx } = argv;
  const report = await installHooks({
    user: argv.user,
    dryRun: argv.dryRun,
    cwd: ctx.io.cwd,
    env: ctx.io.env,
    now: ctx.io.now?.(),
  });
  printReport(ctx, report, argv.json === true);
}

/** Shared by install and uninstall: the JSON report, the file for a dry run, else one line per fact. */
export function printReport(ctx: Context, report: InstallReport, json: boolean): void {
  const { content, ...rest } = report;
  if (json) return ctx.json(report.dry_run ? { ...rest, content } : rest);
  if (report.dry_run) return ctx.io.stdout(content);
  const verb =
    report.action === 'install' ? 'Installed the agent-session hooks in' : 'Removed the agent-session hooks from';
  if (!report.changed)
    ctx.out(
      `${report.file}: ${report.action === 'install' ? 'hooks already installed' : 'no agent-session hooks'}; ` +
        'nothing changed.',
    );
  else ctx.out(`${verb} ${report.file}${report.backup ? ` (previous version: ${report.backup})` : ''}.`);
  for (const entry of report.added)
    ctx.out(`  + ${entry.event}${entry.matcher ? ` [${entry.matcher}]` : ''}: ${entry.command}`);
  for (const entry of report.removed)
    ctx.out(`  - ${entry.event}${entry.matcher ? ` [${entry.matcher}]` : ''}: ${entry.command}`);
  if (report.gitignore?.changed) ctx.out(`Added .claude/session/ to ${report.gitignore.file}.`);
}
