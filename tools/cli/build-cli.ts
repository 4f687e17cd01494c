import yargs from 'yargs';
import { SessionError } from '../errors.js';
import * as audit from './commands/audit-command.js';
import * as children from './commands/children-command.js';
import * as cleanup from './commands/cleanup-command.js';
import * as deleteCommand from './commands/delete-command.js';
import * as restore from './commands/restore-command.js';
import * as trash from './commands/trash-command.js';
import * as tree from './commands/tree-command.js';
import * as create from './commands/create-command.js';
import * as demo from './commands/demo-command.js';
import * as doctorCommand from './commands/doctor-command.js';
import * as exportCommand from './commands/export-command.js';
import * as finalize from './commands/finalize-command.js';
import * as get from './commands/get-command.js';
import * as importCommand from './commands/import-command.js';
import * as install from './commands/install-command.js';
import * as list from './commands/list-command.js';
import * as shouldResume from './commands/should-resume-command.js';
import * as show from './commands/show-command.js';
import * as statusCommand from './commands/status-command.js';
import * as uninstall from './commands/uninstall-command.js';
import * as update from './commands/update-command.js';
import type { Context } from './command-context.js';

const COMMANDS = [
  create,
  update,
  shouldResume,
  get,
  show,
  list,
  finalize,
  children,
  tree,
  deleteCommand,
  restore,
  trash,
  cleanup,
  audit,
  exportCommand,
  importCommand,
  doctorCommand,
  statusCommand,
  install,
  uninstall,
  demo,
];

/** A configured yargs instance; nothing runs until it is parsed. */
export function buildCli(argv: string[], ctx: Context) {
  const cli = yargs(argv)
    // A repeated option takes its last value; yargs would pass an array to code expecting one string.
    .parserConfiguration({ 'duplicate-arguments-array': false })
    .scriptName('agent-session')
    .usage('$0 <command> [options]\n\nDurable sessions for AI coding agents. See SESSION_README.md.')
    .option('dir', {
      type: 'string',
      requiresArg: true,
      describe: 'Session store directory (default: <project>/.claude/session)',
      global: true,
    })
    .option('json', { type: 'boolean', describe: 'Print exactly one JSON document on stdout', global: true })
    .middleware((args) => {
      // Runs after the command's builder: the options known now include the command's own.
      // (getOptions is yargs's, missing from @types/yargs; cli.test.mjs fails if it ever goes.)
      checkBooleanValues(argv, (cli as unknown as { getOptions(): { boolean: string[] } }).getOptions().boolean);
      args.ctx = ctx;
    })
    .demandCommand(1, 'Name a command.')
    .recommendCommands()
    .strict()
    .help()
    .version(false)
    .wrap(Math.min(100, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((message, err) => {
      // yargs reports some usage errors (a missing option value) as a YError: a usage error, not an internal one.
      if (err && err.name !== 'YError') throw err;
      let text = message ?? err?.message ?? 'invalid command line';
      // recommendCommands says only "Did you mean show?": say what is wrong first.
      if (text.startsWith('Did you mean')) text = `unknown command. ${text}`;
      throw new SessionError('EINVALID', text, { details: { usage: true } });
    });
  for (const module of COMMANDS) cli.command(module as never);
  return cli;
}

/**
 * yargs reads `--dry-run=yes` as false: a dry run that writes. A yes/no option given a value takes
 * only `true` or `false`, like `--dry-run=true`; anything else is a usage error.
 */
function checkBooleanValues(argv: string[], booleans: string[]): void {
  const names = new Set(booleans.flatMap((name) => [name, kebab(name)]));
  for (const arg of argv) {
    if (arg === '--') return;
    const match = /^--(?:no-)?([^=]+)=(.*)$/s.exec(arg);
    if (match && names.has(match[1]!) && match[2] !== 'true' && match[2] !== 'false') {
      throw new SessionError('EINVALID', `--${match[1]} takes no value (or true/false), not "${match[2]}"`, {
        details: { usage: true },
      });
    }
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
