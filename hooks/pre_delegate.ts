#!/usr/bin/env node
// Claude Code PreToolUse hook for the subagent tool (matcher "Agent|Task"), also callable by
// orchestrators with the legacy format. Fails open: on any problem it exits 0 with no output
// (Claude Code proceeds as if the hook were absent) and logs one line to <store>/.hooks.log.

// Bundled as CommonJS (no top-level await): the library and its built-in modules load only in main(),
// so the kill switch is checked before any of them is evaluated.
async function main(): Promise<void> {
  if (process.env.AGENT_SESSION_DISABLE === '1') return;
  const { runHook, preDelegate } = await import('../tools/claude/run/pre-delegate-hook.js');
  // Done, and everything is written: exit without Node's teardown of the heap (about a millisecond).
  if (await runHook(preDelegate)) process.exit(0);
}

// Fail open even if the library cannot load: exit 0, no output.
main().catch(() => {
  process.exitCode = 0;
});
