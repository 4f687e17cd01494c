import type { Argv as Yargs } from 'yargs';
import type { Argv } from '../command-context.js';
import { resolveSessionRef } from '../session-ref.js';
import { parseMetadata } from '../parse.js';

interface Args {
  agent: string;
  purpose?: string;
  metadata?: string;
  parent?: string;
  id?: string;
}

export const command = 'create';
export const describe = 'Create a session (phase initializing)';

export function builder(yargs: Yargs) {
  return yargs
    .option('agent', {
      type: 'string',
      demandOption: true,
      requiresArg: true,
      describe: 'Agent name (for example the subagent type)',
    })
    .option('purpose', { type: 'string', requiresArg: true, describe: 'What the session is for' })
    .option('metadata', { type: 'string', requiresArg: true, describe: 'Initial metadata, a JSON object' })
    .option('parent', { type: 'string', requiresArg: true, describe: 'Parent session id or Claude Code agent id' })
    .option('id', { type: 'string', requiresArg: true, describe: 'Use this id instead of a generated one' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const metadata = parseMetadata(argv.metadata);
  const sessions = ctx.open(argv);
  const record = await sessions.create({
    agentName: argv.agent,
    purpose: argv.purpose,
    metadata,
    parent: argv.parent === undefined ? undefined : resolveSessionRef(sessions, argv.parent),
    id: argv.id,
  });
  if (argv.json) ctx.json(record);
  else ctx.out(`Created session ${record.agent_id} for agent ${record.agent_name} (phase ${record.phase}).`);
}
