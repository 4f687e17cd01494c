// What the delegation hook leaves in the audit trail: one `hook.resume_decision` entry per delegation
// (continue, brief, none or new_session, with the policy, the candidate and the reason), one
// `hook.passed_over` entry naming the candidates it did not take and why (bounded), and how `show`
// renders decisions.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { flow, life, onlySession, pre, project, readSession, sessionIds } from './helpers/hooks.mjs';
import { cli, cliJson, tempDir } from './helpers/run.mjs';

/** One delegation run to a pause; returns the session id it ended in. */
async function pause(proj, f, { env, transcript } = {}) {
  assert.equal((await pre(proj, f.pre, env)).code, 0);
  await life(proj, f.post, env);
  await life(proj, f.start, env);
  await life(
    proj,
    f.stop('Which schema?\nsession-phase: approval', transcript ? { agent_transcript_path: transcript } : {}),
    env,
  );
}

function transcriptFile(t) {
  const file = path.join(tempDir(t, 'agent-session-transcript-'), 'agent-a1.jsonl');
  writeFileSync(file, '{}\n');
  return file;
}

async function entries(proj, action) {
  return (await cliJson(proj.store, ['audit', '--action', action])).entries;
}

/** The decision entry of one delegation (by its tool_use_id). */
async function decision(proj, toolUseId) {
  const found = (await entries(proj, 'hook.resume_decision')).filter((e) => e.details.tool_use_id === toolUseId);
  assert.equal(found.length, 1, `one decision for ${toolUseId}`);
  return found[0];
}

async function showLines(proj, id) {
  const out = await cli(proj.store, ['show', id]);
  assert.equal(out.code, 0, out.stderr);
  return out.stdout;
}

