// What `show` and `list` say about sessions the built hooks made from real payloads: whether a paused
// session would resume now and why not, the next step, Claude Code's ids, what the agent last said;
// and every command that takes a session id (create and list --parent too) taking a Claude Code agent
// id instead (SESSION_README.md: CLI, show, list).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { flow, life, onlySession, pre, project, readSession } from './helpers/hooks.mjs';
import { cleanEnv, cli, CLI_COMMAND, cliJson, literally, loadLibrary, runNode, SUBAGENT_STOP } from './helpers/run.mjs';

const { rebuildClaudeIndexes, Sessions } = await loadLibrary();

const AGENT = 'a0123456789abcdef';
const ASKED = [
  'The schema change drops the legacy column.',
  'Line two.',
  'Line three.',
  'Line four.',
  'Line five.',
  'Line six: shall I go ahead?',
].join('\n');

/** One delegation through the built hooks, ended by `message`; returns the session's record. */
async function delegate(proj, message, options = {}) {
  const f = flow({ agentId: AGENT, type: 'reviewer', description: 'Review the schema', ...options });
  assert.equal((await pre(proj, f.pre)).code, 0);
  await life(proj, f.post);
  await life(proj, f.start);
  await life(proj, f.stop(message));
  return onlySession(proj.store);
}

const show = (proj, args, env) => cli(proj.store, ['show', ...args], { env });

