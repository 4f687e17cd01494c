import yargs, { type Argv as Yargs } from 'yargs';
import { SessionError } from '../errors.js';
import * as audit from './commands/audit-command.js';
import * as children from './commands/children-command.js';
import * as cleanup from './commands/cleanup-command.js';
import * as deleteCommand from './commands/delete-command.js';
import * as restore from './commands/restore-command.js';
import * as trash from './commands/trash-command.js';
import * as tree from './commands/tree-command.js';
import * as create from './commands/create-command.js';
import * as dashboard from './commands/dashboard-command.js';
import * as demo from './commands/demo-command.js';
import * as doctorCommand from './commands/doctor-command.js';
import * as exportCommand from './commands/export-command.js';
import * as finalize from './commands/finalize-command.js';
import * as get from './commands/get-command.js';
import * as importCommand from './commands/import-command.js';
import * as install from './commands/install-command.js';
import * as list from './commands/list-command.js';
import * as mcp from './commands/mcp-command.js';
import * as shouldResume from './commands/should-resume-command.js';
import * as show from './commands/show-command.js';
import * as stats from './commands/stats-command.js';
import * as statusCommand from './commands/status-command.js';
import * as statusline from './commands/statusline-command.js';
import * as uninstall from './commands/uninstall-command.js';
import * as update from './commands/update-command.js';
import * as watch from './commands/watch-command.js';
import type { Context } from './command-context.js';
import { describeUsageError } from './usage-error.js';

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
  stats,
  watch,
  exportCommand,
  importCommand,
  doctorCommand,
  statusCommand,
  statusline,
  install,
  uninstall,
  mcp,
  dashboard,
  demo,
];

/** Set by scripts/build.mjs from package.json. */
declare const AGENT_SESSION_VERSION: string;

type CommandModule = (typeof COMMANDS)[number];

/** Every command's yargs form, like `finalize <id> <outcome>`. */
export const COMMAND_FORMS: string[] = COMMANDS.map((m) => m.command);

/** A configured yargs instance; nothing runs until it is parsed. */
export function buildCli(argv: string[], ctx: Context) {
  // The command whose builder ran: yargs runs only the matched command's, before any usage error.
  let current: CommandModule | undefined;
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
      checkBooleanValues(argv, knownOptions(cli).boolean);
      // `--dir ""` would make the working directory itself the store.
      if (args.dir === '')
        throw new SessionError('EINVALID', '--dir needs a directory, not an empty string', {
          details: { usage: true },
        });
      args.ctx = ctx;
    })
    .demandCommand(1, 'name a command (agent-session --help lists them)')
    .recommendCommands()
    .strict()
    .help()
    .alias('help', 'h')
    .version('version', 'Print the version of agent-session', AGENT_SESSION_VERSION)
    .alias('version', ['V', 'v'])
    .wrap(Math.min(100, ctx.io.columns || 100))
    .exitProcess(false)
    .fail((message, err) => {
      // yargs reports some usage errors (a missing option value) as a YError: a usage error, not an internal one.
      if (err && err.name !== 'YError') throw err;
      const text = describeUsageError(message ?? err?.message ?? 'invalid command line', {
        argv,
        command: current?.command,
        commands: COMMAND_FORMS,
        options: Object.keys(knownOptions(cli).key),
      });
      throw new SessionError('EINVALID', text, { details: { usage: true } });
    });
  for (const module of COMMANDS) {
    const { builder } = module as { builder: ((y: Yargs) => Yargs) | Record<string, never> };
    const tracked = (y: Yargs) => {
      current = module;
      return typeof builder === 'function' ? builder(y) : y;
    };
    cli.command({ ...module, builder: tracked } as never);
  }
  skipHelpCache(cli);
  return cli;
}

/**
 * yargs renders the whole help text each time it starts a command's handler, kept in case the handler
 * fails and help is shown; `fail` above never shows it. Skipping it saves every command run about 3 ms
 * (bench/README.md, "The CLI's start and the library's import"). The usage instance is yargs's,
 * missing from @types/yargs; cli.test.mjs fails if it ever goes (then the help is rendered as before,
 * only slower).
 */
function skipHelpCache(cli: unknown): void {
  type Internals = { getInternalMethods(): { getUsageInstance(): { cacheHelpMessage(): void } } };
  const usage = (cli as Internals).getInternalMethods?.().getUsageInstance?.();
  if (typeof usage?.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

/** yargs's option table (getOptions is yargs's, missing from @types/yargs; cli.test.mjs fails if it ever goes). */
function knownOptions(cli: unknown): { boolean: string[]; key: Record<string, unknown> } {
  return (cli as { getOptions(): { boolean: string[]; key: Record<string, unknown> } }).getOptions();
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
