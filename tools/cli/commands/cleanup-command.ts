import type { Argv as Yargs } from 'yargs';
import { cleanup, type CleanupReport } from '../../trees/cleanup.js';
import { storeExists } from '../../store/project.js';
import type { Argv } from '../command-context.js';
import { missingStore } from '../store-origin.js';
import { interruptible } from '../interruptible.js';
import { checkHours } from '../parse.js';
import { progressBar } from '../progress.js';

interface Args {
  hours?: string;
  dryRun?: boolean;
  backup: boolean;
}

export const command = 'cleanup';
export const describe =
  'Purge old sessions (to the trash), abandon stuck ones, quarantine corrupt ones, sweep leftovers';

export function builder(yargs: Yargs) {
  return yargs
    .option('hours', { type: 'string', requiresArg: true, describe: 'Age cutoff in hours, a number (default 24)' })
    .option('dry-run', { type: 'boolean', describe: 'Compute the same report; change nothing' })
    .option('backup', {
      type: 'boolean',
      default: true,
      describe: 'Move purged sessions to the trash (--no-backup destroys them)',
    });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const bar = progressBar(ctx, 'cleanup');
  const sessions = ctx.open(argv);
  // A cron job on a fresh project: nothing to clean is no failure (exit 0), but say why.
  if (!storeExists(sessions.store.dir) && !argv.json) {
    ctx.out(`${missingStore(ctx.io, argv.dir).message.replace(/^no sessions/, 'No sessions')}: nothing to clean.`);
    return;
  }
  const options = {
    olderThanHours: checkHours(argv.hours),
    dryRun: argv.dryRun,
    backup: argv.backup,
    onProgress: ({ done, total, scanned }: { done: number; total: number; scanned: number }) =>
      bar.update(done, total, scanned),
  };
  let report: CleanupReport;
  try {
    report = await interruptible(ctx, (signal) => cleanup(sessions, { ...options, signal }), bar.clear);
  } catch (err) {
    // The error's line (an interrupt's "interrupted after N of M") replaces the bar, not after half of it.
    bar.clear();
    throw err;
  }
  bar.end();
  if (argv.json) return ctx.json(report);
  for (const line of describeReport(report)) ctx.out(line);
}

function describeReport(r: CleanupReport): string[] {
  const would = r.dry_run ? 'Would purge' : 'Purged';
  const lines = [
    `Scanned ${r.scanned} session(s); cutoff ${r.cutoff}${r.dry_run ? ' (dry run: nothing changed)' : ''}.`,
    `${would} ${r.purged.length}, abandoned ${r.abandoned.length}, quarantined ${r.quarantined.length}, ` +
      `skipped ${r.skipped.length}, kept ${r.kept} recent.`,
  ];
  for (const p of r.purged) lines.push(`  purge ${p.id}: ${p.reason}`);
  for (const a of r.abandoned) lines.push(`  abandon ${a.id}: ${a.reason}`);
  for (const q of r.quarantined) lines.push(`  quarantine ${q.id}: ${q.reason}`);
  for (const s of r.skipped) lines.push(`  skip ${s.id}: ${s.reason}`);
  for (const o of r.orphans) lines.push(`  orphan ${o.id} (parent ${o.parent}): ${o.action}`);
  for (const e of r.expired_trash) lines.push(`  expired trash ${e.entry}`);
  for (const s of r.swept) lines.push(`  swept ${s.kind} ${s.path}`);
  for (const x of r.recovered) lines.push(`  interrupted trash entry ${x.entry}: ${x.action}`);
  if (r.backups.length > 0)
    lines.push(
      `Backups: ${r.backups.length} trash entr${r.backups.length === 1 ? 'y' : 'ies'} ` +
        `(${r.bytes_to_trash} bytes); see agent-session trash.`,
    );
  lines.push(`Bytes freed: ${r.bytes_freed}.`);
  return lines;
}
