import type { Argv as Yargs } from 'yargs';
import type { Phase } from '../../phases.js';
import { listOrphans } from '../../trees/hierarchy.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { relativeTime, styledTable, table } from '../format.js';
import { checkLimit } from '../parse.js';
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

/** What a terminal shows without --limit: a screenful to read, not 100,000 lines to scroll. */
const TERMINAL_LIMIT = 50;

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
    .option('limit', {
      type: 'string',
      requiresArg: true,
      describe: `At most N sessions, 0 for all (on a terminal the default is ${TERMINAL_LIMIT})`,
    })
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
    limit: checkLimit(argv.limit, '--limit'),
  };
  // A person at a terminal gets the newest ones and a count of the rest; scripts and --json get everything.
  const cut = argv.limit === undefined && ctx.io.isTTY === true && !argv.json;
  const result = argv.orphans ? await listOrphans(sessions, filter) : await sessions.list(filter);
  for (const problem of result.problems) ctx.warn(`skipped ${problem.id} (${problem.code}): ${problem.message}`);
  if (argv.json) return ctx.json(result);
  if (result.sessions.length === 0) return ctx.out('No sessions.');
  const now = sessions.now();
  const shown = cut ? result.sessions.slice(0, TERMINAL_LIMIT) : result.sessions;
  const rows = shown.map((s) => [
    s.agent_id,
    s.agent_name,
    s.phase,
    s.status,
    relativeTime(s.last_updated, now),
    s.purpose ?? '',
  ]);
  const header = ['ID', 'AGENT', 'PHASE', 'STATUS', 'UPDATED', 'PURPOSE'];
  const more = result.sessions.length - shown.length;
  const { palette, width } = ctx.style;
  if (!palette.enabled && !Number.isFinite(width) && more === 0) return ctx.outLines(table(header, rows));
  const paint = (row: number, col: number, text: string) => {
    if (col === 2) return palette.phase(shown[row]!.phase, text);
    if (col === 3 && shown[row]!.status.startsWith('paused')) return palette.phase(shown[row]!.phase, text);
    return col === 4 ? palette.dim(text) : text;
  };
  const lines = styledTable(header, rows, { palette, width, paint });
  if (more > 0) lines.push(palette.dim(`\u2026 ${more} more (--limit 0 for all)`));
  return ctx.outStyled(lines);
}
