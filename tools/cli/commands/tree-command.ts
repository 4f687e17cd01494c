import type { Argv as Yargs } from 'yargs';
import { tree } from '../../trees/hierarchy.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';
import { relativeTime, styledTable } from '../format.js';
import type { TreeRow } from '../../trees/hierarchy.js';
import type { Context } from '../command-context.js';

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
  const { palette, width } = ctx.style;
  if (palette.enabled || Number.isFinite(width)) return ctx.outStyled(styledTree(ctx, rows, now));
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

/**
 * The tree on a terminal: the same rows as aligned, coloured columns (id indented by depth, agent, phase,
 * updated), then the purpose cut to the width; an orphan's note comes before the purpose, so it is never cut.
 */
function styledTree(ctx: Context, rows: TreeRow[], now: number): string[] {
  const { palette, width } = ctx.style;
  const cells = rows.map((r) => [
    `${'  '.repeat(r.depth)}${r.agent_id}`,
    r.agent_name,
    r.phase,
    relativeTime(r.last_updated, now),
    `${r.orphan ? `(orphan: parent ${r.parent_session_id} is gone) ` : ''}${r.purpose ?? ''}`,
  ]);
  const paint = (row: number, col: number, text: string) =>
    col === 2 ? palette.phase(rows[row]!.phase, text) : col === 3 ? palette.dim(text) : text;
  return styledTable(['SESSION', 'AGENT', 'PHASE', 'UPDATED', 'PURPOSE'], cells, { palette, width, paint });
}
