import type { Argv as Yargs } from 'yargs';
import { cleanup, type CleanupReport } from '../../trees/cleanup.js';
import { storeExists } from '../../store/project.js';
import type { Argv } from '../command-context.js';
import { missingStore } from '../store-origin.js';
import { interruptible } from '../interruptible.js';
import { checkHours } from '../parse.js';
import { progressBar } from '../progress.js';
import { bytesText } from '../format.js';
import { reasonKind } from '../../policy/cleanup-plan.js';

interface Args {
  hours?: string;
  dryRun?: boolean;
  backup: boolean;
  verbose?: boolean;
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
    })
    .option('verbose', { type: 'boolean', describe: 'List every purged, abandoned and skipped session' });
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
  for (const line of describeReport(report, Boolean(argv.verbose))) ctx.out(line);
}

/** Ids listed by the text output without --verbose. */
const FIRST_IDS = 20;

function describeReport(r: CleanupReport, verbose: boolean): string[] {
  const counts = [r.purged.length, r.abandoned.length, r.quarantined.length, r.skipped.length, r.kept];
  const words = r.dry_run
    ? ['Would purge', 'abandon', 'quarantine', 'skip', 'keep']
    : ['Purged', 'abandoned', 'quarantined', 'skipped', 'kept'];
  const lines = [
    `Scanned ${r.scanned} session(s); cutoff ${r.cutoff}${r.dry_run ? ' (dry run: nothing changed)' : ''}.`,
    `${words.map((word, i) => `${word} ${counts[i]}`).join(', ')} recent.`,
  ];
  // A count per reason, each followed by its own ids: all of them with --verbose, else the category's
  // first 20 in all (ids of about 30 characters, three to a line: readable in an 80-column terminal).
  const listed = (label: string, items: { id: string; reason: string }[]) => {
    if (items.length === 0) return;
    let budget = FIRST_IDS;
    for (const [reason, group] of groupBy(items, (i) => reasonKind(i.reason))) {
      lines.push(`  ${label} ${group.length}: ${reason}`);
      if (verbose) {
        for (const i of group) lines.push(`    ${i.id}: ${i.reason}`);
        continue;
      }
      const ids = group.slice(0, budget).map((i) => i.id);
      budget -= ids.length;
      for (let k = 0; k < ids.length; k += 3) lines.push(`    ${ids.slice(k, k + 3).join(' ')}`);
    }
    if (!verbose && items.length > FIRST_IDS)
      lines.push(`    and ${items.length - FIRST_IDS} more (--verbose lists them)`);
  };
  // Each purged session counts under the reason its subtree's root went.
  const rootReason = new Map(r.purged.filter((p) => p.id === p.root).map((p) => [p.root, p.reason]));
  listed(
    r.dry_run ? 'would purge' : 'purged',
    r.purged.map((p) => ({ id: p.id, reason: rootReason.get(p.root) ?? p.reason })),
  );
  listed('abandoned', r.abandoned);
  listed('quarantined', r.quarantined);
  listed('skipped', r.skipped);
  for (const o of r.orphans) if (verbose) lines.push(`  orphan ${o.id} (parent ${o.parent}): ${o.action}`);
  if (r.orphans.length > 0 && !verbose) lines.push(`  orphans: ${r.orphans.length} (--verbose lists them)`);
  for (const e of r.expired_trash) if (verbose) lines.push(`  expired trash ${e.entry}`);
  for (const s of r.swept) if (verbose) lines.push(`  swept ${s.kind} ${s.path}`);
  for (const x of r.recovered) lines.push(`  interrupted trash entry ${x.entry}: ${x.action}`);
  if (r.bytes_to_trash > 0 || r.backups.length > 0) {
    const when = r.trash_frees_at
      ? `; the trash frees it after ${r.trash_retention_days} day(s), on ${r.trash_frees_at}`
      : '';
    lines.push(
      `${r.dry_run ? 'Would move' : 'Moved'} to the trash: ${bytesText(r.bytes_to_trash)}` +
        `${r.backups.length > 0 ? ` (${r.backups.join(', ')})` : ''}${when}; see agent-session trash.`,
    );
  }
  const parts = [
    r.expired_trash.length > 0
      ? `${r.expired_trash.length} expired trash entr${r.expired_trash.length === 1 ? 'y' : 'ies'}`
      : '',
    r.swept.length > 0 ? `${r.swept.length} leftover(s)` : '',
  ].filter(Boolean);
  const why = parts.length > 0 ? ` (${parts.join(', ')})` : '';
  lines.push(`${r.dry_run ? 'Would free' : 'Freed'}: ${bytesText(r.bytes_freed)}${why}.`);
  return lines;
}

/** The items grouped by `key`, the largest group first. */
function groupBy<T>(items: T[], key: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.get(key(item))?.push(item) ?? groups.set(key(item), [item]);
  return [...groups].sort((a, b) => b[1].length - a[1].length);
}
