#!/usr/bin/env node
// Claude Code PreToolUse hook for the subagent tool (matcher "Agent|Task"), also callable by
// orchestrators with the earlier tool's format. Fails open: on any problem it exits 0 with no
// output (Claude Code proceeds as if the hook were absent) and logs one line to <store>/.hooks.log.
import type { PreDelegateOutcome } from '../tools/claude/pre-delegate.js';

// Bundled as CommonJS (no top-level await): the library and its built-in modules load only in main(),
// so the kill switch is checked before any of them is evaluated.
async function main(): Promise<void> {
  if (process.env.AGENT_SESSION_DISABLE !== '1') {
    const { HookRun, readStdin, runPreDelegate, writeAllSync } = await import('../tools/claude/pre-delegate.js');
    const run = new HookRun('pre_delegate', process.env, process.cwd());
    // Serialized inside the chain: a failure there is logged like any other, not lost.
    const output = await readStdin(() => process.stdin)
      .then((stdin) => runPreDelegate(run, stdin))
      .then((outcome) => serialize(toProtocol(outcome)))
      .catch(async (err) => {
        await run.problem(err);
        return null;
      });
    const written = [output ? writeAllSync(1, output) : true];
    if (run.diagnostics.length > 0) written.push(writeAllSync(2, `${run.diagnostics.join('\n')}\n`));
    // Done, and everything is written: exit without Node's teardown of the heap (about a millisecond).
    if (written.every(Boolean)) process.exit(0);
  }
}

// Fail open even if the library cannot load: exit 0, no output.
main().catch(() => {
  process.exitCode = 0;
});

function serialize(answer: object | null): string | null {
  return answer && `${JSON.stringify(answer)}\n`;
}

/** The one place an outcome becomes stdout: null means print nothing (allow, untouched). */
function toProtocol(outcome: PreDelegateOutcome): object | null {
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
