import { SessionError } from '../errors.js';
import { isPlainObject } from '../merge-patch.js';
import { handleDelegation, type DelegationResult } from './handle-delegation.js';
import { legacyDelegate, legacyFailure, type LegacyAnswer } from './legacy.js';
import { isLegacy, parsePreDelegate } from './payload.js';
import { markRunWorthCaching, parseJson, STDIN_MAX_BYTES, type HookRun, type StdinResult } from './runtime.js';

/** Everything pre_delegate can conclude; the hook maps each kind to its stdout in one switch. */
export type PreDelegateOutcome = DelegationResult | { kind: 'none' } | { kind: 'legacy'; answer: LegacyAnswer };

/**
 * pre_delegate's handler: PreToolUse of the subagent tool, or the earlier tool's format.
 * Problems with a Claude Code payload throw (the hook fails open); an orchestrator gets an answer.
 */
export async function runPreDelegate(run: HookRun, stdin: StdinResult): Promise<PreDelegateOutcome> {
  if (!stdin.ok)
    throw new SessionError('EINVALID', `stdin is ${stdin.bytes}+ bytes, over the ${STDIN_MAX_BYTES}-byte cap`);
  const json = parseJson(stdin.text);
  // Not JSON at all: Claude Code always sends JSON, so this is an orchestrator unless CLAUDECODE=1 says otherwise.
  if (!json.ok || !isPlainObject(json.value)) {
    const error = json.ok ? new SessionError('EINVALID', 'the payload is not a JSON object') : json.error;
    if (run.underClaude) throw error;
    await run.problem(error);
    return { kind: 'legacy', answer: legacyFailure('invalid_json', error.message) };
  }
  run.event = typeof json.value.hook_event_name === 'string' ? json.value.hook_event_name : 'legacy';
  if (isLegacy(json.value)) return answerLegacy(run, json.value);
  const input = parsePreDelegate(json.value);
  if (input.kind === 'legacy-delegate') throw new SessionError('EINVALID', 'the earlier format was not recognized');
  if (input.kind === 'ignored') {
    run.note(`ignored: ${input.why}`);
    return { kind: 'none' };
  }
  const result = await handleDelegation(run.context(), input);
  markRunWorthCaching();
  run.note(`${input.toolUseId} (${input.agentType}): ${result.kind} session ${result.session}`);
  return result;
}

async function answerLegacy(run: HookRun, raw: unknown): Promise<PreDelegateOutcome> {
  try {
    const input = parsePreDelegate(raw);
    if (input.kind !== 'legacy-delegate') throw new SessionError('EINVALID', 'not the earlier format');
    const answer = await legacyDelegate(run.context().sessions, input);
    markRunWorthCaching();
    return { kind: 'legacy', answer };
  } catch (err) {
    await run.problem(err);
    return { kind: 'legacy', answer: legacyFailure('error', err instanceof Error ? err.message : String(err)) };
  }
}

export { HookRun, readStdin, writeAllSync } from './runtime.js';