describe('resume decisions in the audit trail', { concurrency: 3 }, () => {
  it('new session, then continue: each delegation records its decision; show says it in words', async (t) => {
    const proj = project(t);
    await pause(proj, flow(), { transcript: transcriptFile(t) });
    const id = onlySession(proj.store).agent_id;
    const first = await decision(proj, 'toolu_1');
    assert.deepEqual(first.ids, [id]);
    assert.deepEqual(
      [first.details.decision, first.details.policy, first.details.candidate, first.details.passed_over],
      ['new_session', 'auto', null, 0],
    );
    assert.equal(first.details.reason, 'no paused session to resume');

    // The conversation's transcript, with neither call's message written yet: both are of one message.
    const transcript_path = path.join(tempDir(t, 'agent-session-conversation-'), 'sess-1.jsonl');
    writeFileSync(transcript_path, '{"type":"user"}\n');
    const call = (toolUseId, prompt) => ({ ...flow({ toolUseId, prompt }).pre, transcript_path });
    const denied = await pre(proj, call('toolu_2', 'Do the task'));
    assert.equal(denied.json.hookSpecificOutput.permissionDecision, 'deny');
    // A delegation of the same message: the denied session is held for that call.
    await pre(proj, call('toolu_p', 'Other work.'));
    const deny = readSession(proj.store, id).history.find((h) => h.tool_use_id === 'toolu_2');
    assert.equal(typeof deny.transcript_offset, 'number', 'the transcript, not the timing, decides');
    const second = await decision(proj, 'toolu_2');
    assert.deepEqual(second.ids, [id]);
    assert.deepEqual(
      [second.details.decision, second.details.policy, second.details.candidate, second.details.agent_id],
      ['continue', 'auto', id, 'a1'],
    );
    assert.equal(second.details.reason, 'policy auto: the earlier agent can be continued');
    const [held, ...more] = await entries(proj, 'hook.passed_over');
    assert.equal(more.length, 0, 'the continue decision passed nothing over');
    assert.deepEqual(
      [held.ids, held.details.passed_over[0].reason, held.details.tool_use_id],
      [[id], 'held', 'toolu_p'],
    );
    assert.equal((await decision(proj, 'toolu_p')).details.decision, 'new_session');

    const shown = await showLines(proj, id);
    assert.match(shown, /\n {4}resume decision: continue \(policy auto: the earlier agent can be continued\) {2}/);
    assert.doesNotMatch(shown, /approval -> approval/);
  });

  it('brief: the decision names the policy and the reason, also for a session of another conversation', async (t) => {
    const proj = project(t);
    await pause(proj, flow({ type: 'reviewer' }), { transcript: transcriptFile(t) });
    const id = onlySession(proj.store).agent_id;
    const other = flow({
      session: 'sess-2',
      toolUseId: 'toolu_9',
      type: 'reviewer',
      prompt: `Continue session ${id} please`,
    });
    assert.match((await pre(proj, other.pre)).json.hookSpecificOutput.updatedInput.prompt, /resuming session/);
    const d = await decision(proj, 'toolu_9');
    assert.deepEqual([d.ids, d.details.decision, d.details.candidate], [[id], 'brief', id]);
    assert.equal(d.details.reason, 'the earlier agent belongs to another Claude Code session');
    assert.equal(d.details.claude_session_id, 'sess-2');
    assert.match(
      await showLines(proj, id),
      /resume decision: brief \(policy auto: the earlier agent belongs to another Claude Code session\)/,
    );

    const env = { AGENT_SESSION_RESUME_POLICY: 'brief' };
    const proj2 = project(t);
    await pause(proj2, flow(), { env });
    await pre(proj2, flow({ toolUseId: 'toolu_2' }).pre, env);
    const b = await decision(proj2, 'toolu_2');
    assert.deepEqual([b.details.decision, b.details.policy, b.details.reason], ['brief', 'brief', 'policy brief']);
    assert.match(await showLines(proj2, b.ids[0]), /resume decision: brief \(policy brief\)/);
  });

  it('none: with policy off the candidate is recorded as not resumed, and a new session starts', async (t) => {
    const proj = project(t);
    const env = { AGENT_SESSION_RESUME_POLICY: 'off' };
    await pause(proj, flow(), { env, transcript: transcriptFile(t) });
    const id = onlySession(proj.store).agent_id;
    await pre(proj, flow({ toolUseId: 'toolu_2' }).pre, env);
    assert.equal(sessionIds(proj.store).length, 2);
    const d = await decision(proj, 'toolu_2');
    assert.deepEqual([d.ids, d.details.decision, d.details.policy, d.details.candidate], [[id], 'none', 'off', id]);
    assert.match(await showLines(proj, id), /resume decision: none \(policy off: the decision is only recorded\)/);
  });

  it('passed over: an expired session and one over its error budget, each with why', async (t) => {
    const proj = project(t);
    await pause(proj, flow());
    const expired = onlySession(proj.store).agent_id;
    // A zero resume window: the paused session has expired by the next delegation.
    const late = await pre(proj, flow({ toolUseId: 'toolu_2', agentId: 'a2' }).pre, {
      AGENT_SESSION_RESUME_WINDOW_MINUTES: '0',
    });
    assert.doesNotMatch(late.json.hookSpecificOutput.updatedInput.prompt, /resuming session/);
    const created = sessionIds(proj.store).find((id) => id !== expired);
    const [passed, ...none] = await entries(proj, 'hook.passed_over');
    assert.equal(none.length, 0);
    assert.deepEqual(passed.ids, [expired]);
    assert.deepEqual(
      [passed.details.count, passed.details.session, passed.details.tool_use_id, passed.details.agent_type],
      [1, created, 'toolu_2', 'general-purpose'],
    );
    const [why] = passed.details.passed_over;
    assert.deepEqual([why.candidate, why.reason], [expired, 'expired']);
    assert.match(why.detail, /resume window/);
    const d = await decision(proj, 'toolu_2');
    assert.deepEqual(
      [d.ids, d.details.decision, d.details.reason, d.details.passed_over],
      [[created], 'new_session', 'no candidate could resume', 1],
    );
    const bySession = (await cliJson(proj.store, ['audit', '--session', expired])).entries.map((e) => e.action);
    assert.equal(bySession.at(-1), 'hook.passed_over');

    const proj2 = project(t);
    await pause(proj2, flow());
    const failing = onlySession(proj2.store).agent_id;
    assert.equal((await cli(proj2.store, ['update', failing, '--error', 'disk full'])).code, 0);
    await pre(proj2, flow({ toolUseId: 'toolu_2' }).pre, { AGENT_SESSION_ERROR_BUDGET: '1' });
    const [budget] = await entries(proj2, 'hook.passed_over');
    assert.deepEqual([budget.ids, budget.details.passed_over[0].reason], [[failing], 'too_many_errors']);
    assert.match(budget.details.passed_over[0].detail, /1 errors reach the budget of 1/);
  });

  it('a delegation naming many sessions names at most 5 passed over, in one entry, and counts all', async (t) => {
    const proj = project(t);
    const ids = [];
    for (let i = 0; i < 7; i++)
      ids.push((await cliJson(proj.store, ['create', '--agent', 'general-purpose'])).agent_id);
    const absent = 'agent-20200101-000000-0badc0de';
    const prompt = `Resume one of ${[...ids, absent].join(', ')}`;
    await pre(proj, flow({ prompt }).pre);
    const [passed, ...none] = await entries(proj, 'hook.passed_over');
    assert.equal(none.length, 0, 'one entry per delegation');
    assert.equal(passed.details.count, 8);
    assert.equal(passed.ids.length, 5);
    assert.deepEqual(
      passed.details.passed_over.map((p) => [p.candidate, p.reason]),
      passed.ids.map((id) => [id, 'phase_not_resumable']),
    );
    assert.deepEqual(passed.ids, ids.slice(2).reverse(), 'the newest five');
    const d = await decision(proj, 'toolu_1');
    assert.deepEqual([d.details.decision, d.details.passed_over], ['new_session', 8]);
  });
});
