// The hooks write their answer with plain writes and then exit at once (skipping Node's teardown).
// When stdout is a non-blocking descriptor that is full, the rest of the answer goes through the
// stream, and the hook must wait for it rather than exit and cut its answer short; if the reader
// goes away instead, the hook still ends quietly with exit 0.
import assert from 'node:assert/strict';
import { closeSync } from 'node:fs';
import { test } from 'node:test';
import { fullFifo, readAll, spawnOnFifo } from './helpers/full-pipe.mjs';
import { fixture, onlySession, project } from './helpers/hooks.mjs';
import { cleanEnv, PRE_DELEGATE } from './helpers/run.mjs';

/**
 * pre_delegate started with a full FIFO as its non-blocking stdout (helpers/full-pipe.mjs): the hook's
 * first plain write gets EAGAIN. Resolves once the hook has written its first stderr line (the debug
 * diagnostics come after the answer's write was attempted), with the FIFO not yet read.
 */
async function hookOnFullFifo(t) {
  const proj = project(t);
  const pipe = fullFifo(proj.dir);

  const prompt = `Investigate. ${'x'.repeat(200_000)}`;
  const payload = fixture('pretooluse-task', {
    session_id: 'output-1',
    tool_use_id: 'toolu_output_1',
    tool_input: { description: 'Big', prompt, subagent_type: 'general-purpose' },
  });
  const env = cleanEnv({
    CLAUDECODE: '1',
    CLAUDE_PROJECT_DIR: proj.dir,
    AGENT_SESSION_SWEEP_INTERVAL_MINUTES: '0',
    AGENT_SESSION_DEBUG: '1',
  });
  const child = spawnOnFifo(pipe, [PRE_DELEGATE], { cwd: proj.dir, env });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  child.stdin.end(JSON.stringify(payload));

  const run = { proj, pipe, prompt, exited, stderr: '' };
  const stderrEnded = new Promise((resolve) => child.stderr.on('end', resolve));
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      run.stderr += chunk;
      if (run.stderr.includes('\n')) resolve();
    });
    child.stderr.on('end', resolve);
    child.on('error', reject);
  });
  run.stderrEnded = stderrEnded;
  return run;
}

test('pre_delegate delivers its whole answer through a full non-blocking stdout before it exits', async (t) => {
  const run = await hookOnFullFifo(t);
  const text = await readAll(run.pipe);
  assert.equal(await run.exited, 0, run.stderr);
  assert.equal(text.slice(0, run.pipe.filled), '.'.repeat(run.pipe.filled));
  const answer = JSON.parse(text.slice(run.pipe.filled));
  const session = onlySession(run.proj.store).agent_id;
  const rewritten = answer.hookSpecificOutput.updatedInput.prompt;
  assert.ok(rewritten.startsWith(run.prompt), 'the rewritten prompt keeps the original');
  assert.ok(rewritten.includes(session), 'the footer names the session');
});

test('pre_delegate exits 0 quietly when the reader of its full stdout goes away before reading', async (t) => {
  const run = await hookOnFullFifo(t);
  // The only read end closes with the FIFO full: the rest of the answer meets EPIPE.
  closeSync(run.pipe.probe);
  assert.equal(await run.exited, 0, run.stderr);
  await run.stderrEnded;
  assert.doesNotMatch(run.stderr, /EPIPE|Unhandled|Error/, run.stderr);
  assert.equal(onlySession(run.proj.store).purpose, 'Big', 'the session was created before the answer');
});
