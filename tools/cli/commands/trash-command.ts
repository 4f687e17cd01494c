import type { Argv as Yargs } from 'yargs';
import { listTrash } from '../../trees/restore.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { relativeTime, table } from '../format.js';

export const command = 'trash';
export const describe = 'List deleted subtrees that can be restored';

export function builder(yargs: Yargs) {
  return yargs;
}

export async function handler(argv: Argv<object>) {
  const { ctx } = argv;
  const sessions = openExisting(argv);
  const listing = await listTrash(sessions);
  for (const p of listing.problems) ctx.warn(`trash entry ${p.entry} (${p.code}): ${p.message}`);
  if (argv.json) return ctx.json(listing);
  if (listing.entries.length === 0) return ctx.out('The trash is empty.');
  const now = sessions.now();
  const rows = listing.entries.map((e) => [
    e.entry,
    e.roots.length > 1 ? `${e.root} +${e.roots.length - 1} more` : e.root,
    String(e.present),
    e.restorable ? e.reason : `${e.reason} (${e.status})`,
    relativeTime(e.deleted_at, now),
    relativeTime(e.expires_at, now),
  ]);
  for (const line of table(['ENTRY', 'ROOT', 'SESSIONS', 'REASON', 'DELETED', 'EXPIRES'], rows)) ctx.out(line);
}
