import type { Argv as Yargs } from 'yargs';
import { EXIT } from '../exit-codes.js';
import type { Argv } from '../command-context.js';
import { resolveSessionRef } from '../session-ref.js';

export const command = 'should-resume <id>';
export const describe = 'Decide whether a session should resume now (exit 0: yes, 1: no)';

export function builder(yargs: Yargs) {
  return yargs.positional('id', { type: 'string', describe: 'Session id or Claude Code agent id' });
}

export async function handler(argv: Argv<{ id: string }>) {
  const { ctx } = argv;
  const sessions = ctx.open(argv);
  const id = resolveSessionRef(sessions, argv.id);
  const decision = await sessions.shouldResume(id);
  ctx.exitCode = decision.resume ? EXIT.ok : EXIT.no;
  if (argv.json) ctx.json(decision);
  else if (decision.resume) ctx.out(`Session ${id} should resume: ${decision.detail}.`);
  else ctx.out(`Session ${id} should not resume (${decision.reason}): ${decision.detail}.`);
}
