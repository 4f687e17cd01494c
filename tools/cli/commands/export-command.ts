import { resolve } from 'node:path';
import type { Argv as Yargs } from 'yargs';
import { exportSessions } from '../../transfer/export.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';
import { interruptible } from '../interruptible.js';
import { checkPath } from '../parse.js';

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
      describe: 'Write the bundle to this file (default: stdout)',
    });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const output = checkPath(argv.output, '--output');
  const file = output === undefined ? undefined : resolve(ctx.io.cwd, output);
  const sessions = openExisting(argv, argv.id);
  const id = argv.id === undefined ? undefined : resolveSessionRef(sessions, argv.id);
  const result = await interruptible(ctx, (signal) => exportSessions(sessions, { id, all: argv.all, file, signal }));
  for (const p of result.problems) ctx.warn(`left out ${p.id} (${p.code}): ${p.message}`);
  // Without -o the bundle itself is the output (one JSON document, --json or not).
  if (file === undefined) return ctx.json(result.bundle);
  const { bundle: _bundle, ...summary } = result;
  if (argv.json) return ctx.json(summary);
  ctx.out(`Exported ${result.sessions} session(s) and ${result.audit_entries} audit entries to ${file}.`);
}
