// Delegation flows through the built hooks, in the orders Claude Code produces (tests/e2e/NOTES.md):
// foreground, background, SendMessage continuation, nested delegation, several agents of one type,
// and the resume policies continue / brief / off.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fixture, flow, life, onlySession, pre, project, readSession, sessionIds } from './helpers/hooks.mjs';
import { loadLibrary, runCli, tempDir } from './helpers/run.mjs';

/** One delegation run to its end; `message` is the subagent's final message. Returns the session. */
async function delegate(proj, f, message, { env, transcript } = {}) {
  const out = await pre(proj, f.pre, env);
  assert.equal(out.code, 0);
  await life(proj, f.post, env);
  await life(proj, f.start, env);
  await life(proj, f.stop(message, transcript ? { agent_transcript_path: transcript } : {}), env);
  return out;
}

/** Moves a session's latest history entry (a resume decision) `ms` into the past, as if made that long ago. */
function backdateLastDecision(store, id, ms) {
  const file = path.join(store, id, 'state.json');
  const record = JSON.parse(readFileSync(file, 'utf8'));
  const last = record.history.at(-1);
  assert.equal(last.event, 'resume_decision');
  last.timestamp = new Date(Date.parse(last.timestamp) - ms).toISOString();
  writeFileSync(file, JSON.stringify(record, null, 2));
}

/** A transcript file that exists, as Claude Code keeps it while the conversation lives. */
function transcriptFile(t) {
  const file = path.join(tempDir(t, 'agent-session-transcript-'), 'agent-a1.jsonl');
  writeFileSync(file, '{}\n');
  return file;
}

