import { SessionError } from '../errors.js';
import { isPlainObject } from '../merge-patch.js';
import { handleSpawned, handleStart, handleStop, type LifecycleResult } from './handle-lifecycle.js';
import { legacyStop, legacyStopFailure, type LegacyStopAnswer } from './legacy.js';
import { isLegacy, parseLifecycle } from './payload.js';
import { markRunWorthCaching, parseJson, STDIN_MAX_BYTES, type HookRun, type StdinResult } from './runtime.js';

/** Everything subagent_stop can conclude; the hook maps each kind to its stdout in one switch. */
export type LifecycleOutcome = LifecycleResult | { kind: 'none' } | { kind: 'legacy'; answer: LegacyStopAnswer };

/** subagent_stop's handler: SubagentStart, SubagentStop, PostToolUse(Agent), or the earlier format. */
export async function runLifecycle(run: HookRun, stdin: StdinResult): Promise<LifecycleOutcome> {
  if (!stdin.ok)
    throw new SessionError('EINVALID', `stdin is ${stdin.bytes}+ bytes, over the ${STDIN_MAX_BYTES}-byte cap`);
  const json = parseJson(stdin.text);
  if (!json.ok || !isPlainObject(json.value)) {
    const error = json.ok ? new SessionError('EINVALID', 'the payload is not a JSON object') : json.error;
    if (run.underClaude) throw error;
    await run.problem(error);
    return { kind: 'legacy', answer: legacyStopFailure('invalid_json', error.message) };
  }
  run.event = typeof json.value.hook_event_name === 'string' ? json.value.hook_event_name : 'legacy';
  if (isLegacy(json.value)) return answerLegacy(run, json.value);
  const input = parseLifecycle(json.value);
  let result: LifecycleResult;
  switch (input.kind) {
    case 'ignored':
      result = { kind: 'ignored', why: input.why };
      break;
    case 'spawned':
      result = await handleSpawned(run.context(), input);
      break;
    case 'start':
      result = await handleStart(run.context(), input);
      break;
    case 'stop':
      result = await handleStop(run.context(), input);
      break;
    case 'legacy-stop':
      throw new SessionError('EINVALID', 'the earlier format was not recognized');
  }
  if (result.kind !== 'ignored') markRunWorthCaching();
  run.note(
    `${run.event}: ${result.kind === 'applied' ? `session ${result.session} ${result.changes.join(', ') || 'bound'}` : `${result.kind}: ${result.why}`}`,
  );
  return result;
}

async function answerLegacy(run: HookRun, raw: unknown): Promise<LifecycleOutcome> {
  try {
    const input = parseLifecycle(raw);
    if (input.kind !== 'legacy-stop') throw new SessionError('EINVALID', 'not the earlier format');
    const answer = await legacyStop(run.context().sessions, input);
    markRunWorthCaching();
    return { kind: 'legacy', answer };
  } catch (err) {
    await run.problem(err);
    return { kind: 'legacy', answer: legacyStopFailure('error', err instanceof Error ? err.message : String(err)) };
  }
}

export { HookRun, readStdin, writeAllSync } from './runtime.js';
export { claimSweepFor } from './sweep-run.js';
