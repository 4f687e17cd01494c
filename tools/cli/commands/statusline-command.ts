import type { Argv as Yargs } from 'yargs';
import { readStdin } from '../../stdio.js';
import { SessionError } from '../../errors.js';
import { statusLineText } from '../../statusline/statusline.js';
import type { Argv } from '../command-context.js';

export const command = 'statusline';
export const describe =
  "Print Claude Code's status line for the conversation whose JSON is on stdin (for the statusLine setting: " +
  'install --statusline); nothing when there is nothing to say';

export function builder(yargs: Yargs) {
  // The line is for Claude Code's screen: there is no JSON form of it.
  return yargs.hide('json');
}

/**
 * The same line as dist/hooks/statusline.js, the command `install --statusline` writes (which does not
 * load the CLI), for trying it by hand: `--dir` names the store. A usage error is reported as by every
 * command (exit 2); past that it never fails: bad input, no store or any error prints nothing, exit 0.
 */
export async function handler(argv: Argv<object>) {
  const { io } = argv.ctx;
  if (argv.json)
    throw new SessionError(
      'EINVALID',
      'statusline has no --json: it prints the one line Claude Code shows (for figures use stats --json)',
      { details: { usage: true } },
    );
  const stdin = await readStdin().catch(() => undefined);
  const where = { env: io.env, cwd: io.cwd, dir: argv.dir };
  const line = stdin?.ok ? await statusLineText(stdin.text, where) : '';
  if (line !== '') io.stdout(`${line}\n`);
}
