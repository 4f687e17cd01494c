// pre_delegate: PreToolUse of the subagent tool (matcher "Agent|Task"), or the legacy format.
import { onDelegation, type DelegationResult } from '../events/delegation-event.js';
import { legacyDelegate, legacyFailure, type LegacyAnswer } from '../events/legacy-calls.js';
import { parsePreDelegate, type PreDelegateInput } from '../payload.js';
import type { HookRun } from './hook-process.js';
import type { HookSpec } from './run-hook.js';

/** Everything pre_delegate can conclude. */
type PreDelegateOutcome = DelegationResult | { kind: 'none' } | { kind: 'legacy'; answer: LegacyAnswer };

export const preDelegate: HookSpec<PreDelegateInput, PreDelegateOutcome> = {
  name: 'pre_delegate',
  parse: parsePreDelegate,
  handle,
  legacyFailure: (reason, detail) => ({ kind: 'legacy', answer: legacyFailure(reason, detail) }),
  answer,
};

async function handle(run: HookRun, input: PreDelegateInput): Promise<PreDelegateOutcome> {
  switch (input.kind) {
    case 'ignored':
      run.note(`ignored: ${input.why}`);
      return { kind: 'none' };
    case 'legacy-delegate':
      return { kind: 'legacy', answer: await legacyDelegate(run.context().sessions, input) };
    case 'delegate': {
      const result = await onDelegation(run.context(), input);
      run.note(`${input.toolUseId} (${input.agentType}): ${result.kind} session ${result.session}`);
      return result;
    }
  }
}

/** Null means print nothing (allow, untouched). */
function answer(outcome: PreDelegateOutcome): object | null {
  switch (outcome.kind) {
    case 'none':
    case 'repeated':
      return null;
    case 'legacy':
      return outcome.answer;
    case 'created':
    case 'brief':
      return outcome.input && rewrite(outcome.input);
    case 'deny':
      return {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: outcome.reason,
        },
      };
    default:
      return unreachable(outcome);
  }
}

// No permissionDecision: Claude Code (2.1.330, checked with the real CLI) applies updatedInput on its
// own, and leaving the decision out keeps the user's permission rules for the subagent tool in force.
function rewrite(updatedInput: object): object {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput } };
}

function unreachable(outcome: never): never {
  throw new Error(`unhandled outcome ${JSON.stringify(outcome)}`);
}

export { runHook } from './run-hook.js';