describe('show and list of sessions made by the hooks', { concurrency: 3 }, () => {
  it('paused and resumable now: the last message (bounded), the ids, yes, and how to resume', async (t) => {
    const proj = project(t);
    const s = await delegate(proj, `${ASKED}\nsession-phase: approval`);
    const out = await show(proj, [s.agent_id]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /phase: +approval \(paused, resumable now\)\n/);
    assert.match(out.stdout, /resume now: +yes\n/);
    assert.match(
      out.stdout,
      new RegExp(
        `next step: +resume: in Claude Code conversation sess-1, SendMessage to ${AGENT}; ` +
          `from another conversation, delegate to reviewer naming ${s.agent_id} `,
      ),
    );
    assert.match(out.stdout, new RegExp(`claude code: +conversation sess-1, agent ${AGENT}\n`));
    // The end of the message, where the agent asks: its last 5 lines, after a note of the lines left out.
    assert.match(out.stdout, /last message:\n {4}… \(1 earlier lines\)\n {4}Line two\.\n/);
    assert.match(out.stdout, / {4}Line six: shall I go ahead\?\n/);
    assert.doesNotMatch(out.stdout, /legacy column|session-phase|resume ready/);
  });

  it('paused and expired: not resumable, the window named, how to renew it', async (t) => {
    const proj = project(t);
    const s = await delegate(proj, 'Waiting for Bob.\nsession-phase: approval');
    const env = { AGENT_SESSION_RESUME_WINDOW_MINUTES: '0' };
    const out = await show(proj, [s.agent_id], env);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /phase: +approval \(paused, expired\)\n/);
    assert.match(
      out.stdout,
      /resume now: +no \(expired\): last updated \d+ s ago, beyond the 0 s resume window of approval\n/,
    );
    assert.match(
      out.stdout,
      new RegExp(`renew its window \\(${literally(CLI_COMMAND)} update ${s.agent_id} --phase approval\\)`),
    );
    const list = await cli(proj.store, ['list'], { env });
    assert.match(list.stdout, /^ID +AGENT +PHASE +STATUS +UPDATED +PURPOSE\n/);
    assert.match(list.stdout, new RegExp(`${s.agent_id} +reviewer +approval +paused, expired +`));
  });

  it('paused with its error budget spent: not resumable, and how to end it', async (t) => {
    const proj = project(t);
    const s = await delegate(proj, 'Blocked.\nsession-phase: investigating');
    for (let i = 0; i < 3; i++) {
      const update = await cli(proj.store, ['update', AGENT, '--error', `failure ${i}`]);
      assert.equal(update.code, 0, update.stderr);
    }
    const out = await show(proj, [AGENT]);
    assert.match(out.stdout, /phase: +investigating \(paused, error budget spent\)\n/);
    assert.match(out.stdout, /resume now: +no \(too_many_errors\): 3 errors reach the budget of 3\n/);
    assert.match(out.stdout, new RegExp(`end it with ${literally(CLI_COMMAND)} finalize ${s.agent_id} failed`));
    const list = await cli(proj.store, ['list']);
    assert.match(list.stdout, new RegExp(`${s.agent_id} +reviewer +investigating +paused, error budget spent +`));
  });

  it('completed: nothing to do, the summary, no pause label', async (t) => {
    const proj = project(t);
    const s = await delegate(proj, 'All done: the schema is fine.');
    const out = await show(proj, [AGENT]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, new RegExp(`^Session ${s.agent_id}\n`));
    assert.match(out.stdout, /phase: +completed\n/);
    assert.match(out.stdout, /resume now: +no \(finalized\): the session is final \(completed\)\n/);
    assert.match(out.stdout, /next step: +nothing to do: completed\n/);
    const list = await cli(proj.store, ['list']);
    assert.match(list.stdout, new RegExp(`${s.agent_id} +reviewer +completed +final +`));
  });

  it('list: a label per session, --paused both kinds, --json the Claude Code fields and the reason', async (t) => {
    const proj = project(t);
    const sessions = [];
    const runs = [
      ['sess-1', 'toolu_1', 'a1', 'Waiting.\nsession-phase: approval'],
      ['sess-2', 'toolu_2', 'a2', 'Done.'],
      ['sess-3', 'toolu_3', 'a3', 'Still digging.\nsession-phase: investigating'],
    ];
    for (const [session, toolUseId, agentId, message] of runs) {
      const f = flow({ session, toolUseId, agentId, type: 'reviewer' });
      await pre(proj, f.pre);
      await life(proj, f.post);
      await life(proj, f.start);
      await life(proj, f.stop(message));
      sessions.push(readFileSync(path.join(proj.store, '.claude-code', 'agents', agentId), 'utf8').trim());
    }
    const [approval, done, investigating] = sessions.map((id) => readSession(proj.store, id));
    // Budget spent for one of the two paused: --paused still lists it.
    for (let i = 0; i < 3; i++) await cli(proj.store, ['update', 'a3', '--error', 'boom']);
    const paused = await cliJson(proj.store, ['list', '--paused']);
    // Ids made in the same second differ only in their random part: compared sorted on both sides.
    assert.deepEqual(
      paused.sessions.map((s) => [s.agent_id, s.status]).sort(),
      [
        [approval.agent_id, 'paused, resumable now'],
        [investigating.agent_id, 'paused, error budget spent'],
      ].sort(),
    );
    const text = await cli(proj.store, ['list', '--paused']);
    assert.doesNotMatch(text.stdout, new RegExp(done.agent_id));
    const all = await cliJson(proj.store, ['list']);
    const byId = Object.fromEntries(all.sessions.map((s) => [s.agent_id, s]));
    assert.deepEqual(byId[approval.agent_id].claude, {
      session_id: 'sess-1',
      agent_id: 'a1',
      agent_ids: ['a1'],
      agent_type: 'reviewer',
    });
    assert.deepEqual(byId[approval.agent_id].resume, {
      resume: true,
      reason: 'resumable',
      detail: 'paused in approval, within the resume window',
    });
    assert.equal(byId[investigating.agent_id].resume.reason, 'too_many_errors');
    assert.equal(byId[done.agent_id].status, 'final');
    assert.equal(byId[done.agent_id].resume.reason, 'finalized');
    assert.equal(byId[done.agent_id].claude.session_id, 'sess-2');
  });
});

