import type { Argv as Yargs } from 'yargs';
import { deleteSession, type DeleteResult } from '../../trees/delete.js';
import type { Argv } from '../command-context.js';
import { relativeTime } from '../format.js';
import { interruptible } from '../interruptible.js';
import { progressBar } from '../progress.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';

interface Args {
  id: string;
  cascade: boolean;
  force?: boolean;
  forceRunning?: boolean;
  discardWork?: boolean;
  dryRun?: boolean;
  backup: boolean;
  preserveWork?: boolean;
}

export const command = 'delete <id>';
export const describe = 'Delete a session and all its descendants (backed up to the trash)';

export function builder(yargs: Yargs) {
  return yargs
    .positional('id', { type: 'string', describe: 'Session id or Claude Code agent id' })
    .option('cascade', {
      type: 'boolean',
      default: true,
      describe: 'Remove descendants too (--no-cascade refuses when there are children)',
    })
    .option('force', { type: 'boolean', describe: 'Both --force-running and --discard-work' })
    .option('force-running', { type: 'boolean', describe: 'Delete even when sessions of the subtree are running' })
    .option('discard-work', {
      type: 'boolean',
      describe: 'Delete even when a work tree a session owns holds unsaved work (the work tree stays as it is)',
    })
    .option('dry-run', { type: 'boolean', describe: 'Show what would be removed and what blocks it; change nothing' })
    .option('backup', {
      type: 'boolean',
      default: true,
      describe: 'Keep the subtree in the trash (--no-backup destroys it)',
    })
    .option('preserve-work', {
      type: 'boolean',
      describe: 'Save the git state of unsaved work in the backup and go ahead',
    });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const sessions = openExisting(argv, argv.id);
  const id = resolveSessionRef(sessions, argv.id);
  const options = {
    cascade: argv.cascade,
    force: argv.force,
    forceRunning: argv.forceRunning,
    discardWork: argv.discardWork,
    dryRun: argv.dryRun,
    backup: argv.backup,
    preserveWork: argv.preserveWork,
  };
  const bar = progressBar(ctx, 'delete');
  const onProgress = ({ done, total }: { done: number; total: number }) => bar.update(done, total);
  let result: DeleteResult;
  try {
    result = await interruptible(
      ctx,
      (signal) => deleteSession(sessions, id, { ...options, signal, onProgress }),
      bar.clear,
    );
  } catch (err) {
    bar.clear();
    throw err;
  }
  bar.end();
  for (const warning of result.warnings) ctx.warn(warning);
  if (argv.json) return ctx.json(result);
  for (const line of describeDelete(result, sessions.now())) ctx.out(line);
}

function describeDelete(r: DeleteResult, now: number): string[] {
  const levels = Object.entries(r.counts_by_depth)
    .map(([depth, n]) => `${n} at depth ${depth}`)
    .join(', ');
  const lines = [`${r.dry_run ? 'Would delete' : 'Deleted'} ${r.total} session(s) (${levels}), ${r.bytes} bytes:`];
  for (const s of r.removed)
    lines.push(
      `${'  '.repeat(s.depth + 1)}${s.id}  ${s.agent_name ?? '?'}  ${s.phase ?? 'unreadable'}  ` +
        `${relativeTime(s.last_updated ?? undefined, now)}`,
    );
  for (const b of r.blocked) lines.push(`Blocked: ${b.id} ${b.reason}`);
  if (r.dry_run && r.blocked.length === 0) lines.push('Nothing blocks it.');
  if (r.backup) lines.push(`Backup: ${r.backup.path} (agent-session restore ${r.backup.entry})`);
  for (const w of r.work) lines.push(`Work in ${w.dir}: ${w.summary}${w.patch ? `; patch saved to ${w.patch}` : ''}`);
  for (const c of r.checkouts)
    lines.push(`Checkout ${c.dir} (shared, not the session's: not guarded, left as it is): ${c.summary}`);
  return lines;
}
