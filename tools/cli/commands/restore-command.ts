import type { Argv as Yargs } from 'yargs';
import { restoreSession, type RestoreResult } from '../../trees/restore.js';
import type { Argv } from '../command-context.js';
import { interruptible } from '../interruptible.js';
import { progressBar } from '../progress.js';
import { resolveSessionRef } from '../session-ref.js';

export const command = 'restore <target>';
export const describe = 'Put a deleted session and its subtree back (TARGET: a session id or a trash entry)';

export function builder(yargs: Yargs) {
  return yargs.positional('target', {
    type: 'string',
    describe: 'Session id, Claude Code agent id, or trash entry name or path',
  });
}

export async function handler(argv: Argv<{ target: string }>) {
  const { ctx } = argv;
  const sessions = ctx.open(argv);
  const bar = progressBar(ctx, 'restore');
  const onProgress = ({ done, total }: { done: number; total: number }) => bar.update(done, total);
  let result: RestoreResult;
  try {
    result = await interruptible(
      ctx,
      (signal) => restoreSession(sessions, resolveSessionRef(sessions, argv.target), { signal, onProgress }),
      bar.clear,
    );
  } catch (err) {
    bar.clear();
    throw err;
  }
  bar.end();
  for (const warning of result.warnings) ctx.warn(warning);
  if (argv.json) return ctx.json(result);
  ctx.out(`Restored ${result.restored.length} session(s) from ${result.entry}:`);
  for (const s of result.restored) ctx.out(`${'  '.repeat(s.depth + 1)}${s.id}`);
  for (const w of result.work) {
    ctx.out(`Preserved work of ${w.sessions.join(', ')}; to reapply:`);
    for (const line of w.instructions) ctx.out(`  ${line}`);
  }
}
