import type { Argv as Yargs } from 'yargs';
import { OUTCOMES, type Outcome } from '../../phases.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';

interface Args {
  id: string;
  outcome: Outcome;
  summary?: string;
}

export const command = 'finalize <id> <outcome>';
export const describe = `End a session: ${OUTCOMES.join(', ')} (same outcome twice is a no-op)`;

export function builder(yargs: Yargs) {
  return yargs
    .positional('id', { type: 'string', describe: 'Session id or Claude Code agent id' })
    .positional('outcome', { type: 'string', describe: OUTCOMES.join(' | ') })
    .option('summary', { type: 'string', requiresArg: true, describe: 'What came of it' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const sessions = openExisting(argv, argv.id);
  const record = await sessions.finalize(resolveSessionRef(sessions, argv.id), argv.outcome, argv.summary);
  if (argv.json) ctx.json(record);
  else ctx.out(`Session ${record.agent_id} is ${record.phase} (ran ${record.duration_seconds} s).`);
}
