import type { Argv as Yargs } from 'yargs';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';

export const command = 'get <id>';
export const describe = 'Print the session record (state.json)';

export function builder(yargs: Yargs) {
  return yargs.positional('id', { type: 'string', describe: 'Session id' });
}

export async function handler(argv: Argv<{ id: string }>) {
  argv.ctx.json(await openExisting(argv, argv.id).get(argv.id));
}