// Independent temp projects: a few flows run at once to keep the file quick.
describe('delegation flows', { concurrency: 3 }, () => {
  it(
    'foreground: start and stop arrive before PostToolUse; ' + 'the session ends completed with the agent id',
    async (t) => {
      const proj = project(t);
      const f = flow({ background: false });
      await pre(proj, f.pre);
      await life(proj, f.start);
      assert.equal(onlySession(proj.store).phase, 'executing');
      await life(proj, f.stop('All done.'));
      await life(proj, f.post);
      const s = onlySession(proj.store);
      assert.equal(s.phase, 'completed');
      assert.equal(s.summary, 'All done.');
      assert.deepEqual(s.claude.agent_ids, ['a1']);
    },
  );

  it(
    'background: PostToolUse first; a status line pauses, ' + '`failed` fails, and a repeated stop changes nothing',
    async (t) => {
      const proj = project(t);
      const f = flow();
      await delegate(proj, f, 'I need a decision on the schema.\nsession-phase: approval');
      const paused = onlySession(proj.store);
      assert.equal(paused.phase, 'approval');
      assert.equal(paused.resume_ready, true);
      assert.equal(paused.claude.last_message, 'I need a decision on the schema.');
      const file = path.join(proj.store, paused.agent_id, 'state.json');
      const before = readFileSync(file, 'utf8');
      const again = await life(proj, f.stop('session-phase: failed'));
      assert.deepEqual([again.code, again.stdout], [0, '']);
      assert.equal(readFileSync(file, 'utf8'), before, 'the repeated stop was ignored');

      const g = flow({ toolUseId: 'toolu_2', agentId: 'a2', type: 'tester' });
      await delegate(proj, g, 'Could not build.\n**session-phase: failed**');
      const failed = sessionIds(proj.store)
        .map((id) => readSession(proj.store, id))
        .find((s) => s.agent_name === 'tester');
      assert.equal(failed.phase, 'failed');
      assert.equal(failed.summary, 'Could not build.');
    },
  );

  it(
    'a phase recorded through the CLI during the turn keeps ' +
      'the session paused when the message has no status line',
    async (t) => {
      const proj = project(t);
      const f = flow();
      await pre(proj, f.pre);
      await life(proj, f.post);
      await life(proj, f.start);
      const id = onlySession(proj.store).agent_id;
      const cli = await runCli(['update', id, '--phase', 'investigating', '--dir', proj.store]);
      assert.equal(cli.code, 0, cli.stderr);
      await life(proj, f.stop('Half way through the logs.'));
      const s = onlySession(proj.store);
      assert.equal(s.phase, 'investigating');
      assert.equal(s.resume_ready, true);
    },
  );

  it(
    'continue policy: the next delegation is denied with the SendMessage instruction; ' +
      'the continuation updates the same session',
    async (t) => {
      const proj = project(t);
      const transcript = transcriptFile(t);
      await delegate(proj, flow(), 'Plan ready.\nsession-phase: approval', { transcript });
      const id = onlySession(proj.store).agent_id;

      const second = flow({ toolUseId: 'toolu_2', agentId: 'a2', prompt: 'Approved, go on' });
      const denied = await pre(proj, second.pre);
      assert.equal(denied.code, 0);
      const out = denied.json.hookSpecificOutput;
      assert.equal(out.permissionDecision, 'deny');
      assert.match(out.permissionDecisionReason, /SendMessage/);
      assert.ok(out.permissionDecisionReason.includes('to: "a1"'), out.permissionDecisionReason);
      assert.ok(out.permissionDecisionReason.includes(id));
      assert.match(out.permissionDecisionReason, /phase approval/);
      assert.deepEqual(sessionIds(proj.store), [id], 'no new session');
      const decision = onlySession(proj.store).history.at(-1);
      assert.deepEqual(
        [decision.event, decision.decision, decision.policy, decision.tool_use_id],
        ['resume_decision', 'deny', 'auto', 'toolu_2'],
      );

      // The model obeys: SendMessage to a1, then a1 starts and stops again (same agent id).
      const send = await pre(proj, fixture('pretooluse-sendmessage', { session_id: 'sess-1' }));
      assert.deepEqual([send.code, send.stdout], [0, '']);
      await life(proj, fixture('subagentstart-continued', { session_id: 'sess-1', agent_id: 'a1' }));
      let s = onlySession(proj.store);
      assert.equal(s.phase, 'executing');
      assert.equal(s.history.at(-1).event, 'resumed');
      await life(
        proj,
        fixture('subagentstop-continued', {
          session_id: 'sess-1',
          agent_id: 'a1',
          last_assistant_message: 'Migrated.',
        }),
      );
      s = onlySession(proj.store);
      assert.equal(s.phase, 'completed');
      assert.equal(s.summary, 'Migrated.');
    },
  );

  it('never denied twice in a row: a second delegation instead of SendMessage goes through with a brief', async (t) => {
    const proj = project(t);
    await delegate(proj, flow({ description: 'Schema migration' }), 'Which column type?\nsession-phase: approval', {
      transcript: transcriptFile(t),
    });
    const id = onlySession(proj.store).agent_id;
    const second = flow({ toolUseId: 'toolu_2', agentId: 'a2', prompt: 'Use text.' });
    assert.equal((await pre(proj, second.pre)).json.hookSpecificOutput.permissionDecision, 'deny');
    const third = flow({ toolUseId: 'toolu_3', agentId: 'a3', prompt: 'Use text.' });
    // Right after the deny, a delegation is taken for a parallel one of the same message: its own session.
    const parallel = (await pre(proj, flow({ toolUseId: 'toolu_p', agentId: 'ap', prompt: 'Other work.' }).pre)).json
      .hookSpecificOutput;
    assert.doesNotMatch(parallel.updatedInput.prompt, new RegExp(id));
    // The model answers the deny a model round trip later (here: the deny is dated 2 s back).
    backdateLastDecision(proj.store, id, 2000);
    const out = (await pre(proj, third.pre)).json.hookSpecificOutput;
    assert.equal(out.permissionDecision, undefined);
    assert.match(out.updatedInput.prompt, new RegExp(`resuming session ${id}`));
    assert.match(out.updatedInput.prompt, /Which column type\?/);
    assert.match(out.updatedInput.prompt, /Use text\.\n\n\[agent-session\] Your session/);
    assert.equal(sessionIds(proj.store).length, 2);
    assert.deepEqual(
      readSession(proj.store, id)
        .history.filter((h) => h.event === 'resume_decision')
        .map((h) => h.decision),
      ['deny', 'brief'],
    );
    // The new agent joins the same session.
    await life(proj, third.post);
    await life(proj, third.start);
    const s = readSession(proj.store, id);
    assert.equal(s.phase, 'executing');
    assert.deepEqual(s.claude.agent_ids, ['a1', 'a3']);
    assert.equal(s.history.at(-1).event, 'resumed');
  });

  it('brief policy: the prompt carries a deterministic, bounded brief of the session', async (t) => {
    const proj = project(t);
    const env = { AGENT_SESSION_RESUME_POLICY: 'brief' };
    const long = `${'x'.repeat(20_000)}\nsession-phase: investigating`;
    await delegate(proj, flow({ description: 'Find the leak' }), long, { env, transcript: transcriptFile(t) });
    const id = onlySession(proj.store).agent_id;
    assert.equal(
      (
        await runCli([
          'update',
          id,
          '--metadata',
          '{"ticket":"OPS-7"}',
          '--error',
          'heap dump failed',
          '--dir',
          proj.store,
        ])
      ).code,
      0,
    );
    const briefs = [];
    for (const [toolUseId, agentId] of [
      ['toolu_2', 'a2'],
      ['toolu_3', 'a3'],
    ]) {
      // Each delegation attaches to the session and starts it, so it is paused again before the next one.
      const next = flow({ toolUseId, agentId, prompt: 'Keep going' });
      const out = (await pre(proj, next.pre, env)).json.hookSpecificOutput;
      assert.equal(out.permissionDecision, undefined);
      briefs.push(out.updatedInput.prompt);
      await life(proj, next.post, env);
      await life(proj, next.start, env);
      assert.equal((await runCli(['update', id, '--phase', 'investigating', '--dir', proj.store])).code, 0);
    }
    const prompt = briefs[0];
    for (const part of [
      id,
      'Purpose: Find the leak',
      'Phase when it stopped: investigating',
      '"ticket":"OPS-7"',
      'heap dump failed',
      'executing -> investigating',
      'Keep going',
    ]) {
      assert.ok(prompt.includes(part), `brief lacks ${part}`);
    }
    assert.ok(prompt.length < 6000, `brief is bounded (${prompt.length} characters)`);
    assert.deepEqual(sessionIds(proj.store), [id]);
    assert.deepEqual(
      onlySession(proj.store)
        .history.filter((h) => h.event === 'resume_decision')
        .map((h) => [h.policy, h.decision]),
      [
        ['brief', 'brief'],
        ['brief', 'brief'],
      ],
    );
  });

  it('the transcript gone: policy auto falls back to a brief', async (t) => {
    const proj = project(t);
    await delegate(proj, flow(), 'session-phase: planning', { transcript: '/nonexistent/agent-a1.jsonl' });
    const out = (await pre(proj, flow({ toolUseId: 'toolu_2' }).pre)).json.hookSpecificOutput;
    assert.equal(out.permissionDecision, undefined);
    assert.match(out.updatedInput.prompt, /resuming session/);
    assert.match(onlySession(proj.store).history.at(-1).reason, /transcript/);
  });

  it('off policy: a new session is created and the decision is only recorded on the paused one', async (t) => {
    const proj = project(t);
    const env = { AGENT_SESSION_RESUME_POLICY: 'off' };
    await delegate(proj, flow(), 'session-phase: approval', { env, transcript: transcriptFile(t) });
    const [paused] = sessionIds(proj.store);
    const out = await pre(proj, flow({ toolUseId: 'toolu_2' }).pre, env);
    assert.equal(out.json.hookSpecificOutput.permissionDecision, undefined);
    assert.doesNotMatch(out.json.hookSpecificOutput.updatedInput.prompt, /resuming session/);
    assert.equal(sessionIds(proj.store).length, 2);
    const old = readSession(proj.store, paused);
    assert.equal(old.phase, 'approval');
    assert.deepEqual([old.history.at(-1).decision, old.history.at(-1).policy], ['record', 'off']);
  });

  it(
    'a paused session named in the prompt is resumed ' + 'even from another Claude Code session, with a brief',
    async (t) => {
      const proj = project(t);
      await delegate(proj, flow({ type: 'reviewer' }), 'session-phase: approval', { transcript: transcriptFile(t) });
      const id = onlySession(proj.store).agent_id;
      const other = flow({
        session: 'sess-2',
        toolUseId: 'toolu_9',
        type: 'reviewer',
        prompt: `Continue session ${id} please`,
      });
      const out = (await pre(proj, other.pre)).json.hookSpecificOutput;
      assert.equal(out.permissionDecision, undefined);
      assert.match(out.updatedInput.prompt, new RegExp(`resuming session ${id}`));
      assert.equal(onlySession(proj.store).claude.session_id, 'sess-2');
    },
  );

  it('a session named by a delegation to another agent type is referred to, not continued: stays paused', async (t) => {
    const proj = project(t);
    await delegate(proj, flow({ type: 'reviewer' }), 'session-phase: approval', { transcript: transcriptFile(t) });
    const id = onlySession(proj.store).agent_id;
    const explore = flow({
      session: 'sess-2',
      toolUseId: 'toolu_9',
      agentId: 'x9',
      type: 'Explore',
      prompt: `Review what ${id} did`,
    });
    const out = (await pre(proj, explore.pre)).json.hookSpecificOutput;
    assert.doesNotMatch(out.updatedInput.prompt, /resuming session/);
    for (const payload of [explore.post, explore.start, explore.stop('Looks fine.')]) await life(proj, payload);
    const named = readSession(proj.store, id);
    assert.deepEqual([named.phase, named.claude.agent_ids], ['approval', ['a1']], 'not ended by the Explore answer');
    assert.equal(sessionIds(proj.store).length, 2);
    const audit = await runCli(['audit', '--json', '--action', 'hook.passed_over', '--dir', proj.store], {
      cwd: proj.dir,
    });
    const [entry] = JSON.parse(audit.stdout).entries;
    assert.deepEqual(
      entry.details.passed_over.map((p) => [p.candidate, p.reason, p.detail]),
      [[id, 'other_agent_type', 'a reviewer session; this delegation is to Explore']],
    );
  });

  it('nested delegation: a PreToolUse carrying the caller agent_id creates a child session', async (t) => {
    const proj = project(t);
    const parent = flow();
    await pre(proj, parent.pre);
    await life(proj, parent.post);
    await life(proj, parent.start);
    const parentId = onlySession(proj.store).agent_id;
    const child = flow({ toolUseId: 'toolu_c', agentId: 'c1', type: 'Explore', caller: 'a1' });
    await pre(proj, child.pre);
    await life(proj, child.post);
    await life(proj, child.start);
    await life(proj, child.stop('Found it.'));
    const kid = sessionIds(proj.store)
      .map((id) => readSession(proj.store, id))
      .find((s) => s.agent_id !== parentId);
    assert.equal(kid.parent_session_id, parentId);
    assert.equal(kid.agent_name, 'Explore');
    assert.equal(kid.claude.caller_agent_id, 'a1');
    assert.equal(kid.phase, 'completed');
    assert.equal(readSession(proj.store, parentId).phase, 'executing');
  });

  it('two agents of one type in one turn bind exactly, in foreground and in background order', async (t) => {
    for (const background of [false, true]) {
      const proj = project(t);
      const one = flow({ toolUseId: 'toolu_1', agentId: 'a1', background, prompt: 'first' });
      const two = flow({ toolUseId: 'toolu_2', agentId: 'a2', background, prompt: 'second' });
      await pre(proj, one.pre);
      await pre(proj, two.pre);
      if (background) {
        await life(proj, two.post);
        await life(proj, one.post);
      }
      // The second agent starts first and the first one stops first.
      await life(proj, two.start);
      await life(proj, one.start);
      await life(proj, one.stop('Need approval.\nsession-phase: approval'));
      await life(proj, two.stop('Finished second.'));
      if (!background) {
        await life(proj, two.post);
        await life(proj, one.post);
      }
      const byPrompt = Object.fromEntries(
        sessionIds(proj.store)
          .map((id) => readSession(proj.store, id))
          .map((s) => [s.claude.tool_use_id, s]),
      );
      assert.deepEqual(
        [byPrompt.toolu_1.claude.agent_id, byPrompt.toolu_1.phase],
        ['a1', 'approval'],
        `background=${background}`,
      );
      assert.deepEqual(
        [byPrompt.toolu_2.claude.agent_id, byPrompt.toolu_2.phase, byPrompt.toolu_2.summary],
        ['a2', 'completed', 'Finished second.'],
      );
    }
  });

  it('two delegations of one type in one turn never share a paused session: the second gets its own', async (t) => {
    for (const policy of ['brief', 'auto']) {
      const proj = project(t);
      const env = { AGENT_SESSION_RESUME_POLICY: policy };
      await delegate(proj, flow({ type: 'reviewer' }), 'Waiting for Bob.\nsession-phase: approval', {
        env,
        transcript: transcriptFile(t),
      });
      const [paused] = sessionIds(proj.store);
      // Both PreToolUse calls of one turn come before either agent starts; Claude Code runs their
      // hooks at the same time (checked with the real CLI: they start within milliseconds).
      const two = flow({ toolUseId: 'toolu_2', agentId: 'a2', type: 'reviewer', description: 'Billing' });
      const three = flow({ toolUseId: 'toolu_3', agentId: 'a3', type: 'reviewer', description: 'Search' });
      const outs =
        policy === 'brief'
          ? [await pre(proj, two.pre, env), await pre(proj, three.pre, env)]
          : await Promise.all([pre(proj, two.pre, env), pre(proj, three.pre, env)]);
      const answers = outs.map((o) => o.json.hookSpecificOutput);
      if (policy === 'auto') {
        // One is denied in favour of SendMessage; the other, started before that deny, is no retry of it.
        const denied = answers.findIndex((a) => a.permissionDecision === 'deny');
        assert.notEqual(denied, -1, JSON.stringify(answers));
        const other = answers[1 - denied];
        assert.equal(other.permissionDecision, undefined, JSON.stringify(answers));
        assert.doesNotMatch(
          other.updatedInput.prompt,
          new RegExp(paused),
          'the parallel delegation was handed the denied session',
        );
        const ran = [two, three][1 - denied];
        for (const e of [ran.post, ran.start, ran.stop('reviewed')]) await life(proj, e, env);
        const sessions = sessionIds(proj.store).map((id) => readSession(proj.store, id));
        assert.deepEqual(
          sessions.map((s) => [s.agent_id === paused, s.phase, s.claude.agent_ids]).sort(),
          [
            [false, 'completed', [ran === two ? 'a2' : 'a3']],
            [true, 'approval', ['a1']],
          ].sort(),
        );
        continue;
      }
      const [first, second] = answers;
      assert.match(first.updatedInput.prompt, new RegExp(`resuming session ${paused}`));
      assert.doesNotMatch(second.updatedInput.prompt, /resuming session/, 'the paused session is already taken');
      for (const f of [two, three]) await life(proj, f.post, env);
      for (const f of [two, three]) await life(proj, f.start, env);
      await life(proj, two.stop('billing reviewed'), env);
      await life(proj, three.stop('search reviewed'), env);
      const sessions = sessionIds(proj.store).map((id) => readSession(proj.store, id));
      assert.equal(sessions.length, 2);
      assert.deepEqual(
        sessions.map((s) => [s.purpose, s.phase, s.summary]).sort(),
        [
          ['A task', 'completed', 'billing reviewed'],
          ['Search', 'completed', 'search reviewed'],
        ].sort(),
      );
    }
  });

  it(
    "the transcript tells a call of the denied one's message from a retry: " +
      'still streaming, same message, or a later one',
    async (t) => {
      const call = (message, id) =>
        JSON.stringify({
          type: 'assistant',
          message: { id: message, role: 'assistant', content: [{ type: 'tool_use', id, name: 'Agent', input: {} }] },
        });
      const cases = [
        // The denied call's message is not in the transcript yet: it is still being streamed, with this call.
        { name: 'still streaming', lines: [call('m0', 'toolu_1')], backdate: true, resumes: false },
        // Both calls in one message, the second streamed seconds after the first.
        {
          name: 'same message',
          lines: [call('m0', 'toolu_1'), call('m1', 'toolu_2'), call('m1', 'toolu_3')],
          backdate: true,
          resumes: false,
        },
        // A later message, even within a second of the deny: a retry, which gets the brief.
        {
          name: 'later message',
          lines: [call('m0', 'toolu_1'), call('m1', 'toolu_2'), call('m2', 'toolu_3')],
          backdate: false,
          resumes: true,
        },
        // The denied call's message was already written when the deny was given (its last block streamed).
        {
          name: 'written before the deny, later message',
          lines: [call('m0', 'toolu_1'), call('m1', 'toolu_2'), call('m2', 'toolu_3')],
          before: 2,
          backdate: false,
          resumes: true,
        },
        {
          name: 'written before the deny, same message',
          lines: [call('m0', 'toolu_1'), call('m1', 'toolu_3'), call('m1', 'toolu_2')],
          before: 3,
          backdate: true,
          resumes: false,
        },
      ];
      for (const c of cases) {
        const proj = project(t);
        const transcript = path.join(tempDir(t, 'agent-session-main-transcript-'), 'conversation.jsonl');
        const withTranscript = (f) => ({ ...f, pre: { ...f.pre, transcript_path: transcript } });
        await delegate(proj, withTranscript(flow()), 'Which column type?\nsession-phase: approval', {
          transcript: transcriptFile(t),
        });
        const id = onlySession(proj.store).agent_id;
        writeFileSync(transcript, `${c.lines.slice(0, c.before ?? 1).join('\n')}\n`);
        assert.equal(
          (await pre(proj, withTranscript(flow({ toolUseId: 'toolu_2', agentId: 'a2' })).pre)).json.hookSpecificOutput
            .permissionDecision,
          'deny',
          c.name,
        );
        writeFileSync(transcript, `${c.lines.join('\n')}\n`);
        if (c.backdate) backdateLastDecision(proj.store, id, 5000);
        const out = (await pre(proj, withTranscript(flow({ toolUseId: 'toolu_3', agentId: 'a3' })).pre)).json
          .hookSpecificOutput;
        assert.equal(out.permissionDecision, undefined, c.name);
        assert.equal(new RegExp(`resuming session ${id}`).test(out.updatedInput.prompt), c.resumes, c.name);
        assert.equal(sessionIds(proj.store).length, c.resumes ? 1 : 2, c.name);
      }
    },
  );

  it(
    'in a transcript over a MiB whose last MiB starts inside a character, ' +
      "the denied call's message is found where it is",
    async (t) => {
      const call = (message, id) =>
        JSON.stringify({
          type: 'assistant',
          message: { id: message, role: 'assistant', content: [{ type: 'tool_use', id, name: 'Agent', input: {} }] },
        });
      const proj = project(t);
      const transcript = path.join(tempDir(t, 'agent-session-main-transcript-'), 'conversation.jsonl');
      const withTranscript = (f) => ({ ...f, pre: { ...f.pre, transcript_path: transcript } });
      await delegate(proj, withTranscript(flow()), 'Which column type?\nsession-phase: approval', {
        transcript: transcriptFile(t),
      });
      const id = onlySession(proj.store).agent_id;
      // A long first line of two-byte characters, sized so that the file's last MiB starts in the middle of one.
      const denied = `${call('m1', 'toolu_2')}\n`;
      let head = `{"text":"${'\u00e9'.repeat(600 * 1024)}"}\n`;
      if ((Buffer.byteLength(head) + Buffer.byteLength(denied) - 1024 * 1024 - '{"text":"'.length) % 2 === 0)
        head = head.replace('"}\n', '"} \n');
      assert.equal((Buffer.byteLength(head) + Buffer.byteLength(denied) - 1024 * 1024 - '{"text":"'.length) % 2, 1);
      // The denied call's message is already written when its hook runs.
      writeFileSync(transcript, head + denied);
      assert.equal(
        (await pre(proj, withTranscript(flow({ toolUseId: 'toolu_2', agentId: 'a2' })).pre)).json.hookSpecificOutput
          .permissionDecision,
        'deny',
      );
      appendFileSync(transcript, `${call('m2', 'toolu_3')}\n`);
      // A retry in the next message, right away: the brief.
      const out = (await pre(proj, withTranscript(flow({ toolUseId: 'toolu_3', agentId: 'a3' })).pre)).json
        .hookSpecificOutput;
      assert.match(out.updatedInput.prompt, new RegExp(`resuming session ${id}`));
      assert.equal(readSession(proj.store, id).history.at(-2).transcript_offset, Buffer.byteLength(head));
    },
  );

  it(
    'a deny never holds a session against a call of another turn: ' +
      'much written since, another caller, another conversation',
    async (t) => {
      const call = (message, id) =>
        JSON.stringify({
          type: 'assistant',
          message: { id: message, role: 'assistant', content: [{ type: 'tool_use', id, name: 'Agent', input: {} }] },
        });
      const setup = async () => {
        const proj = project(t);
        const transcript = path.join(tempDir(t, 'agent-session-main-transcript-'), 'conversation.jsonl');
        writeFileSync(transcript, `${call('m0', 'toolu_1')}\n`);
        const withTranscript = (f) => ({ ...f, pre: { ...f.pre, transcript_path: transcript } });
        await delegate(proj, withTranscript(flow()), 'Which column type?\nsession-phase: approval', {
          transcript: transcriptFile(t),
        });
        return { proj, transcript, withTranscript, id: onlySession(proj.store).agent_id };
      };
      const resumed = (out, id) =>
        out.permissionDecision === undefined && new RegExp(`resuming session ${id}`).test(out.updatedInput.prompt);

      // Over a MiB written to the transcript since the deny: a later turn, even right away.
      const big = await setup();
      assert.equal(
        (await pre(big.proj, big.withTranscript(flow({ toolUseId: 'toolu_2' })).pre)).json.hookSpecificOutput
          .permissionDecision,
        'deny',
      );
      const longMessage = {
        type: 'assistant',
        message: { id: 'm2', content: [{ type: 'text', text: 'x'.repeat(1100 * 1024) }] },
      };
      appendFileSync(big.transcript, `${call('m1', 'toolu_2')}\n${JSON.stringify(longMessage)}\n`);
      assert.ok(
        resumed(
          (await pre(big.proj, big.withTranscript(flow({ toolUseId: 'toolu_3' })).pre)).json.hookSpecificOutput,
          big.id,
        ),
        'over a MiB since',
      );

      // Denied to a subagent's delegation (its call is in the subagent's transcript): the main agent's
      // call is another one.
      const nested = await setup();
      const inner = flow({ toolUseId: 'toolu_2', caller: 'a-caller' });
      assert.equal(
        (await pre(nested.proj, nested.withTranscript(inner).pre)).json.hookSpecificOutput.permissionDecision,
        'deny',
      );
      assert.ok(
        resumed(
          (await pre(nested.proj, nested.withTranscript(flow({ toolUseId: 'toolu_3' })).pre)).json.hookSpecificOutput,
          nested.id,
        ),
        'another caller',
      );

      // Denied in one conversation; another conversation names the session.
      const other = await setup();
      assert.equal(
        (await pre(other.proj, other.withTranscript(flow({ toolUseId: 'toolu_2' })).pre)).json.hookSpecificOutput
          .permissionDecision,
        'deny',
      );
      const elsewhere = flow({ session: 'sess-2', toolUseId: 'toolu_9', prompt: `Go on with ${other.id}.` });
      assert.ok(
        resumed((await pre(other.proj, elsewhere.pre)).json.hookSpecificOutput, other.id),
        'another conversation',
      );
    },
  );

  it('a delegation naming a session takes it even while a spawn that never started holds it', async (t) => {
    const proj = project(t);
    await delegate(proj, flow({ type: 'reviewer' }), 'session-phase: approval', {
      transcript: '/nonexistent/agent-a1.jsonl',
    });
    const [paused] = sessionIds(proj.store);
    // A brief spawn refused at the permission prompt: it holds the session, and no event comes.
    await pre(proj, flow({ toolUseId: 'toolu_2', agentId: 'a2', type: 'reviewer' }).pre);
    const unnamed = (await pre(proj, flow({ toolUseId: 'toolu_3', agentId: 'a3', type: 'reviewer' }).pre)).json
      .hookSpecificOutput;
    assert.doesNotMatch(unnamed.updatedInput.prompt, /resuming session/, 'an unnamed delegation took the held session');
    // The user's refusal and the model's retry take a while (here: the spawn is dated 5 s back).
    const index = path.join(proj.store, '.claude-code', 'sess-1.json');
    const data = JSON.parse(readFileSync(index, 'utf8'));
    data.spawns.toolu_2.at = new Date(Date.parse(data.spawns.toolu_2.at) - 5000).toISOString();
    writeFileSync(index, JSON.stringify(data));
    // The model retries, naming the session: it resumes that session, no third one is made.
    const named = flow({
      toolUseId: 'toolu_4',
      agentId: 'a4',
      type: 'reviewer',
      prompt: `Continue ${paused}: approved.`,
    });
    const out = (await pre(proj, named.pre)).json.hookSpecificOutput;
    assert.match(out.updatedInput.prompt, new RegExp(`resuming session ${paused}`));
    for (const e of [named.post, named.start, named.stop('Applied.')]) await life(proj, e);
    const s = readSession(proj.store, paused);
    assert.deepEqual([s.phase, s.summary, s.claude.agent_id], ['completed', 'Applied.', 'a4']);
    assert.equal(sessionIds(proj.store).length, 2);
  });

  it(
    'a spawn whose agent never started (refused) holds nothing after 10 minutes: ' +
      'starts bind again, its session is a candidate again',
    async (t) => {
      const proj = project(t);
      await delegate(proj, flow({ type: 'reviewer' }), 'session-phase: approval', {
        transcript: '/nonexistent/agent-a1.jsonl',
      });
      const [paused] = sessionIds(proj.store);
      // Brief spawn toolu_2 attached to the paused session, and refused at the permission prompt: no event ever comes.
      await pre(proj, flow({ toolUseId: 'toolu_2', agentId: 'a2', type: 'reviewer' }).pre);
      const index = path.join(proj.store, '.claude-code', 'sess-1.json');
      const data = JSON.parse(readFileSync(index, 'utf8'));
      data.spawns.toolu_2.at = new Date(Date.now() - 11 * 60_000).toISOString();
      writeFileSync(index, JSON.stringify(data));
      // A foreground delegation: its start and stop come before PostToolUse and bind as the only waiting spawn.
      const next = flow({ toolUseId: 'toolu_3', agentId: 'a3', type: 'reviewer', background: false });
      const out = (await pre(proj, next.pre)).json.hookSpecificOutput;
      assert.match(
        out.updatedInput.prompt,
        new RegExp(`resuming session ${paused}`),
        'the refused spawn no longer holds the session',
      );
      await life(proj, next.start);
      assert.equal(readSession(proj.store, paused).phase, 'executing', 'the start bound at once');
      await life(proj, next.stop('Done.'));
      assert.equal(readSession(proj.store, paused).phase, 'completed');
    },
  );

  it('two parallel delegations naming one paused session: the first gets it, the other its own session', async (t) => {
    const proj = project(t);
    const env = { AGENT_SESSION_RESUME_POLICY: 'brief' };
    await delegate(proj, flow({ type: 'reviewer' }), 'session-phase: approval', { env });
    const [paused] = sessionIds(proj.store);
    const pair = [2, 3].map((n) =>
      flow({ toolUseId: `toolu_${n}`, agentId: `a${n}`, type: 'reviewer', prompt: `Part ${n} of ${paused}.` }),
    );
    const prompts = (await Promise.all(pair.map((f) => pre(proj, f.pre, env)))).map(
      (o) => o.json.hookSpecificOutput.updatedInput.prompt,
    );
    assert.equal(prompts.filter((p) => p.includes(`resuming session ${paused}`)).length, 1, prompts.join('\n---\n'));
    for (const f of pair)
      for (const e of [f.post, f.start, f.stop(`${f.pre.tool_use_id} done`)]) await life(proj, e, env);
    const sessions = sessionIds(proj.store).map((id) => readSession(proj.store, id));
    assert.equal(sessions.length, 2);
    assert.ok(
      sessions.every((s) => s.phase === 'completed' && s.claude.agent_ids.length === (s.agent_id === paused ? 2 : 1)),
      JSON.stringify(sessions.map((s) => [s.phase, s.claude.agent_ids])),
    );
  });

  it(
    'with no fresh spawn waiting, a late start binds only to a lone unbound spawn; ' +
      'with two it waits for the exact join',
    async (t) => {
      const proj = project(t);
      const one = flow({
        toolUseId: 'toolu_1',
        agentId: 'a1',
        type: 'reviewer',
        background: false,
        description: 'One',
      });
      const two = flow({
        toolUseId: 'toolu_2',
        agentId: 'a2',
        type: 'reviewer',
        background: false,
        description: 'Two',
      });
      await pre(proj, one.pre);
      await pre(proj, two.pre);
      // Both permission prompts (one turn, foreground) were answered after 11 minutes.
      const index = path.join(proj.store, '.claude-code', 'sess-1.json');
      const data = JSON.parse(readFileSync(index, 'utf8'));
      for (const id of ['toolu_1', 'toolu_2']) data.spawns[id].at = new Date(Date.now() - 11 * 60_000).toISOString();
      writeFileSync(index, JSON.stringify(data));
      // Foreground order: start, stop, PostToolUse, for one agent, then the other.
      for (const f of [one, two])
        for (const e of [f.start, f.stop(`${f.pre.tool_input.description}: done`), f.post]) await life(proj, e);
      const sessions = sessionIds(proj.store).map((id) => readSession(proj.store, id));
      assert.deepEqual(sessions.map((s) => [s.purpose, s.phase, s.summary, s.claude.agent_id]).sort(), [
        ['One', 'completed', 'One: done', 'a1'],
        ['Two', 'completed', 'Two: done', 'a2'],
      ]);
    },
  );

  it(
    'a lone spawn whose agent starts more than 10 minutes later ' +
      '(a permission prompt answered late) still binds at once',
    async (t) => {
      const proj = project(t);
      const f = flow({ type: 'reviewer', background: false });
      await pre(proj, f.pre);
      const index = path.join(proj.store, '.claude-code', 'sess-1.json');
      const data = JSON.parse(readFileSync(index, 'utf8'));
      data.spawns.toolu_1.at = new Date(Date.now() - 11 * 60_000).toISOString();
      writeFileSync(index, JSON.stringify(data));
      await life(proj, f.start);
      assert.deepEqual(
        [onlySession(proj.store).phase, onlySession(proj.store).claude.agent_id],
        ['executing', 'a1'],
        'the start waited for PostToolUse',
      );
      await life(proj, f.stop('Done.'));
      assert.equal(onlySession(proj.store).phase, 'completed');
    },
  );

  it(
    'a phase set through the CLI after a start that ' + 'had to wait is not undone when the start is applied',
    async (t) => {
      const proj = project(t);
      const one = flow({ toolUseId: 'toolu_1', agentId: 'a1', background: false });
      const two = flow({ toolUseId: 'toolu_2', agentId: 'a2', background: false });
      await pre(proj, one.pre);
      await pre(proj, two.pre);
      // Two waiting spawns of one type: both starts wait for PostToolUse.
      await life(proj, one.start);
      await life(proj, two.start);
      const id = sessionIds(proj.store)
        .map((i) => readSession(proj.store, i))
        .find((s) => s.claude.tool_use_id === 'toolu_1').agent_id;
      assert.equal((await runCli(['update', id, '--phase', 'approval', '--dir', proj.store])).code, 0);
      await life(proj, one.stop('Please approve.'));
      await life(proj, one.post);
      const s = readSession(proj.store, id);
      assert.deepEqual([s.phase, s.resume_ready, s.claude.agent_id], ['approval', true, 'a1']);
    },
  );

  it(
    'a brief from another Claude Code session never leads ' + 'a later delegation there to SendMessage the old agent',
    async (t) => {
      const proj = project(t);
      await delegate(proj, flow({ type: 'reviewer' }), 'session-phase: approval', { transcript: transcriptFile(t) });
      const id = onlySession(proj.store).agent_id;
      const named = (toolUseId) => flow({ session: 'sess-2', toolUseId, type: 'reviewer', prompt: `Continue ${id}` });
      const first = (await pre(proj, named('toolu_8').pre)).json.hookSpecificOutput;
      assert.match(first.updatedInput.prompt, new RegExp(`resuming session ${id}`));
      // That spawn never starts (refused); later, the next delegation naming the session gets a brief
      // again, not a deny to a1.
      const index = path.join(proj.store, '.claude-code', 'sess-2.json');
      const data = JSON.parse(readFileSync(index, 'utf8'));
      data.spawns.toolu_8.at = new Date(Date.now() - 11 * 60_000).toISOString();
      writeFileSync(index, JSON.stringify(data));
      const again = (await pre(proj, named('toolu_9').pre)).json.hookSpecificOutput;
      assert.equal(again.permissionDecision, undefined, again.permissionDecisionReason);
      assert.match(again.updatedInput.prompt, new RegExp(`resuming session ${id}`));
      const s = onlySession(proj.store);
      assert.deepEqual([s.claude.session_id, s.claude.agent_id, s.claude.agent_ids], ['sess-2', null, ['a1']]);
    },
  );

  it(
    'with the footer turned off, a brief carries no footer; ' +
      'a cut brief keeps whole characters and its closing line',
    async (t) => {
      const proj = project(t);
      const env = { AGENT_SESSION_PROMPT_FOOTER: '0', AGENT_SESSION_RESUME_POLICY: 'brief' };
      await delegate(
        proj,
        flow({ description: 'd'.repeat(6000) }),
        `${'\u{1F600}'.repeat(1500)}\nsession-phase: approval`,
        { env },
      );
      const s = onlySession(proj.store);
      assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(s.claude.last_message), 'no half emoji in the record');
      const out = (await pre(proj, flow({ toolUseId: 'toolu_2', agentId: 'a2', prompt: 'Go on' }).pre, env)).json
        .hookSpecificOutput;
      const prompt = out.updatedInput.prompt;
      assert.doesNotMatch(prompt, /\[agent-session\] Your session/);
      assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(prompt), 'no half emoji in the prompt');
      for (const part of [
        'Phase when it stopped: approval',
        'Its last message:',
        'Continue from there. The new instructions follow.\n\nGo on',
      ])
        assert.ok(prompt.includes(part), `brief lacks ${part}`);
    },
  );

  it('the summary drops only the status line that counted: one quoted higher up stays', async (t) => {
    const proj = project(t);
    const message =
      'The old footer said:\nsession-phase: approval\nwhich no longer applies.\n' +
      'All checks pass.\nShipped.\nsession-phase: completed';
    await delegate(proj, flow(), message);
    const s = onlySession(proj.store);
    assert.equal(s.phase, 'completed');
    assert.equal(
      s.summary,
      'The old footer said:\nsession-phase: approval\nwhich no longer applies.\nAll checks pass.\nShipped.',
    );

    // Two status lines at the end: the last one counted, the one before it is part of the text;
    // a line with an unknown phase counts as none and stays too.
    const twice = project(t);
    await delegate(
      twice,
      flow(),
      'Was: session-phase: planning\nsession-phase: investigating\nsession-phase: failed: the build broke',
    );
    assert.deepEqual(
      [onlySession(twice.store).phase, onlySession(twice.store).summary],
      ['failed', 'Was: session-phase: planning\nsession-phase: investigating'],
    );
    const unknown = project(t);
    await delegate(unknown, flow(), 'Done.\nsession-phase: shipped');
    assert.deepEqual(
      [onlySession(unknown.store).phase, onlySession(unknown.store).summary],
      ['completed', 'Done.\nsession-phase: shipped'],
    );
  });

  it('internal stops (empty agent_type) and the footer switch', async (t) => {
    const proj = project(t);
    const f = flow();
    const quiet = await pre(proj, f.pre, { AGENT_SESSION_PROMPT_FOOTER: '0' });
    assert.deepEqual([quiet.code, quiet.stdout], [0, ''], 'no footer: nothing to rewrite');
    assert.equal(onlySession(proj.store).phase, 'initializing');
    await life(proj, f.post);
    await life(proj, f.start);
    const internal = await life(proj, { ...f.stop('compacted'), agent_type: '' });
    assert.deepEqual([internal.code, internal.stdout], [0, '']);
    assert.equal(onlySession(proj.store).phase, 'executing');
  });

  it('the same PreToolUse twice (hook installed twice) gets the same answer and one session', async (t) => {
    const proj = project(t);
    const f = flow();
    const first = await pre(proj, f.pre);
    const second = await pre(proj, f.pre);
    assert.equal(second.stdout, first.stdout);
    assert.equal(sessionIds(proj.store).length, 1);
    await life(proj, f.post);
    await life(proj, f.start);
    await life(proj, f.stop('session-phase: approval', { agent_transcript_path: transcriptFile(t) }));
    const next = flow({ toolUseId: 'toolu_2', agentId: 'a2' }).pre;
    const deny = await pre(proj, next);
    assert.equal(deny.json.hookSpecificOutput.permissionDecision, 'deny');
    assert.equal((await pre(proj, next)).stdout, deny.stdout, 'a repeat is not "the second attempt"');
    assert.deepEqual(
      onlySession(proj.store)
        .history.filter((h) => h.event === 'resume_decision')
        .map((h) => h.decision),
      ['deny'],
    );
  });

  it('a lost index is rebuilt from the records: the next stop still finds its session', async (t) => {
    const proj = project(t);
    const f = flow();
    await pre(proj, f.pre);
    await life(proj, f.post);
    await life(proj, f.start);
    const { rmSync } = await import('node:fs');
    rmSync(path.join(proj.store, '.claude-code', 'sess-1.json'));
    await life(proj, f.stop('lost?'));
    assert.equal(onlySession(proj.store).phase, 'executing', 'without the index the stop cannot be placed');
    const { Sessions, rebuildClaudeIndexes } = await loadLibrary();
    assert.deepEqual(await rebuildClaudeIndexes(Sessions.open({ dir: proj.store })), ['sess-1']);
    await life(proj, f.stop('found.'));
    assert.deepEqual([onlySession(proj.store).phase, onlySession(proj.store).summary], ['completed', 'found.']);
  });

  it('hooks of one conversation running at the same time serialize on its index', async (t) => {
    const proj = project(t);
    const flows = [1, 2, 3, 4].map((i) => flow({ toolUseId: `toolu_${i}`, agentId: `a${i}`, prompt: `task ${i}` }));
    await Promise.all(flows.map((f) => pre(proj, f.pre)));
    await Promise.all(flows.map((f) => life(proj, f.post)));
    await Promise.all(flows.map((f) => life(proj, f.start)));
    await Promise.all(flows.map((f, i) => life(proj, f.stop(`done ${i + 1}`))));
    const records = sessionIds(proj.store).map((id) => readSession(proj.store, id));
    assert.equal(records.length, 4);
    for (const r of records) {
      const n = r.claude.tool_use_id.slice('toolu_'.length);
      assert.deepEqual([r.claude.agent_id, r.phase, r.summary], [`a${n}`, 'completed', `done ${n}`]);
    }
  });
});
