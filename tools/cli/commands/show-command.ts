import type { Argv as Yargs } from 'yargs';
import { ownCliCommandFrom } from '../../claude/own-cli.js';
import { claudeFields, lastMessage, nextStep, sessionStatus } from '../../policy/paused.js';
import { decideResume, type ResumeDecision } from '../../policy/resume.js';
import type { SessionRecord } from '../../record.js';
import type { Argv } from '../command-context.js';
import type { Palette } from '../colour.js';
import { escapeControls } from '../../errors.js';
import { isPhase } from '../../phases.js';
import { openExisting } from '../store-origin.js';
import { relativeTime } from '../format.js';
import { historyLine } from '../history-line.js';
import { resolveSessionRef } from '../session-ref.js';

export const command = 'show <id>';
export const describe = 'A readable summary of a session with its history';

export function builder(yargs: Yargs) {
  return yargs.positional('id', { type: 'string', describe: 'Session id or Claude Code agent id' });
}

export async function handler(argv: Argv<{ id: string }>) {
  const { ctx } = argv;
  const sessions = openExisting(argv, argv.id);
  const record = await sessions.get(resolveSessionRef(sessions, argv.id));
  if (argv.json) return ctx.json(record);
  const now = sessions.now();
  // The same rule the hooks apply, so what show says is what a delegation would do now.
  // The commands it advises as they run here (`npx --no agent-session` in a project install).
  const cli = ownCliCommandFrom(ctx.io.cwd, ctx.io.env);
  const lines = describeSession(record, now, decideResume(record, now, sessions.rules), cli);
  const { palette } = ctx.style;
  if (!palette.enabled) for (const line of lines) ctx.out(line);
  else await ctx.outStyled(paint(lines.map(escapeControls), record, palette));
}

/**
 * Colours the escaped lines of `describeSession` where they name a phase or an outcome; only the known words are
 * coloured, so the text in between (purposes, messages) stays escaped as it is.
 */
function paint(lines: string[], r: SessionRecord, palette: Palette): string[] {
  const history = lines.findIndex((line) => line.startsWith('  history:'));
  return lines.map((line, i) => {
    if (i === 0) return palette.bold(line);
    if (line.startsWith(`  phase:        ${r.phase}`)) return line.replace(r.phase, palette.phase(r.phase, r.phase));
    if (line.startsWith('  finalized:') && r.outcome)
      return line.replace(` as ${r.outcome},`, ` as ${palette.outcome(r.outcome, r.outcome)},`);
    const change = i > history ? /^( {4})(\S+) -> (\S+)/.exec(line) : null;
    if (!change || !isPhase(change[3])) return line;
    const from = isPhase(change[2]) ? palette.phase(change[2], change[2]) : change[2]!;
    return `${change[1]}${from} -> ${palette.phase(change[3], change[3])}${line.slice(change[0].length)}`;
  });
}

function describeSession(r: SessionRecord, now: number, decision: ResumeDecision, cli: string): string[] {
  const ago = (t: string | undefined) => `${t} (${relativeTime(t, now)})`;
  const status = sessionStatus(r, decision);
  const lines = [
    `Session ${r.agent_id}`,
    `  agent:        ${r.agent_name}`,
    `  purpose:      ${r.purpose ?? '-'}`,
    `  phase:        ${r.phase}${status.startsWith('paused') ? ` (${status})` : ''}`,
    `  resume now:   ${decision.resume ? 'yes' : `no (${decision.reason}): ${decision.detail}`}`,
    `  next step:    ${nextStep(r, decision, cli)}`,
    ...describeClaude(r),
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
  const said = lastMessage(r);
  if (said) lines.push('  last message:', ...said.map((line) => `    ${line}`));
  lines.push(r.history.length > 0 ? '  history:' : '  history:      (no phase changes yet)');
  for (const h of r.history) lines.push(`    ${historyLine(h)}  ${relativeTime(h.timestamp, now)}`);
  return lines;
}

/** Claude Code's ids: the conversation and the agent SendMessage reaches, and earlier agents. */
function describeClaude(r: SessionRecord): string[] {
  const claude = claudeFields(r);
  if (!claude) return [];
  const earlier = claude.agent_ids.filter((id) => id !== claude.agent_id);
  return [
    `  claude code:  conversation ${claude.session_id ?? '-'}, agent ${claude.agent_id ?? '-'}` +
      (earlier.length > 0 ? ` (earlier: ${earlier.join(', ')})` : ''),
  ];
}
