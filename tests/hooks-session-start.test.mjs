// SessionStart through the built subagent_stop hook: the paused sessions a starting conversation is told
// about, bounded, off by setting; and what a delegation naming one does from another conversation,
// with the per-phase resume windows.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fixture, flow, life, onlySession, pre, project, readSession, sessionIds } from './helpers/hooks.mjs';
import { CLI_COMMAND, literally, loadLibrary, runCli } from './helpers/run.mjs';

const { Sessions } = await loadLibrary();

const STARTUP = 'sessionstart';

/** One delegation of conversation `session` run to its end; returns the session's id. */
async function delegate(proj, f, message, env) {
  const out = await pre(proj, f.pre, env);
  assert.equal(out.code, 0);
  for (const payload of [f.post, f.start, f.stop(message)]) assert.equal((await life(proj, payload, env)).code, 0);
  return out;
}

/**
 * A session paused in `phase` by a subagent of conversation `session` (by default one of its own, so
 * the delegation does not resume an earlier paused one); returns the record.
 */
async function paused(proj, { n = 1, phase = 'approval', session = `sess-${n}`, ...rest } = {}) {
  const before = new Set(sessionIds(proj.store));
  const f = flow({ session, toolUseId: `toolu_${n}`, agentId: `a${n}`, description: `Task ${n}`, ...rest });
  await delegate(proj, f, `Looked at it.\nShall I drop table ${n}?\nsession-phase: ${phase}`);
  const id = sessionIds(proj.store).find((i) => !before.has(i));
  return readSession(proj.store, id);
}

/** Changes a session's record on disk, as time or a hand edit would. */
function edit(proj, id, change) {
  const file = path.join(proj.store, id, 'state.json');
  const record = JSON.parse(readFileSync(file, 'utf8'));
  change(record);
  writeFileSync(file, JSON.stringify(record, null, 2));
}

/** Moves a session's `last_updated` `ms` into the past, as if it had paused that long ago. */
function age(proj, id, ms) {
  edit(proj, id, (record) => (record.last_updated = new Date(Date.parse(record.last_updated) - ms).toISOString()));
}

/** What the SessionStart hook adds to the conversation, or null when it prints nothing. */
async function startText(proj, { name = STARTUP, env, ...changes } = {}) {
  const out = await life(proj, fixture(name, changes), env);
  assert.equal(out.code, 0, out.stderr);
  if (out.stdout === '') return null;
  const { hookSpecificOutput } = out.json;
  assert.equal(hookSpecificOutput.hookEventName, 'SessionStart');
  return hookSpecificOutput.additionalContext;
}