describe('a Claude Code agent id wherever a session id goes', { concurrency: 3 }, () => {
  it('get, show, should-resume, children, tree, audit, export, update, finalize, delete, restore', async (t) => {
    const proj = project(t);
    const s = await delegate(proj, 'Waiting.\nsession-phase: approval');
    assert.equal(readFileSync(path.join(proj.store, '.claude-code', 'agents', AGENT), 'utf8'), `${s.agent_id}\n`);
    assert.equal((await cliJson(proj.store, ['get', AGENT])).agent_id, s.agent_id);
    assert.match((await show(proj, [AGENT])).stdout, new RegExp(`^Session ${s.agent_id}\n`));
    const resume = await cli(proj.store, ['should-resume', AGENT]);
    assert.equal(resume.code, 0, resume.stderr);
    assert.match(resume.stdout, new RegExp(`^Session ${s.agent_id} should resume`));
    assert.deepEqual(await cliJson(proj.store, ['children', AGENT]), { parent: s.agent_id, children: [] });
    assert.equal((await cliJson(proj.store, ['tree', AGENT])).root, s.agent_id);
    const audit = await cliJson(proj.store, ['audit', '--session', AGENT]);
    assert.ok(audit.entries.length > 0 && audit.entries.every((e) => e.ids.includes(s.agent_id)));
    // A bundle is JSON Lines: a header, one line per session, the audit lines, the roots, the checksum.
    const exported = await cli(proj.store, ['export', AGENT]);
    assert.equal(exported.code, 0, exported.stderr);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.filter((l) => l.session).map((l) => l.session.agent_id),
      [s.agent_id],
    );
    await cliJson(proj.store, ['update', AGENT, '--metadata', '{"ticket":"T-1"}']);
    assert.deepEqual(readSession(proj.store, s.agent_id).metadata, { ticket: 'T-1' });
    assert.equal((await cliJson(proj.store, ['finalize', AGENT, 'completed'])).phase, 'completed');
    assert.equal((await cliJson(proj.store, ['delete', AGENT])).total, 1);
    assert.equal(existsSync(path.join(proj.store, s.agent_id)), false);
    const restored = await cliJson(proj.store, ['restore', AGENT]);
    assert.deepEqual(
      restored.restored.map((r) => r.id),
      [s.agent_id],
    );
    const child = await cliJson(proj.store, ['create', '--agent', 'helper', '--parent', AGENT]);
    assert.equal(child.parent_session_id, s.agent_id);
    const kids = await cliJson(proj.store, ['list', '--parent', AGENT]);
    assert.deepEqual(
      kids.sessions.map((k) => k.agent_id),
      [child.agent_id],
    );
  });

  it('an unknown agent id is the same not-found as an unknown session id; hostile ids are refused', async (t) => {
    const proj = project(t);
    await delegate(proj, 'Waiting.\nsession-phase: approval');
    const unknown = 'agent-20260101-000000-00000000';
    for (const [name, ...rest] of [['get'], ['show'], ['should-resume'], ['update', '--phase', 'planning'], ['tree']]) {
      const byAgent = await cli(proj.store, [name, 'a-unknown-agent', ...rest]);
      const bySession = await cli(proj.store, [name, unknown, ...rest]);
      assert.equal(byAgent.code, 1, `${name}: ${byAgent.stderr}`);
      assert.deepEqual(
        [byAgent.code, byAgent.stdout, byAgent.stderr],
        [
          bySession.code,
          bySession.stdout.replaceAll(unknown, 'a-unknown-agent'),
          bySession.stderr.replaceAll(unknown, 'a-unknown-agent'),
        ],
        name,
      );
      assert.match(byAgent.stdout + byAgent.stderr, /a-unknown-agent/);
    }
    for (const hostile of ['../etc', '.hidden', 'a/b']) {
      const out = await cli(proj.store, ['get', hostile]);
      assert.equal(out.code, 2, `${hostile}: ${out.stderr}`);
      assert.match(out.stderr, /invalid session id/);
    }
  });

  it('the agent files are rebuilt from the records', async (t) => {
    const proj = project(t);
    const s = await delegate(proj, 'Waiting.\nsession-phase: approval');
    rmSync(path.join(proj.store, '.claude-code'), { recursive: true });
    assert.equal((await cli(proj.store, ['get', AGENT])).code, 1);
    const sessions = Sessions.open({ dir: proj.store, cwd: proj.dir, env: {} });
    await rebuildClaudeIndexes(sessions);
    assert.equal((await cliJson(proj.store, ['get', AGENT])).agent_id, s.agent_id);
  });

  it('the sweep removes old agent files of sessions that are gone, and keeps those of live sessions', async (t) => {
    const proj = project(t);
    const gone = await delegate(proj, 'Done.');
    const f = flow({ session: 'sess-2', toolUseId: 'toolu_2', agentId: 'a-live', type: 'reviewer' });
    await pre(proj, f.pre);
    await life(proj, f.post);
    await life(proj, f.start);
    assert.equal((await cli(proj.store, ['delete', gone.agent_id, '--no-backup'])).code, 0);
    const agents = path.join(proj.store, '.claude-code', 'agents');
    const old = new Date(Date.now() - 10 * 24 * 3_600_000);
    for (const id of [AGENT, 'a-live']) utimesSync(path.join(agents, id), old, old);
    const sweep = await runNode(SUBAGENT_STOP, ['--sweep'], {
      cwd: proj.dir,
      env: cleanEnv({ CLAUDE_PROJECT_DIR: proj.dir }),
    });
    assert.equal(sweep.code, 0, sweep.stderr);
    assert.deepEqual(readdirSync(agents), ['a-live']);
    const report = JSON.parse(readFileSync(path.join(proj.store, '.claude-code', 'last-sweep.json'), 'utf8'));
    assert.deepEqual(report.pruned_agents, [AGENT]);
  });
});
