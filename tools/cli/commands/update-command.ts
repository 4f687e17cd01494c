import type { Argv as Yargs } from 'yargs';
import { decideResume } from '../../policy/resume.js';
import { PHASES, type Phase } from '../../phases.js';
import type { Argv } from '../command-context.js';
import { parseMetadata } from '../parse.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';

interface Args {
  id: string;
  phase?: Phase;
  metadata?: string;
  error?: string;
}

export const command = 'update <id>';
export const describe = 'Change the phase, merge metadata (JSON Merge Patch) or record an error';

export function builder(yargs: Yargs) {
  return yargs
    .positional('id', { type: 'string', describe: 'Session id or Claude Code agent id' })
    .option('phase', { type: 'string', requiresArg: true, describe: `New phase: ${PHASES.slice(0, 6).join(', ')}` })
    .option('metadata', {
      type: 'string',
      requiresArg: true,
      describe: 'JSON Merge Patch applied to metadata (null deletes a key)',
    })
    .option('error', {
      type: 'string',
      requiresArg: true,
      describe: 'Record an error message (counts against the error budget)',
    });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const metadata = parseMetadata(argv.metadata);
  const sessions = openExisting(argv, argv.id);
  const id = resolveSessionRef(sessions, argv.id);
  const record = await sessions.update(id, { phase: argv.phase, metadata, error: argv.error });
  if (argv.json) ctx.json(record);
  else {
    // What a delegation would do with it now: resume ready alone says nothing of the error budget.
    const decision = decideResume(record, sessions.now(), sessions.rules);
    const ready = record.resume_ready && decision.resume ? ', resume ready' : '';
    const blocked = record.resume_ready && !decision.resume ? `; not resumable: ${decision.detail}` : '';
    const { agent_id: updated, phase, error_count: errors } = record;
    ctx.out(`Updated session ${updated}: phase ${phase}${ready}, ${errors} error(s)${blocked}.`);
  }
}
