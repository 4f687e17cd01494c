import type { Argv as Yargs } from 'yargs';
import { outputPath, refuseDirectoryPath } from '../../transfer/bundle-file.js';
import { exportSessions } from '../../transfer/export.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';
import { interruptible } from '../interruptible.js';
import { checkPath } from '../parse.js';
import { progressBar } from '../progress.js';

interface Args {
  id?: string;
  all?: boolean;
  output?: string;
}

export const command = 'export [id]';
export const describe = 'Write a portable bundle of a session and its descendants (or --all)';

export function builder(yargs: Yargs) {
  return yargs
    .positional('id', {
      type: 'string',
      describe: 'Session id or Claude Code agent id (its whole subtree is exported)',
    })
    .option('all', { type: 'boolean', describe: 'Export every session of the store' })
    .option('output', {
      alias: 'o',
      type: 'string',
      requiresArg: true,
      describe: 'Write the bundle to this file (default, or -: stdout)',
    });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const output = checkPath(argv.output, '--output');
  // `-o -` is stdout, as in most tools.
  if (output !== undefined && output !== '-') refuseDirectoryPath(output, `--output ${output}`);
  const file = output === undefined || output === '-' ? undefined : outputPath(ctx.io.cwd, output);
  const sessions = openExisting(argv, argv.id);
  const id = argv.id === undefined ? undefined : resolveSessionRef(sessions, argv.id);
  // A bundle printed on the terminal would be torn by a bar drawn on the same screen.
  const bar = progressBar(
    file === undefined && ctx.io.isTTY ? { ...ctx, io: { ...ctx.io, stderrIsTTY: false } } : ctx,
    'export',
  );
  // Without -o the bundle itself is the output, streamed as it is written (--json or not).
  const out = file === undefined ? (text: string) => ctx.io.stdout(text) : undefined;
  let result;
  try {
    result = await interruptible(
      ctx,
      (signal) => exportSessions(sessions, { id, all: argv.all, file, out, signal, onProgress: bar.update }),
      bar.clear,
    );
  } catch (err) {
    // The error's line (an interrupt's "interrupted after N of M") replaces the bar.
    bar.clear();
    throw err;
  }
  bar.end();
  for (const p of result.problems) ctx.warn(`left out ${p.id} (${p.code}): ${p.message}`);
  const gone = result.removed_meanwhile;
  if (gone.length > 0) {
    const named = gone.length > 10 ? `${gone.slice(0, 10).join(', ')}, …` : gone.join(', ');
    ctx.warn(`${gone.length} session(s) were removed while the export ran (deleted, cleaned up); not in it: ${named}`);
  }
  if (file === undefined) return;
  if (argv.json) return ctx.json(result);
  ctx.out(`Exported ${result.sessions} session(s) and ${result.audit_entries} audit entries to ${file}.`);
}
