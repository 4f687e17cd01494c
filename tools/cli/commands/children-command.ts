import type { Argv as Yargs } from 'yargs';
import { children } from '../../trees/hierarchy.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';
import { relativeTime, table } from '../format.js';

export const command = 'children <id>';
export const describe = 'The direct children of a session (sessions it delegated to)';

export function builder(yargs: Yargs) {
  return yargs.positional('id', { type: 'string', describe: 'Parent session id or Claude Code agent id' });
}

export async function handler(argv: Argv<{ id: string }>) {
  const { ctx } = argv;
  const sessions = openExisting(argv, argv.id);
  const id = resolveSessionRef(sessions, argv.id);
  const kids = await children(sessions, id);
  if (argv.json) return ctx.json({ parent: id, children: kids });
  if (kids.length === 0) return ctx.out(`Session ${id} has no children.`);
  const now = sessions.now();
  const rows = kids.map((s) => [s.agent_id, s.agent_name, s.phase, relativeTime(s.last_updated, now), s.purpose ?? '']);
  for (const line of table(['ID', 'AGENT', 'PHASE', 'UPDATED', 'PURPOSE'], rows)) ctx.out(line);
}
