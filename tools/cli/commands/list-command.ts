import type { Argv as Yargs } from 'yargs';
import type { Phase } from '../../phases.js';
import { listOrphans } from '../../trees/hierarchy.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { relativeTime, table } from '../format.js';
import { checkCount } from '../parse.js';
import { resolveSessionRef } from '../session-ref.js';

interface Args {
  activeOnly?: boolean;
  paused?: boolean;
  agent?: string;
  phase?: Phase;
  parent?: string;
  limit?: string;
  orphans?: boolean;
}

export const command = 'list';
export const describe = 'List sessions, newest first';

export function builder(yargs: Yargs) {
  return yargs
    .option('active-only', { type: 'boolean', describe: 'Only sessions that would resume now' })
    .option('paused', {
      type: 'boolean',
      describe: 'Only paused sessions (approval, investigating, planning), resumable now or not',
    })
    .option('agent', { type: 'string', requiresArg: true, describe: 'Only this agent name' })
    .option('phase', { type: 'string', requiresArg: true, describe: 'Only this phase' })
    .option('parent', {
      type: 'string',
      requiresArg: true,
      describe: 'Only children of this session (or Claude Code agent id)',
    })
    .option('limit', { type: 'string', requiresArg: true, describe: 'At most N sessions (a whole number)' })
    .option('orphans', { type: 'boolean', describe: 'Only sessions whose parent no longer exists' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const sessions = openExisting(argv);
  const filter = {
    activeOnly: argv.activeOnly,
    paused: argv.paused,
    agentName: argv.agent,
    phase: argv.phase,
    parent: argv.parent === undefined ? undefined : resolveSessionRef(sessions, argv.parent),
    limit: checkCount(argv.limit, '--limit'),
  };
  const result = argv.orphans ? await listOrphans(sessions, filter) : await sessions.list(filter);
  for (const problem of result.problems) ctx.warn(`skipped ${problem.id} (${problem.code}): ${problem.message}`);
  if (argv.json) return ctx.json(result);
  if (result.sessions.length === 0) return ctx.out('No sessions.');
  const now = sessions.now();
  const rows = result.sessions.map((s) => [
    s.agent_id,
    s.agent_name,
    s.phase,
    s.status,
    relativeTime(s.last_updated, now),
    s.purpose ?? '',
  ]);
  return ctx.outLines(table(['ID', 'AGENT', 'PHASE', 'STATUS', 'UPDATED', 'PURPOSE'], rows));
}
