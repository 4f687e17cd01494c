import type { Argv as Yargs } from 'yargs';
import type { Argv } from '../context.js';
import { checkHours } from '../parse.js';

interface Args {
  hours?: number;
  dryRun?: boolean;
}

export const command = 'cleanup';
export const describe = 'Remove sessions not updated for --hours (default 24)';

export function builder(yargs: Yargs) {
  return yargs
    .option('hours', { type: 'number', describe: 'Age cutoff in hours (default 24)' })
    .option('dry-run', { type: 'boolean', describe: 'Report what would be removed; change nothing' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const report = await ctx.open(argv).cleanup({ olderThanHours: checkHours(argv.hours), dryRun: argv.dryRun });
  if (argv.json) return ctx.json(report);
  const verb = report.dry_run ? 'Would remove' : 'Removed';
  ctx.out(`${verb} ${report.removed.length} of ${report.scanned} session(s) last updated before ${report.cutoff}.`);
  for (const id of report.removed) ctx.out(`  ${id}`);
  for (const skip of report.skipped) ctx.out(`Skipped ${skip.id}: ${skip.reason}`);
}
