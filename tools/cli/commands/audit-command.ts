import type { Argv as Yargs } from 'yargs';
import type { AuditEntry, AuditProblem } from '../../audit/entry.js';
import { followAudit } from '../../audit/follow.js';
import { readAudit, streamAudit } from '../../audit/read.js';
import { parseDuration } from '../../audit/duration.js';
import type { Argv, Context } from '../command-context.js';
import { LateValue, StreamedArray } from '../json-output.js';
import { openExisting } from '../store-origin.js';
import { resolveSessionRef } from '../session-ref.js';
import { cutToWidth } from '../colour.js';
import { escapeControls } from '../../errors.js';

interface Args {
  session?: string;
  since?: string;
  action?: string;
  follow?: boolean;
}

export const command = 'audit';
export const describe = 'Show the audit trail: who changed which session, when and how';

export function builder(yargs: Yargs) {
  return yargs
    .option('session', {
      type: 'string',
      requiresArg: true,
      describe: 'Only entries naming this session (or Claude Code agent id)',
    })
    .option('since', { type: 'string', requiresArg: true, describe: 'Only entries newer than this: 30m, 2h, 7d' })
    .option('action', {
      type: 'string',
      requiresArg: true,
      describe: 'Only this action: create, update, finalize, delete, …',
    })
    .option('follow', {
      type: 'boolean',
      describe: 'Keep running and print new entries as they are written (--json: one per line)',
    });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  // Usage errors first, wherever the store is.
  const window = argv.since === undefined ? undefined : parseDuration(argv.since);
  // Following may start before the first delegation creates the store: it waits for it.
  const sessions = argv.follow ? ctx.open(argv) : openExisting(argv, argv.session);
  const since = window === undefined ? undefined : sessions.now() - window;
  const session = argv.session === undefined ? undefined : resolveSessionRef(sessions, argv.session);
  const filter = { session, action: argv.action, since };
  if (argv.follow) return follow(argv, filter);
  if (argv.json) {
    // Each entry written as it is read: the document is JSON.stringify of readAudit's result, byte for byte.
    const stream = streamAudit(sessions, filter);
    await ctx.json({
      entries: new StreamedArray(stream.entries),
      problems: new LateValue(() => stream.tally().problems),
      acknowledged: new LateValue(() => stream.tally().acknowledged),
    });
    for (const p of stream.tally().problems) warnBadLine(ctx, p);
    return;
  }
  const result = await readAudit(sessions, filter);
  for (const p of result.problems) warnBadLine(ctx, p);
  if (result.entries.length === 0) return ctx.out('No audit entries.');
  if (!styled(ctx)) return ctx.outLines(result.entries.map(formatEntryLine));
  return ctx.outStyled(result.entries.map((e) => styledEntryLine(ctx, e)));
}

async function follow(argv: Argv<Args>, filter: { session?: string; action?: string; since?: number }) {
  const { ctx } = argv;
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await followAudit(ctx.open(argv), {
      ...filter,
      signal: controller.signal,
      onEntry: (entry) => print(ctx, entry, argv.json),
      onProblem: (p) => ctx.warn(`skipped a bad audit line (${p.reason})`),
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

function print(ctx: Context, entry: AuditEntry, json: boolean | undefined) {
  if (json) ctx.out(JSON.stringify(entry));
  else if (!styled(ctx)) ctx.out(formatEntryLine(entry));
  else if (!ctx.style.palette.enabled) ctx.out(styledEntryLine(ctx, entry));
  // One line at a time, in order: its data is escaped already, only the colour codes are raw.
  else ctx.io.stdout(`${styledEntryLine(ctx, entry)}\n`);
}

/** On a terminal (or with colour forced) lines are coloured and cut to the width; piped they stay whole. */
function styled(ctx: Context): boolean {
  return ctx.style.palette.enabled || Number.isFinite(ctx.style.width);
}

/**
 * `formatEntryLine` cut to the terminal's width, the time dimmed and the action coloured by what it did: a
 * finalize by its outcome, an update by the phase it moved to.
 */
function styledEntryLine(ctx: Context, e: AuditEntry): string {
  const { palette, width } = ctx.style;
  const line = cutToWidth(escapeControls(formatEntryLine(e)), width);
  const details = e.details as { outcome?: unknown; phase?: { to?: unknown } };
  const action = e.action.padEnd(8);
  const head = `${e.time}  ${action}`;
  if (!line.startsWith(head)) return palette.dim(line);
  const to = typeof details.phase?.to === 'string' ? details.phase.to : undefined;
  const coloured =
    e.action === 'finalize' && typeof details.outcome === 'string'
      ? palette.outcome(details.outcome, action)
      : to
        ? palette.phase(to, action)
        : palette.bold(action);
  return `${palette.dim(e.time)}  ${coloured}${line.slice(head.length)}`;
}

function formatEntryLine(e: AuditEntry): string {
  const ids = e.ids.length > 3 ? `${e.ids.slice(0, 3).join(',')},… (${e.ids.length})` : e.ids.join(',');
  const part = e.part ? ` [part ${e.part[0]}/${e.part[1]}]` : '';
  const head = `${e.time}  ${e.action.padEnd(8)}  ${e.actor.padEnd(4)}  pid ${e.pid}`;
  return `${head}  ${ids}${part}  ${JSON.stringify(e.details)}`;
}

function warnBadLine(ctx: Context, p: AuditProblem) {
  ctx.warn(`skipped a bad audit line (${p.reason}) at ${p.file}:${p.line}`);
}
