import yargs, { type Argv as Yargs } from 'yargs';
import { SessionError } from '../errors.js';
import { OUTCOMES } from '../phases.js';
import { closest } from '../suggest.js';
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
  install,
  uninstall,
  demo,
];

/** Set by scripts/build.mjs from package.json. */
declare const AGENT_SESSION_VERSION: string;

type CommandModule = (typeof COMMANDS)[number];

/** What a missing positional argument is, for "show needs a session id". */
const POSITIONAL_NOUNS: Record<string, string> = {
  id: 'a session id',
  outcome: `an outcome (${OUTCOMES.join(', ')})`,
  file: 'a bundle file',
  target: 'a session id or a trash entry',
};

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
    .wrap(Math.min(100, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((message, err) => {
      // yargs reports some usage errors (a missing option value) as a YError: a usage error, not an internal one.
      if (err && err.name !== 'YError') throw err;
      const text = describeUsageError(message ?? err?.message ?? 'invalid command line', argv, current, cli);
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
  return cli;
}

/** yargs's option table (getOptions is yargs's, missing from @types/yargs; cli.test.mjs fails if it ever goes). */
function knownOptions(cli: unknown): { boolean: string[]; key: Record<string, unknown> } {
  return (cli as { getOptions(): { boolean: string[]; key: Record<string, unknown> } }).getOptions();
}

/** yargs's wording, replaced where it is yargs's own rather than the user's: a sentence naming what is wrong. */
function describeUsageError(text: string, argv: string[], current: CommandModule | undefined, cli: unknown): string {
  // recommendCommands suggests a command however far from the word ("foo": "Did you mean show?").
  if (text.startsWith('Did you mean')) return describeUnknownCommand(argv);
  const usage = current ? `agent-session ${current.command}` : 'agent-session <command>';
  const name = current?.command.split(' ')[0];
  const missing = /^Not enough non-option arguments: got (\d+)/.exec(text);
  if (missing && current) {
    const wanted = [...current.command.matchAll(/<(\w+)>/g)].map((m) => m[1]!);
    const arg = wanted[Number(missing[1])] ?? wanted[0]!;
    return `${name} needs ${POSITIONAL_NOUNS[arg] ?? arg}: ${usage}`;
  }
  const required = /^Missing required arguments?: (.*)$/s.exec(text);
  if (required) {
    const flags = required[1]!.split(', ').map((o) => `--${o}`);
    return `${name ?? 'this command'} needs ${flags.join(' and ')} (agent-session ${name} --help)`;
  }
  const noValue = /^Not enough arguments following: (.*)$/s.exec(text);
  if (noValue) return `${noValue[1]!.length === 1 ? '-' : '--'}${noValue[1]} needs a value`;
  const unknown = /^Unknown arguments?: (.*)$/s.exec(text);
  if (unknown) return describeUnknown(unknown[1]!.split(', '), argv, current, knownOptions(cli).key);
  return text;
}

/** The first word that is not an option (nor --dir's value): the command the user meant. */
function describeUnknownCommand(argv: string[]): string {
  const word = argv.find((a, i) => !a.startsWith('-') && argv[i - 1] !== '--dir');
  const names = COMMANDS.map((m) => m.command.split(' ')[0]!);
  const suggestion = word === undefined ? undefined : closest(word, names);
  const hint = suggestion ? `; did you mean ${suggestion}?` : ' (agent-session --help lists them)';
  return `unknown command ${JSON.stringify(word ?? '')}${hint}`;
}

/** Unknown options get the closest known one; a stray word is named with the command's usage. */
function describeUnknown(
  names: string[],
  argv: string[],
  current: CommandModule | undefined,
  known: Record<string, unknown>,
): string {
  const flags = Object.keys(known).filter((k) => k.length > 1 && !/[A-Z]/.test(k));
  const dashed = (name: string) =>
    argv.some((a) => a === `-${name}` || a === `--${name}` || a.startsWith(`--${name}=`) || a === `--no-${name}`) ||
    (name.length === 1 && argv.some((a) => /^-[^-]/.test(a) && a.includes(name)));
  const options = names.filter(dashed);
  if (options.length > 0) {
    const help = current ? `agent-session ${current.command.split(' ')[0]} --help` : 'agent-session --help';
    const shown = (name: string) => (name.length === 1 ? `-${name}` : `--${name}`);
    if (options.length === 1) {
      const suggestion = closest(options[0]!, flags);
      const hint = suggestion ? `; did you mean --${suggestion}?` : ` (${help} lists them)`;
      return `unknown option ${shown(options[0]!)}${hint}`;
    }
    const parts = options.map((name) => {
      const suggestion = closest(name, flags);
      return suggestion ? `${shown(name)} (did you mean --${suggestion}?)` : shown(name);
    });
    return `unknown options ${parts.join(', ')}; ${help} lists them`;
  }
  if (!current) return describeUnknownCommand(argv);
  const words = names.map((n) => JSON.stringify(n)).join(', ');
  return `unexpected argument${names.length > 1 ? 's' : ''} ${words}: agent-session ${current.command}`;
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
