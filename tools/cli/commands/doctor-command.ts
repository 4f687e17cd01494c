import type { Argv as Yargs } from 'yargs';
import { doctor } from '../../doctor/doctor.js';
import type { Argv } from '../command-context.js';
import { EXIT } from '../exit-codes.js';
import { interruptible } from '../interruptible.js';

interface Args {
  repair?: boolean;
}

export const command = 'doctor';
export const describe =
  'Check the store (records, links, index, strays, audit trail, trash); --repair fixes what it safely can';

export function builder(yargs: Yargs) {
  return yargs.option('repair', {
    type: 'boolean',
    describe: 'Fix what can be fixed without losing data, then check again',
  });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const store = ctx.open(argv);
  const report = await interruptible(ctx, (signal) => doctor(store, { repair: argv.repair, signal }));
  // 0: healthy (or repaired); 1: problems remain, like any negative answer.
  ctx.exitCode = report.healthy ? EXIT.ok : EXIT.no;
  if (argv.json) return ctx.json(report);
  const { sessions, audit_entries, trash_entries } = report.checked;
  ctx.out(`Checked ${sessions} session(s), ${audit_entries} audit entries, ${trash_entries} trash entries.`);
  for (const f of report.findings)
    ctx.out(
      `${f.severity === 'error' ? 'ERROR' : 'warn '}  ${f.check.padEnd(8)} ${f.subject}: ${f.message}` +
        `${f.repair && !argv.repair ? ` (--repair: ${f.repair})` : ''}`,
    );
  for (const line of report.repairs) ctx.out(`repaired: ${line}`);
  for (const f of report.remaining) ctx.out(`still wrong: ${f.subject}: ${f.message}`);
  ctx.out(report.healthy ? 'The store is healthy.' : 'Problems remain.');
}
