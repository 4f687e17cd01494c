import type { Argv as Yargs } from 'yargs';
import type { SessionRecord } from '../../record.js';
import type { Argv } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { relativeTime } from '../format.js';
import { historyLine } from '../history-line.js';

export const command = 'show <id>';
export const describe = 'A readable summary of a session with its history';

export function builder(yargs: Yargs) {
  return yargs.positional('id', { type: 'string', describe: 'Session id' });
}

export async function handler(argv: Argv<{ id: string }>) {
  const { ctx } = argv;
  const sessions = openExisting(argv, argv.id);
  const record = await sessions.get(argv.id);
  if (argv.json) return ctx.json(record);
  for (const line of describeSession(record, sessions.now())) ctx.out(line);
}

function describeSession(r: SessionRecord, now: number): string[] {
  const ago = (t: string | undefined) => `${t} (${relativeTime(t, now)})`;
  const lines = [
    `Session ${r.agent_id}`,
    `  agent:        ${r.agent_name}`,
    `  purpose:      ${r.purpose ?? '-'}`,
    `  phase:        ${r.phase}${r.resume_ready ? ' (resume ready)' : ''}`,
    `  created:      ${ago(r.created_at)}`,
    `  last updated: ${ago(r.last_updated)}`,
    `  parent:       ${r.parent_session_id ?? '-'}`,
    `  errors:       ${r.error_count}` +
      `${r.last_error ? `, last: ${r.last_error.message} (${relativeTime(r.last_error.timestamp, now)})` : ''}`,
  ];
  if (r.finalized_at) {
    lines.push(`  finalized:    ${ago(r.finalized_at)} as ${r.outcome}, after ${r.duration_seconds} s`);
    if (r.summary) lines.push(`  summary:      ${r.summary}`);
  }
  if (Object.keys(r.metadata).length > 0) lines.push(`  metadata:     ${JSON.stringify(r.metadata)}`);
  lines.push(r.history.length > 0 ? '  history:' : '  history:      (no phase changes yet)');
  for (const h of r.history) lines.push(`    ${historyLine(h)}  ${relativeTime(h.timestamp, now)}`);
  return lines;
}