describe('SessionStart', { concurrency: 3 }, () => {
  it('says nothing, and creates no store, when nothing is paused', async (t) => {
    const proj = project(t);
    assert.equal(await startText(proj), null);
    assert.equal(existsSync(proj.store), false, 'SessionStart created the store');
    await delegate(proj, flow(), 'All done.');
    assert.equal(onlySession(proj.store).phase, 'completed');
    assert.equal(await startText(proj), null);
  });

  it('a long last message keeps its end: the question is what the text and show quote', async (t) => {
    const proj = project(t);
    const findings = Array.from({ length: 60 }, (_, i) => `- finding ${i}: module m${i}.ts has a problem`);
    const f = flow({ session: 'sess-long', toolUseId: 'toolu_long', agentId: 'along', description: 'Long' });
    const message = [...findings, 'Shall I drop the old table?', '---', '```', 'session-phase: approval'].join('\n');
    await delegate(proj, f, message);
    const s = onlySession(proj.store);
    assert.equal(s.phase, 'approval');
    assert.ok(message.length > 2000, 'the message is longer than what a record keeps');
    const text = await startText(proj);
    // The last line that says something, past the rule and the code fence.
    assert.match(text, /waiting for: "Shall I drop the old table\?"/);
    const show = await runCli(['show', s.agent_id, '--dir', proj.store], { cwd: proj.dir });
    assert.equal(show.code, 0, show.stderr);
    assert.match(
      show.stdout,
      /last message:\n {4}… \(\d+ earlier lines\)\n(?: {4}.*\n){2,5}? {4}Shall I drop the old table\?\n/,
    );
  });

  it('a paused session within its window is listed however many sessions were written after it', async (t) => {
    const proj = project(t);
    const env = { AGENT_SESSION_RESUME_WINDOW_MINUTES_APPROVAL: '1440' };
    const s = await paused(proj);
    age(proj, s.agent_id, 2 * 3600_000);
    // 150 sessions written after it, finished: more than the newest 100 a start always reads.
    const sessions = Sessions.open({ dir: proj.store, env: {} });
    for (let i = 0; i < 150; i++) {
      const made = await sessions.create({ agentName: 'other', purpose: `filler ${i}` });
      await sessions.finalize(made.agent_id, 'completed');
    }
    const text = await startText(proj, { env });
    assert.ok(text?.includes(s.agent_id), String(text));
  });

  it('lists a paused session: id, type, purpose, phase, age, what it waits for, and how to continue it', async (t) => {
    const proj = project(t);
    const s = await paused(proj);
    const text = await startText(proj);
    const line = text.split('\n').find((l) => l.includes(s.agent_id));
    assert.ok(line, text);
    assert.match(line, /\(general-purpose "Task 1"\): approval, \d+ s ago; waiting for: "Shall I drop table 1\?"/);
    // Another conversation: the old agent is out of SendMessage's reach.
    assert.match(line, new RegExp(`continue it: delegate to general-purpose naming ${s.agent_id}$`));
    assert.match(
      text,
      /delegate to its agent type naming it in the prompt as its line says: the new agent gets the resume brief/,
    );
    assert.doesNotMatch(text, / more: /);
    // The conversation the agent ran in (resumed, cleared or compacted): SendMessage reaches it.
    const own = await startText(proj, { name: 'sessionstart-resume', session_id: 'sess-1' });
    assert.match(own, new RegExp(`${s.agent_id} .*continue it with SendMessage to "a1"`));
  });

  it('is bounded: at most 5 sessions, lines cut short, then "and N more"', async (t) => {
    const proj = project(t);
    const long = 'x'.repeat(500);
    for (let n = 1; n <= 8; n++) await paused(proj, { n, description: `${n} ${long}` });
    const text = await startText(proj);
    const listed = text.split('\n').filter((l) => l.startsWith('- '));
    assert.ok(listed.length >= 1 && listed.length <= 5, text);
    assert.ok(text.length <= 1000, `${text.length} characters:\n${text}`);
    assert.match(text, new RegExp(`^and ${8 - listed.length} more: ${literally(CLI_COMMAND)} list --paused$`, 'm'));
    // Newest first.
    assert.ok(listed[0].includes('"8 x'), listed[0]);
  });

  it('expired and over-budget sessions are listed after the resumable ones, saying why', async (t) => {
    const proj = project(t);
    const old = await paused(proj, { n: 1 });
    const fresh = await paused(proj, { n: 2 });
    const failing = await paused(proj, { n: 3 });
    age(proj, old.agent_id, 31 * 60_000);
    edit(proj, failing.agent_id, (record) => (record.error_count = 3));
    const text = await startText(proj);
    const lines = text.split('\n');
    const at = (id) => lines.findIndex((l) => l.includes(id));
    assert.ok(at(fresh.agent_id) > 0 && at(fresh.agent_id) < at(old.agent_id), text);
    assert.match(
      lines[at(old.agent_id)],
      /approval, 31 min ago; .*expired \(its resume window is 30 min\), not resumed$/,
    );
    // The window of the phase decides.
    const longer = await startText(proj, { env: { AGENT_SESSION_RESUME_WINDOW_MINUTES_APPROVAL: '60' } });
    assert.doesNotMatch(longer, /expired/);
  });

  it('is off with session_start_context false (environment or config file)', async (t) => {
    const proj = project(t);
    await paused(proj);
    assert.notEqual(await startText(proj), null);
    assert.equal(await startText(proj, { env: { AGENT_SESSION_SESSION_START_CONTEXT: '0' } }), null);
    writeFileSync(path.join(proj.dir, '.claude', 'agent-session.json'), '{"session_start_context": false}\n');
    assert.equal(await startText(proj), null);
    const bad = await runCli(['list'], {
      cwd: proj.dir,
      env: { AGENT_SESSION_SESSION_START_CONTEXT: 'maybe' },
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /AGENT_SESSION_SESSION_START_CONTEXT must be true or false/);
  });
});

describe('resume from another conversation', { concurrency: 3 }, () => {
  it('a delegation naming the session gets the brief; its agent joins the session, which ends completed', async (t) => {
    const proj = project(t);
    const s = await paused(proj);
    const other = flow({
      session: 'sess-2',
      toolUseId: 'toolu_9',
      agentId: 'b9',
      prompt: `Approved: go on with ${s.agent_id}`,
    });
    const out = (await pre(proj, other.pre)).json.hookSpecificOutput;
    assert.equal(out.permissionDecision, undefined, 'told to SendMessage an agent of another conversation');
    assert.match(out.updatedInput.prompt, new RegExp(`You are resuming session ${s.agent_id}`));
    for (const payload of [other.post, other.start, other.stop('Dropped it.')]) await life(proj, payload);
    const done = onlySession(proj.store);
    assert.equal(done.agent_id, s.agent_id);
    assert.equal(done.phase, 'completed');
    assert.deepEqual(done.claude.agent_ids, ['a1', 'b9']);
    assert.equal(done.claude.session_id, 'sess-2');
    const decision = done.history.find((h) => h.event === 'resume_decision');
    assert.deepEqual(
      [decision.decision, decision.reason, decision.claude_session_id],
      ['brief', 'the earlier agent belongs to another Claude Code session', 'sess-2'],
    );
    assert.deepEqual(
      done.history.map((h) => [h.event, h.to_phase, h.claude_agent_id]),
      [
        ['started', 'executing', 'a1'],
        ['stopped', 'approval', 'a1'],
        ['resume_decision', 'approval', undefined],
        ['resumed', 'executing', 'b9'],
        ['finalized', 'completed', undefined],
      ],
    );
  });

  it('a custom id is named as `session <id>`: advised and resumed so; a mere word names nothing', async (t) => {
    const proj = project(t);
    const cli = (args) => runCli([...args, '--dir', proj.store], { cwd: proj.dir });
    assert.equal((await cli(['create', '--agent', 'planner', '--id', 'climade1', '--purpose', 'Plan it'])).code, 0);
    assert.equal((await cli(['update', 'climade1', '--phase', 'approval'])).code, 0);
    const text = await startText(proj, { session_id: 'sess-7' });
    assert.match(
      text,
      /climade1 \(planner "Plan it"\): approval, .*; continue it: delegate to planner naming session climade1$/m,
    );
    const show = await cli(['show', 'climade1']);
    assert.match(show.stdout, /delegate to planner naming session climade1 \(the new agent gets the resume brief\)/);

    // Only a paused session of the delegation's type counts: "the session handling", a missing id, a
    // finished session and one of another type name nothing, and the conversation's own is resumed.
    assert.equal((await cli(['create', '--agent', 'planner', '--id', 'done1'])).code, 0);
    assert.equal((await cli(['finalize', 'done1', 'completed'])).code, 0);
    assert.equal((await cli(['create', '--agent', 'Explore', '--id', 'explore1'])).code, 0);
    assert.equal((await cli(['update', 'explore1', '--phase', 'approval'])).code, 0);
    const other = await paused(proj, { n: 2, type: 'planner' });
    const before = sessionIds(proj.store).sort();
    const unnamed = flow({
      session: 'sess-2',
      toolUseId: 'toolu_8',
      agentId: 'c8',
      type: 'planner',
      prompt: 'Fix the session handling; session done1 did the parser, session explore1 the docs; see session nosuch1.',
    });
    const again = (await pre(proj, unnamed.pre)).json.hookSpecificOutput;
    assert.deepEqual(sessionIds(proj.store).sort(), before, "no new session: its own conversation's one is resumed");
    assert.equal(
      readSession(proj.store, other.agent_id).history.at(-1).event,
      'resume_decision',
      JSON.stringify(again),
    );

    const named = flow({
      session: 'sess-7',
      toolUseId: 'toolu_9',
      agentId: 'b9',
      type: 'planner',
      prompt: 'Approved. Continue session climade1.',
    });
    const out = (await pre(proj, named.pre)).json.hookSpecificOutput;
    assert.match(out.updatedInput.prompt, /You are resuming session climade1/);
    assert.deepEqual(sessionIds(proj.store).sort(), before);
    // An id ending in a dot is found as written, at the end of a sentence too.
    assert.equal((await cli(['create', '--agent', 'planner', '--id', 'v1.'])).code, 0);
    assert.equal((await cli(['update', 'v1.', '--phase', 'approval'])).code, 0);
    const dotted = flow({
      session: 'sess-8',
      toolUseId: 'toolu_10',
      agentId: 'd10',
      type: 'planner',
      prompt: 'Go on with session v1.',
    });
    const resumedDotted = (await pre(proj, dotted.pre)).json.hookSpecificOutput;
    assert.match(resumedDotted.updatedInput.prompt, /You are resuming session v1\./);
    for (const payload of [named.post, named.start, named.stop('Done.')]) await life(proj, payload);
    const done = readSession(proj.store, 'climade1');
    assert.equal(done.phase, 'completed');
    assert.deepEqual(done.claude.agent_ids, ['b9']);
  });

  it('`session <id>` names nothing when it would not resume; `<generated>-v2` is an id of its own', async (t) => {
    const proj = project(t);
    const cli = (args) => runCli([...args, '--dir', proj.store], { cwd: proj.dir });
    const own = await paused(proj, { n: 3, type: 'planner', session: 'sess-3' });
    assert.equal((await cli(['create', '--agent', 'planner', '--id', 'plan-old'])).code, 0);
    assert.equal((await cli(['update', 'plan-old', '--phase', 'approval'])).code, 0);
    age(proj, 'plan-old', 2 * 86_400_000);
    const before = sessionIds(proj.store).sort();
    const again = flow({
      session: 'sess-3',
      toolUseId: 'toolu_31',
      agentId: 'e31',
      type: 'planner',
      prompt: 'Go on; session plan-old had notes.',
    });
    await pre(proj, again.pre);
    assert.deepEqual(sessionIds(proj.store).sort(), before, "its own conversation's paused session is resumed");
    assert.equal(readSession(proj.store, own.agent_id).history.at(-1).event, 'resume_decision');

    // `<generated id>-v2` is a custom id of its own, not the generated one inside it.
    const v2 = `${own.agent_id}-v2`;
    assert.equal((await cli(['create', '--agent', 'planner', '--id', v2])).code, 0);
    assert.equal((await cli(['update', v2, '--phase', 'approval'])).code, 0);
    const named = flow({
      session: 'sess-9',
      toolUseId: 'toolu_91',
      agentId: 'f91',
      type: 'planner',
      prompt: `Continue session ${v2}.`,
    });
    const out = (await pre(proj, named.pre)).json.hookSpecificOutput;
    assert.match(out.updatedInput.prompt, new RegExp(`You are resuming session ${v2}:`));
  });

  it("a second conversation naming it before the first one's agent starts gets a new session", async (t) => {
    const proj = project(t);
    const s = await paused(proj);
    const naming = (session, n) =>
      flow({ session, toolUseId: `toolu_${n}`, agentId: `b${n}`, prompt: `Approved: go on with ${s.agent_id}` });
    const second = naming('sess-2', 2);
    const third = naming('sess-3', 3);
    const first = (await pre(proj, second.pre)).json.hookSpecificOutput;
    assert.match(first.updatedInput.prompt, new RegExp(`You are resuming session ${s.agent_id}`));
    // Conversation 3 names it while conversation 2's agent has not started yet.
    const other = (await pre(proj, third.pre)).json.hookSpecificOutput;
    assert.doesNotMatch(other.updatedInput.prompt, /You are resuming session/);
    for (const payload of [second.post, second.start, second.stop('Dropped it.')]) await life(proj, payload);
    for (const payload of [third.post, third.start, third.stop('Asked.\nsession-phase: approval')])
      await life(proj, payload);
    const resumed = readSession(proj.store, s.agent_id);
    assert.equal(resumed.phase, 'completed');
    assert.deepEqual(resumed.claude.agent_ids, ['a1', 'b2']);
    assert.equal(resumed.claude.session_id, 'sess-2');
    const fresh = sessionIds(proj.store).filter((id) => id !== s.agent_id);
    assert.equal(fresh.length, 1);
    assert.equal(readSession(proj.store, fresh[0]).phase, 'approval');
    const audit = await runCli(['audit', '--json', '--action', 'hook.passed_over', '--dir', proj.store], {
      cwd: proj.dir,
    });
    const [entry] = JSON.parse(audit.stdout).entries;
    assert.deepEqual(
      entry.details.passed_over.map((p) => [p.candidate, p.reason]),
      [[s.agent_id, 'held']],
    );
    assert.match(entry.details.passed_over[0].detail, /being resumed by Claude Code conversation sess-2/);
  });

  it('per-phase windows: an approval may wait longer than an investigation', async (t) => {
    const proj = project(t);
    const approval = await paused(proj, { n: 1, phase: 'approval' });
    const investigating = await paused(proj, { n: 2, phase: 'investigating' });
    for (const s of [approval, investigating]) age(proj, s.agent_id, 2 * 3600_000);
    const env = { AGENT_SESSION_RESUME_WINDOW_MINUTES_APPROVAL: '1440' };
    const asked = async (s, phaseEnv) => {
      const r = await runCli(['should-resume', s.agent_id, '--json'], { cwd: proj.dir, env: phaseEnv });
      return JSON.parse(r.stdout);
    };
    assert.deepEqual(
      [(await asked(approval, {})).reason, (await asked(approval, env)).reason],
      ['expired', 'resumable'],
    );
    assert.equal((await asked(investigating, env)).reason, 'expired');

    const ask = (s, n) =>
      pre(proj, flow({ session: 'sess-2', toolUseId: `toolu_x${n}`, prompt: `Go on with ${s.agent_id}` }).pre, env);
    const briefed = (await ask(approval, 1)).json.hookSpecificOutput.updatedInput.prompt;
    assert.match(briefed, new RegExp(`You are resuming session ${approval.agent_id}`));
    const fresh = (await ask(investigating, 2)).json.hookSpecificOutput.updatedInput.prompt;
    assert.doesNotMatch(fresh, /You are resuming session/);
    assert.equal(sessionIds(proj.store).length, 3, 'the expired investigation got a new session');

    // The same through the config file.
    writeFileSync(
      path.join(proj.dir, '.claude', 'agent-session.json'),
      '{"resume_window_minutes_investigating": 600}\n',
    );
    assert.equal((await asked(investigating, {})).reason, 'resumable');
  });
});
