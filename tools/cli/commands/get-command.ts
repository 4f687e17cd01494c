import type { Argv as Yargs } from 'yargs';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';

export const command = 'get <id>';
export const describe = 'Print the session record (state.json)';

export function builder(yargs: Yargs) {
  return yargs.positional('id', { type: 'string', describe: 'Session id or Claude Code agent id' });
}

export async function handler(argv: Argv<{ id: string }>) {
  const sessions = openExisting(argv, argv.id);
  argv.ctx.json(await sessions.get(resolveSessionRef(sessions, argv.id)));
}
