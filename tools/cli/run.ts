import { environmentWarnings } from '../config.js';
import { formatError, SessionError } from '../errors.js';
import { buildCli, COMMAND_FORMS } from './build-cli.js';
import { makeContext, type Io } from './command-context.js';
import { exitCodeFor } from './exit-codes.js';
import { commandIndex, unknownHelpTopic } from './usage-error.js';

/** Runs one command line and returns its exit code; all output goes through `io`. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  const ctx = makeContext(io);
  // A misspelt variable would otherwise be ignored without a word: said once, never refused.
  for (const warning of environmentWarnings(io.env)) ctx.warn(`warning: ${warning.message}`);
  try {
    let output = '';
    // A bare `agent-session` is someone finding out what it does: the usage, not an error.
    const args = argv.length === 0 ? ['--help'] : helpCommand(argv);
    const unknown = unknownHelpTopic(args, COMMAND_FORMS);
    if (unknown) throw new SessionError('EINVALID', unknown, { details: { usage: true } });
    await buildCli(args, ctx).parseAsync(args, {}, (_err, _args, text) => {
      output = text;
    });
    // yargs hands back help and version text instead of printing it.
    if (output) io.stdout(`${output}\n`);
    return ctx.exitCode;
  } catch (err) {
    io.stderr(`${describeFailure(err, io.env)}\n`);
    return err instanceof SessionError ? exitCodeFor(err.code) : exitCodeFor(undefined);
  }
}

/** `agent-session help [command]`, as git and npm accept it: the same as `agent-session [command] --help`. */
function helpCommand(argv: string[]): string[] {
  const at = commandIndex(argv);
  return argv[at] === 'help' ? [...argv.slice(0, at), ...argv.slice(at + 1), '--help'] : argv;
}

function describeFailure(err: unknown, env: Record<string, string | undefined>): string {
  if (env.AGENT_SESSION_DEBUG === '1' && err instanceof Error) return `${formatError(err)}\n${err.stack}`;
  if (err instanceof SessionError) return formatError(err);
  return `${formatError(err)} (internal error; set AGENT_SESSION_DEBUG=1 for details)`;
}
