import { resolve } from 'node:path';
import type { Argv as Yargs } from 'yargs';
import { importSessions } from '../../transfer/import.js';
import type { Argv } from '../command-context.js';
import { interruptible } from '../interruptible.js';
import { checkPath } from '../parse.js';
import { progressBar } from '../progress.js';

interface Args {
  file: string;
  rename?: boolean;
  overwrite?: boolean;
}

export const command = 'import <file>';
export const describe = 'Import a bundle written by export: all of it or nothing';

export function builder(yargs: Yargs) {
  return yargs
    .positional('file', { type: 'string', describe: 'Bundle file' })
    .option('rename', { type: 'boolean', describe: 'Give sessions whose id exists new ids' })
    .option('overwrite', { type: 'boolean', describe: 'Replace sessions whose id exists (they are backed up)' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const file = resolve(ctx.io.cwd, checkPath(argv.file, 'import') as string);
  const sessions = ctx.open(argv);
  const bar = progressBar(ctx, 'import');
  const options = { rename: argv.rename, overwrite: argv.overwrite, onProgress: bar.update };
  let result;
  try {
    result = await interruptible(
      ctx,
      (signal) => importSessions(sessions, { file }, { ...options, signal }),
      bar.clear,
    );
  } catch (err) {
    // The error's line (an interrupt's "interrupted after N of M") replaces the bar.
    bar.clear();
    throw err;
  }
  bar.end();
  if (argv.json) return ctx.json(result);
  ctx.out(`Imported ${result.imported.length} session(s) and ${result.audit_entries} audit entries.`);
  for (const [from, to] of Object.entries(result.renamed)) ctx.out(`  renamed ${from} -> ${to}`);
  if (result.backup)
    ctx.out(`Replaced ${result.replaced.length} session(s); the previous versions are in ${result.backup}`);
  if (result.orphans.length > 0)
    ctx.out(
      `${result.orphans.length} imported session(s) have a parent that is not in this store: ` +
        result.orphans.join(', '),
    );
}
