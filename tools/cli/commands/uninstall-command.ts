import type { Argv as Yargs } from 'yargs';
import { uninstallHooks } from '../../install/install.js';
import type { Argv } from '../command-context.js';
import { installOptions, printReport, type InstallArgs } from './install-command.js';

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
    .option('dry-run', { type: 'boolean', describe: 'Print the resulting settings files; change nothing' });
}

export async function handler(argv: Argv<InstallArgs>) {
  printReport(argv.ctx, await uninstallHooks(installOptions(argv)), argv.json === true);
}
