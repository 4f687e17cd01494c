import type { Argv as Yargs } from 'yargs';
import { tree } from '../../trees/hierarchy.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';
import { relativeTime } from '../format.js';

export const command = 'tree [id]';
export const describe = 'The session tree under ID (the whole store without ID), indented by depth';

export function builder(yargs: Yargs) {
  return yargs.positional('id', { type: 'string', describe: 'Root session id or Claude Code agent id' });
}

export async function handler(argv: Argv<{ id?: string }>) {
  const { ctx } = argv;
  const sessions = openExisting(argv, argv.id);
  const id = argv.id === undefined ? undefined : resolveSessionRef(sessions, argv.id);
  const rows = await tree(sessions, id);
  if (argv.json) return ctx.json({ root: id ?? null, sessions: rows });
  if (rows.length === 0) return ctx.out('No sessions.');
  const now = sessions.now();
  return ctx.outLines(
    rows.map((r) => {
      const orphan = r.orphan ? `  (orphan: parent ${r.parent_session_id} is gone)` : '';
      return (
        `${'  '.repeat(r.depth)}${r.agent_id}  ${r.agent_name}  ${r.phase}  ` +
        `${relativeTime(r.last_updated, now)}${orphan}`
      );
    }),
  );
}
