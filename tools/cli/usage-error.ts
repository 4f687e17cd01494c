import { OUTCOMES } from '../phases.js';
import { closest } from '../suggest.js';

/** What the wording needs: the command line, the matched command (`show <id>`), what exists. */
interface UsageContext {
  argv: string[];
  /** The matched command's yargs form, like `finalize <id> <outcome>`; undefined when none matched. */
  command?: string;
  /** Every command's yargs form. */
  commands: string[];
  /** The options known to the matched command (or the global ones). */
  options: string[];
}

/** What a missing positional argument is, for "show needs a session id". */
const POSITIONAL_NOUNS: Record<string, string> = {
  id: 'a session id',
  outcome: `an outcome (${OUTCOMES.join(', ')})`,
  file: 'a bundle file',
  target: 'a session id or a trash entry',
};

/**
 * yargs's wording, replaced where it is yargs's own rather than the user's: one sentence naming what
 * is wrong, with the closest option or command for a misspelt one.
 */
export function describeUsageError(text: string, ctx: UsageContext): string {
  // recommendCommands suggests a command however far from the word ("foo": "Did you mean show?").
  if (text.startsWith('Did you mean')) return unknownCommand(ctx);
  const name = ctx.command?.split(' ')[0];
  const missing = /^Not enough non-option arguments: got (\d+)/.exec(text);
  if (missing && ctx.command) {
    const wanted = [...ctx.command.matchAll(/<(\w+)>/g)].map((m) => m[1]!);
    const arg = wanted[Number(missing[1])] ?? wanted[0]!;
    return `${name} needs ${POSITIONAL_NOUNS[arg] ?? arg}: agent-session ${ctx.command}`;
  }
  const required = /^Missing required arguments?: (.*)$/s.exec(text);
  if (required && name) {
    const flags = required[1]!.split(', ').map((o) => `--${o}`);
    return `${name} needs ${flags.join(' and ')} (agent-session ${name} --help)`;
  }
  const noValue = /^Not enough arguments following: (.*)$/s.exec(text);
  if (noValue) return `${dashes(noValue[1]!, ctx.argv)} needs a value`;
  const unknown = /^Unknown arguments?: (.*)$/s.exec(text);
  if (unknown) return unknownArguments(unknown[1]!.split(', '), ctx);
  return text;
}

/** Where the first word that is not an option (nor --dir's value) is: the command the user meant (-1: none). */
export function commandIndex(argv: string[]): number {
  return argv.findIndex((a, i) => !a.startsWith('-') && argv[i - 1] !== '--dir');
}

function commandWord(argv: string[]): string | undefined {
  return argv[commandIndex(argv)];
}

/**
 * `help bogus` / `bogus --help`: yargs shows the general help and exits 0 when the word is no command;
 * the message of an unknown command instead (undefined when the word is a command, or there is none).
 */
export function unknownHelpTopic(argv: string[], commands: string[]): string | undefined {
  if (!argv.includes('--help') && !argv.includes('-h')) return undefined;
  const word = commandWord(argv);
  if (word === undefined || word === 'help' || commands.some((c) => c.split(' ')[0] === word)) return undefined;
  return unknownCommand({ argv, commands, options: [] });
}

function unknownCommand({ argv, commands }: UsageContext): string {
  const word = commandWord(argv);
  const names = commands.map((c) => c.split(' ')[0]!);
  const suggestion = word === undefined ? undefined : closest(word, names);
  const hint = suggestion ? `; did you mean ${suggestion}?` : ' (agent-session --help lists them)';
  return `unknown command ${JSON.stringify(word ?? '')}${hint}`;
}

/** Unknown options get the closest known one; a stray word is named with the command's usage. */
function unknownArguments(names: string[], ctx: UsageContext): string {
  const { argv, command } = ctx;
  // yargs knows each option under its camelCase alias too, and under one-letter aliases: suggest the long form.
  const flags = ctx.options.filter((k) => k.length > 1 && !/[A-Z]/.test(k));
  const dashed = (name: string) =>
    argv.some((a) => a === `-${name}` || a === `--${name}` || a.startsWith(`--${name}=`) || a === `--no-${name}`) ||
    (name.length === 1 && argv.some((a) => /^-[^-]/.test(a) && a.includes(name)));
  const options = names.filter(dashed);
  if (options.length === 0) {
    if (!command) return unknownCommand(ctx);
    const words = names.map((n) => JSON.stringify(n)).join(', ');
    return `unexpected argument${names.length > 1 ? 's' : ''} ${words}: agent-session ${command}`;
  }
  const help = command ? `agent-session ${command.split(' ')[0]} --help` : 'agent-session --help';
  if (options.length === 1) {
    const suggestion = suggest(options[0]!, flags, argv);
    const hint = suggestion ? `; did you mean --${suggestion}?` : ` (${help} lists them)`;
    return `unknown option ${dashes(options[0]!, argv)}${hint}`;
  }
  const parts = options.map((name) => {
    const suggestion = suggest(name, flags, argv);
    return suggestion ? `${dashes(name, argv)} (did you mean --${suggestion}?)` : dashes(name, argv);
  });
  return `unknown options ${parts.join(', ')}; ${help} lists them`;
}

/** As typed: `--j` stays `--j` (yargs reports it as the one-letter option `j`). */
function dashes(name: string, argv: string[] = []): string {
  const long = argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  return name.length === 1 && !long ? `-${name}` : `--${name}`;
}

/** The closest option; for a long option cut short (`--j`, `--ver`), the one option it begins. */
function suggest(name: string, flags: string[], argv: string[]): string | undefined {
  const near = closest(name, flags);
  if (near || !dashes(name, argv).startsWith('--')) return near;
  const begun = flags.filter((f) => f.startsWith(name));
  return begun.length === 1 ? begun[0] : undefined;
}
