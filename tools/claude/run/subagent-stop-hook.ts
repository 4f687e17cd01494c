// subagent_stop: SubagentStart, SubagentStop and PostToolUse of the subagent tool (the exact
// spawn-to-agent join), SessionStart, or the legacy format. It never blocks a stop; it prints to Claude
// Code only the paused sessions a starting conversation is told about.
import { onAgentStart, onAgentStop, onSpawned, type AgentEventResult } from '../events/agent-events.js';
import { legacyStop, legacyStopFailure, type LegacyStopAnswer } from '../events/legacy-calls.js';
import { onSessionStart, type SessionStartResult } from '../events/session-start.js';
import { claimSweepFor } from '../events/sweep-claim.js';
import { parseAgentEvent, type AgentEventInput } from '../payload.js';
import type { HookRun } from './hook-process.js';
import type { HookSpec } from './run-hook.js';
import { startDetachedSweep } from './sweep-process.js';

/** Everything subagent_stop can conclude. */
type SubagentStopOutcome = AgentEventResult | SessionStartResult | { kind: 'legacy'; answer: LegacyStopAnswer };

/** subagent_stop, which starts the periodic sweep from `sweepBundle` when one is due. */
export function subagentStop(sweepBundle: string): HookSpec<AgentEventInput, SubagentStopOutcome> {
  return {
    name: 'subagent_stop',
    parse: parseAgentEvent,
    handle,
    legacyFailure: (reason, detail) => ({ kind: 'legacy', answer: legacyStopFailure(reason, detail) }),
    answer,
    afterAnswer: (run, outcome) => sweepIfDue(run, outcome, sweepBundle),
  };
}

async function handle(run: HookRun, input: AgentEventInput): Promise<SubagentStopOutcome> {
  if (input.kind === 'legacy-stop') return { kind: 'legacy', answer: await legacyStop(run.context().sessions, input) };
  if (input.kind === 'session-start') {
    const result = onSessionStart(run.context(), input);
    run.note(`${run.event} (${input.source}): ${result.kind === 'context' ? 'paused sessions told' : result.why}`);
    return result;
  }
  const result = await apply(run, input);
  const what =
    result.kind === 'applied'
      ? `session ${result.session} ${result.changes.join(', ') || 'bound'}`
      : `${result.kind}: ${result.why}`;
  run.note(`${run.event}: ${what}`);
  return result;
}

function apply(
  run: HookRun,
  input: Exclude<AgentEventInput, { kind: 'legacy-stop' | 'session-start' }>,
): Promise<AgentEventResult> {
  switch (input.kind) {
    case 'ignored':
      return Promise.resolve({ kind: 'ignored', why: input.why });
    case 'spawned':
      return onSpawned(run.context(), input);
    case 'start':
      return onAgentStart(run.context(), input);
    case 'stop':
      return onAgentStop(run.context(), input);
  }
}

/** Claude Code gets nothing from this hook but a starting conversation's context; a legacy caller gets its answer. */
function answer(outcome: SubagentStopOutcome): object | null {
  switch (outcome.kind) {
    case 'context':
      return { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: outcome.text } };
    case 'applied':
    case 'buffered':
    case 'ignored':
      return null;
    case 'legacy':
      return outcome.answer;
    default:
      return unreachable(outcome);
  }
}

/** After answering, and only when this hook touched the store: at most once per interval. */
async function sweepIfDue(run: HookRun, outcome: SubagentStopOutcome, sweepBundle: string): Promise<void> {
  if (outcome.kind !== 'applied' && outcome.kind !== 'buffered') return;
  try {
    if (!(await claimSweepFor(run.context()))) return;
    run.note('starting the periodic sweep (detached)');
    // Nobody reads the detached child's stderr: a missing bundle is logged here, in the hook log.
    if (!(await startDetachedSweep(sweepBundle)))
      throw new Error(`cannot start the periodic sweep: ${sweepBundle} is missing; reinstall agent-session`);
  } catch (err) {
    await run.problem(err);
  }
}

function unreachable(outcome: never): never {
  throw new Error(`unhandled outcome ${JSON.stringify(outcome)}`);
}

export { runHook } from './run-hook.js';
