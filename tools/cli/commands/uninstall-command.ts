import type { Argv as Yargs } from 'yargs';
import { uninstallHooks, uninstallMcp, uninstallStatusLine } from '../../install/install.js';
import type { Argv } from '../command-context.js';
import { installOptions, printMcpReport, printReport, type InstallArgs } from './install-command.js';

export const command = 'uninstall';
export const describe =
  "Remove the agent-session hooks from the project's .claude/settings.json and .claude/settings.local.json " +
  '(or ~/.claude/settings.json with --user)';

export function builder(yargs: Yargs) {
  return yargs
    .option('user', { type: 'boolean', describe: 'Uninstall from ~/.claude/settings.json instead of the project' })
    .option('allow-self', {
      type: 'boolean',
      describe: "Allow changing the agent-session repository's own settings",
    })
    .option('mcp', { type: 'boolean', describe: "Remove the MCP server from the project's .mcp.json instead" })
    .option('statusline', { type: 'boolean', describe: "Remove agent-session's status line instead" })
    .conflicts('mcp', 'statusline')
    .option('dry-run', { type: 'boolean', describe: 'Print the resulting settings files; change nothing' });
}

export async function handler(argv: Argv<InstallArgs>) {
  if (argv.mcp)
    return printMcpReport(argv.ctx, await uninstallMcp(installOptions(argv, 'uninstall')), argv.json === true);
  if (argv.statusline)
    return printReport(
      argv.ctx,
      await uninstallStatusLine(installOptions(argv, 'uninstall')),
      argv.json === true,
      'status line',
    );
  printReport(argv.ctx, await uninstallHooks(installOptions(argv, 'uninstall')), argv.json === true);
}
