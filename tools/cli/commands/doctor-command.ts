import type { Argv as Yargs } from 'yargs';
import { resolveSettings } from '../../config.js';
import { doctor, type DoctorOptions, type DoctorReport } from '../../doctor/doctor.js';
import { isSessionError } from '../../errors.js';
import { Sessions } from '../../sessions.js';
import { configFilePath, resolveStoreDir } from '../../store/project.js';
import { SessionStore } from '../../store/store.js';
import type { Argv } from '../command-context.js';
import { EXIT } from '../exit-codes.js';
import { interruptible } from '../interruptible.js';
import { progressBar } from '../progress.js';

interface Args {
  repair?: boolean;
}

export const command = 'doctor';
export const describe =
  'Check the store (records, links, index, strays, audit trail, trash, hook log, config); ' +
  '--repair fixes what it safely can';

export function builder(yargs: Yargs) {
  return yargs.option('repair', {
    type: 'boolean',
    describe: 'Fix what can be fixed without losing data, then check again',
  });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const { store, configProblem } = openLeniently(argv);
  const bar = progressBar(ctx, 'doctor');
  const options = { repair: argv.repair, configProblem, onProgress: bar.update };
  let report: DoctorReport;
  try {
    report = await interruptible(ctx, (signal) => doctor(store, { ...options, signal }), bar.clear);
  } catch (err) {
    // The error's line replaces the bar, not after half of it.
    bar.clear();
    throw err;
  }
  bar.end();
  // 0: healthy (or repaired); 1: problems remain, like any negative answer.
  ctx.exitCode = report.healthy ? EXIT.ok : EXIT.no;
  if (argv.json) return ctx.json(report);
  const { sessions, audit_entries, trash_entries } = report.checked;
  if (report.store.exists)
    ctx.out(`Checked ${sessions} session(s), ${audit_entries} audit entries, ${trash_entries} trash entries.`);
  for (const f of report.findings)
    ctx.out(
      `${f.severity === 'error' ? 'ERROR' : 'warn '}  ${f.check.padEnd(8)} ${f.subject}: ${f.message}` +
        `${f.repair && !argv.repair ? ` (--repair: ${f.repair})` : ''}`,
    );
  for (const line of report.repairs) ctx.out(`repaired: ${line}`);
  for (const f of report.remaining) ctx.out(`still wrong: ${f.subject}: ${f.message}`);
  if (!report.store.exists) return ctx.out(report.healthy ? 'No store: nothing to repair.' : 'No store to check.');
  const warnings = report.findings.filter((f) => f.severity === 'warning').length;
  ctx.out(
    report.healthy
      ? `The store is healthy${warnings > 0 ? `; ${warnings} warning(s) above` : ''}.`
      : 'Problems remain.',
  );
}

/**
 * The store with its settings; when they are invalid, with the defaults and the problem as a finding:
 * doctor is what one runs when something is wrong, so a bad config must not stop it.
 */
function openLeniently(argv: Argv<Args>): { store: Sessions; configProblem?: DoctorOptions['configProblem'] } {
  const { ctx } = argv;
  try {
    return { store: ctx.open(argv) };
  } catch (err) {
    if (!isSessionError(err, 'EINVALID')) throw err;
    const locate = { dir: argv.dir, cwd: ctx.io.cwd, env: ctx.io.env };
    const settings = resolveSettings({});
    const store = new SessionStore(resolveStoreDir(locate), { lockTimeoutMs: settings.lockTimeoutMs });
    const configProblem = { file: configFilePath(locate), message: err.message };
    return { store: new Sessions(store, settings, ctx.io.now, 'cli'), configProblem };
  }
}
