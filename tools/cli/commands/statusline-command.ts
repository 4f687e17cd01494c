import type { Argv as Yargs } from 'yargs';
import { readStdin } from '../../claude/run/hook-io.js';
import { statusLineText } from '../../statusline/statusline.js';
import type { Argv } from '../command-context.js';

export const command = 'statusline';
export const describe =
  "Print Claude Code's status line for the conversation whose JSON is on stdin (for the statusLine setting: " +
  'install --statusline); nothing when there is nothing to say';

export function builder(yargs: Yargs) {
  return yargs;
}

/**
 * The same line as dist/hooks/statusline.js, the command `install --statusline` writes (which does not
 * load the CLI). Never fails: bad input, no store or any error prints nothing, exit 0.
 */
export async function handler(argv: Argv<object>) {
  const { io } = argv.ctx;
  const stdin = await readStdin().catch(() => undefined);
  const line = stdin?.ok ? await statusLineText(stdin.text, { env: io.env, cwd: io.cwd }) : '';
  if (line !== '') io.stdout(`${line}\n`);
}
