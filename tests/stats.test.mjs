// `stats` and computeStats (SESSION_README.md, "stats") on stores built with known answers: records made by
// the same transitions the hooks apply (a resume by SendMessage, one by the brief, pauses, expiries) and by
// the CLI's, agents' transcripts in the format Claude Code writes them (tests/fixtures/transcripts/), the
// token cache read incrementally, period filters, groupings, and bad input through the built CLI.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { fixture, flow, life, pre, readSession, sessionIds } from './helpers/hooks.mjs';
import { cleanEnv, DIST, FIXTURES, loadLibrary, runNode, CLI, tempDir } from './helpers/run.mjs';

const { Sessions, computeStats, deleteSession, listTrash, sessionTokenSums } = await loadLibrary();
const lib = (file) => import(pathToFileURL(path.join(DIST, 'tools', file)).href);
const { newRecord, applyUpdate, applyFinalize } = await lib('policy/lifecycle.js');
const { claudeForDelegation, recordStart, recordStop, recordDecision, attachSpawn } =
  await lib('policy/claude-transitions.js');
const { serializeRecord } = await lib('record.js');

const M = 60_000;
const T = Date.parse('2026-11-19T10:00:00.000Z');
const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const CONV = '6c6f96d1-5e78-48f5-9a03-b4acf0bab64e';
const REAL = path.join(FIXTURES, 'transcripts', 'subagent-2.1.330.jsonl');
const REAL_SUMS = { input: 15, output: 41, cache_read: 1400, cache_write: 250 };

/** A transcript line as Claude Code writes it: one per content block, each with the message's id and usage. */
function assistantLine(id, [input, output, read, write], text = 'x') {
  const usage = { input_tokens: input, output_tokens: output, cache_read_input_tokens: read };
  usage.cache_creation_input_tokens = write;
  const message = { id, type: 'message', role: 'assistant', content: [{ type: 'text', text }], usage };
  return `${JSON.stringify({ type: 'assistant', isSidechain: true, message })}\n`;
}
const userLine = (text) => `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`;

function writeRecord(store, record) {
  mkdirSync(path.join(store, record.agent_id), { recursive: true });
  writeFileSync(path.join(store, record.agent_id, 'state.json'), serializeRecord(record));
}

/** The store of the known answers (the expected figures are worked out next to each test). */
function knownStore(t) {
  const root = tempDir(t, 'agent-session-stats-');
  const store = path.join(root, 'store');
  const projects = path.join(root, 'projects', '-home-dev-project');
  const subagents = path.join(projects, CONV, 'subagents');
  mkdirSync(subagents, { recursive: true });
  const transcript = (agent) => path.join(subagents, `agent-${agent}.jsonl`);
  const request = (toolUseId, agentType) => ({
    claudeSession: CONV,
    transcriptPath: path.join(projects, `${CONV}.jsonl`),
    cwd: '/home/dev/project',
    toolUseId,
    agentType,
    description: 'd',
    prompt: 'p',
    caller: null,
  });
  const created = (id, agentName, at, parent = null, claude) => {
    const r = newRecord({ id, agentName, purpose: 'p', parent }, at);
    if (claude) r.claude = claude;
    return r;
  };
  const stop = (r, agentId, message, at, withPath = true) =>
    recordStop(r, { agentId, message, agentTranscriptPath: withPath ? transcript(agentId) : null }, at).record;

  // S1 planner: paused for approval, continued by the same agent (SendMessage), completed. Real transcript.
  let s1 = created('s1-planner', 'planner', T, null, claudeForDelegation(request('toolu_1', 'planner')));
  s1 = recordStart(s1, 'aaa1', T + 1 * M).record;
  s1 = stop(s1, 'aaa1', 'Shall I?\nsession-phase: approval', T + 11 * M);
  s1 = recordStart(s1, 'aaa1', T + 41 * M).record;
  s1 = stop(s1, 'aaa1', 'Done.', T + 51 * M);
  copyFileSync(REAL, transcript('aaa1'));

  // S2 planner: paused, then a new agent given the brief; failed. Two transcripts, only the latest path kept.
  let s2 = created('s2-planner', 'planner', T + 2 * M, null, claudeForDelegation(request('toolu_2', 'planner')));
  s2 = recordStart(s2, 'bbb1', T + 3 * M).record;
  s2 = stop(s2, 'bbb1', 'Which?\nsession-phase: approval', T + 5 * M);
  const decision = { policy: 'brief', decision: 'brief', reason: 'r', tool_use_id: 'toolu_3' };
  s2 = recordDecision(s2, { ...decision, claude_session_id: CONV, transcript_offset: null }, T + 20 * M);
  s2 = attachSpawn(s2, request('toolu_3', 'planner'));
  s2 = recordStart(s2, 'bbb2', T + 21 * M).record;
  s2 = stop(s2, 'bbb2', 'It broke.\nsession-phase: failed', T + 31 * M);
  writeFileSync(transcript('bbb1'), assistantLine('m1', [1000, 100, 10, 1]) + assistantLine('m1', [1000, 100, 10, 1]));
  writeFileSync(transcript('bbb2'), assistantLine('m2', [2000, 200, 20, 2]) + assistantLine('m3', [3000, 300, 30, 3]));

  // S3 coder, child of S1: completed. A transcript with a message of three blocks, a user line naming "usage"
  // and a line that is not JSON.
  let s3 = created('s3-coder', 'coder', T + 4 * M, 's1-planner', claudeForDelegation(request('toolu_4', 'coder')));
  s3 = recordStart(s3, 'ccc1', T + 5 * M).record;
  s3 = stop(s3, 'ccc1', 'Built.', T + 9 * M);
  writeFileSync(
    transcript('ccc1'),
    userLine('"usage" "assistant"') +
      assistantLine('c1', [100, 10, 0, 5], 'a') +
      assistantLine('c1', [100, 10, 0, 5], 'b') +
      '{"type":"assistant","usage" not json\n' +
      assistantLine('c1', [100, 10, 0, 5], 'c') +
      assistantLine('c2', [1, 2, 3, 4]),
  );

  // S4 reviewer, created the day before: paused for approval long ago (expired); its transcript is gone.
  const day4 = Date.parse('2026-11-18T09:00:00.000Z');
  let s4 = created('s4-reviewer', 'reviewer', day4, null, claudeForDelegation(request('toolu_5', 'reviewer')));
  s4 = recordStart(s4, 'ddd1', day4 + 1 * M).record;
  s4 = stop(s4, 'ddd1', 'OK?\nsession-phase: approval', day4 + 2 * M);

  // S5 reviewer: paused for planning ten minutes ago (within the window); no transcript path recorded.
  let s5 = created('s5-reviewer', 'reviewer', NOW - 20 * M, null, claudeForDelegation(request('toolu_6', 'reviewer')));
  s5 = recordStart(s5, 'eee1', NOW - 19 * M).record;
  s5 = stop(s5, 'eee1', 'Plan?\nsession-phase: planning', NOW - 10 * M, false);

  // S6 planner through the CLI: waited for approval three hours, then abandoned (its pause expired).
  let s6 = created('s6-planner', 'planner', T + 60 * M);
  s6 = applyUpdate(s6, { phase: 'approval' }, T + 70 * M);
  s6 = applyFinalize(s6, 'abandoned', null, T + 250 * M).record;

  // S7 coder through the CLI: planning, resumed without an agent, two errors, still running.
  let s7 = created('s7-coder', 'coder', T + 100 * M);
  s7 = applyUpdate(s7, { phase: 'planning' }, T + 110 * M);
  s7 = applyUpdate(s7, { phase: 'executing' }, T + 130 * M);
  s7 = applyUpdate(s7, { error: 'one' }, T + 131 * M);
  s7 = applyUpdate(s7, { error: 'two' }, T + 132 * M);

  // S8 planner, a month earlier: completed in ten minutes.
  const day8 = Date.parse('2026-10-01T00:00:00.000Z');
  const s8 = applyFinalize(created('s8-planner', 'planner', day8), 'completed', null, day8 + 10 * M).record;

  for (const r of [s1, s2, s3, s4, s5, s6, s7, s8]) writeRecord(store, r);
  const sessions = Sessions.open({ dir: store, settings: { resumeWindowMinutes: 60 }, now: () => NOW });
  return { root, store, sessions, transcript };
}

const tokens = (input, output, cache_read, cache_write) => ({ input, output, cache_read, cache_write });
const spread = (median, p90) => ({ median: median * M, p90: p90 * M });
const group = (report, key) => report.groups.find((g) => g.key === key);

describe('stats on a store of known answers', { concurrency: 1 }, () => {
  it('every figure, by agent, over all time', async (t) => {
    const { sessions } = knownStore(t);
    const report = await computeStats(sessions);
    assert.equal(report.version, 1);
    assert.deepEqual(report.period, { since: null, until: '2026-11-20T12:00:00.000Z' });
    assert.equal(report.by, 'agent');
    const all = report.totals;
    assert.deepEqual(all.sessions, { started: 8, running: 1, paused: 2, completed: 3, failed: 1, abandoned: 1 });
    assert.deepEqual(all.rates, { success: 0.6, failure: 0.2, abandonment: 0.2 });
    // Paused ever: S1, S2, S4, S5, S6, S7; resumed: S1 (same agent), S2 (new agent), S7 (CLI); expired: S4, S6.
    assert.deepEqual(all.resumes, {
      paused: 6,
      resumed: 3,
      same_agent: 1,
      new_agent: 1,
      other: 1,
      expired: 2,
      rate: 0.5,
    });
    // To finish: 5, 10, 29, 51, 190 minutes. A phase still going on (S4's approval, S7's executing) is not counted.
    assert.deepEqual(all.durations_ms.to_finish, spread(29, 190));
    assert.deepEqual(all.durations_ms.phases, {
      initializing: spread(1, 10),
      planning: spread(20, 20),
      approval: spread(30, 180),
      executing: spread(9, 20),
    });
    assert.deepEqual(all.tokens, tokens(6116, 653, 1463, 265));
    assert.deepEqual(all.tokens_with_children, tokens(6116, 653, 1463, 265));
    assert.equal(all.errors, 2);
    assert.equal(all.sessions_with_errors, 1);
    assert.deepEqual(report.transcripts, { read: 4, missing: 2, bytes_read: report.transcripts.bytes_read });
    assert.deepEqual(report.trash, { entries: 0, bytes: 0, sessions: 0 });

    assert.deepEqual(
      report.groups.map((g) => [g.key, g.sessions.started]),
      [
        ['planner', 4],
        ['coder', 2],
        ['reviewer', 2],
      ],
    );
    // The planners' own tokens (S1: the real transcript, S2: both its agents); with children S3's too.
    const planner = group(report, 'planner');
    assert.deepEqual(planner.tokens, tokens(6015, 641, 1460, 256));
    assert.deepEqual(planner.tokens_with_children, tokens(6116, 653, 1463, 265));
    assert.deepEqual(group(report, 'coder').tokens, tokens(101, 12, 3, 9));
    assert.deepEqual(group(report, 'reviewer').resumes.expired, 1);
    assert.deepEqual(planner.rates, { success: 2 / 4, failure: 1 / 4, abandonment: 1 / 4 });
    assert.deepEqual(group(report, 'reviewer').rates, { success: null, failure: null, abandonment: null });

    // One session's own tokens (the dashboard's detail) through the same cache, which keeps every other entry.
    assert.deepEqual(await sessionTokenSums(sessions, 's1-planner'), REAL_SUMS);
    assert.equal(await sessionTokenSums(sessions, 's8-planner'), null, 'no transcript');
    assert.equal(await sessionTokenSums(sessions, 'no-such-session'), null);
    assert.equal((await computeStats(sessions)).transcripts.bytes_read, 0, 'the cache still holds every transcript');
  });

  it('the real transcript counts each message once', async (t) => {
    const { sessions } = knownStore(t);
    const report = await computeStats(sessions, { until: new Date(T) });
    // Only S1 (created at T) and the two earlier ones; S1's own tokens are the captured transcript's.
    assert.deepEqual(report.totals.tokens, REAL_SUMS);
  });

  it('period filters: since a day, until a time, and children started after the period roll up', async (t) => {
    const { sessions } = knownStore(t);
    const since = await computeStats(sessions, { since: new Date('2026-11-19T00:00:00Z'), by: 'day' });
    assert.equal(since.period.since, '2026-11-19T00:00:00.000Z');
    assert.deepEqual(
      since.groups.map((g) => [g.key, g.sessions.started]),
      [
        ['2026-11-19', 5],
        ['2026-11-20', 1],
      ],
    );
    assert.equal(since.totals.sessions.started, 6);
    const until = await computeStats(sessions, { until: new Date(T + 3 * M) });
    assert.deepEqual(
      until.groups.map((g) => g.key),
      ['planner', 'reviewer'],
    );
    // S1 and S2 in the period; S3, S1's child, started after it: in the roll-up only.
    assert.deepEqual(until.totals.tokens, tokens(6015, 641, 1460, 256));
    assert.deepEqual(until.totals.tokens_with_children, tokens(6116, 653, 1463, 265));
    await assert.rejects(computeStats(sessions, { since: new Date(NOW), until: new Date(T) }), { code: 'EINVALID' });
    await assert.rejects(computeStats(sessions, { since: new Date('nope') }), { code: 'EINVALID' });
    await assert.rejects(computeStats(sessions, { by: 'week' }), { code: 'EINVALID' });
  });

  it('by outcome and by day', async (t) => {
    const { sessions } = knownStore(t);
    const outcome = await computeStats(sessions, { by: 'outcome' });
    assert.deepEqual(
      outcome.groups.map((g) => [g.key, g.sessions.started]),
      [
        ['completed', 3],
        ['failed', 1],
        ['abandoned', 1],
        ['running', 1],
        ['paused', 2],
      ],
    );
    assert.equal(group(outcome, 'paused').resumes.expired, 1);
    // S1 (completed) was continued by its own agent, S2 (failed) by a new one given the brief.
    assert.deepEqual(
      ['completed', 'failed', 'running'].map((key) => {
        const { same_agent, new_agent, other } = group(outcome, key).resumes;
        return [key, same_agent, new_agent, other];
      }),
      [
        ['completed', 1, 0, 0],
        ['failed', 0, 1, 0],
        ['running', 0, 0, 1],
      ],
    );
    assert.deepEqual(group(outcome, 'completed').durations_ms.to_finish, spread(10, 51));
    const day = await computeStats(sessions, { by: 'day' });
    assert.deepEqual(
      day.groups.map((g) => [g.key, g.sessions.started]),
      [
        ['2026-10-01', 1],
        ['2026-11-18', 1],
        ['2026-11-19', 5],
        ['2026-11-20', 1],
      ],
    );
  });
});

describe('the trash', () => {
  it('its entries, bytes and sessions; a deleted session is in no other figure', async (t) => {
    const { sessions } = knownStore(t);
    await deleteSession(sessions, 's1-planner');
    const report = await computeStats(sessions);
    const listing = await listTrash(sessions);
    assert.equal(listing.entries.length, 1);
    assert.ok(listing.entries[0].bytes > 0);
    assert.deepEqual(report.trash, { entries: 1, bytes: listing.entries[0].bytes, sessions: 2 });
    // S1 and its child S3 went to the trash with their tokens.
    assert.equal(report.totals.sessions.started, 6);
    assert.deepEqual(report.totals.tokens, tokens(6000, 600, 60, 6));
  });
});

describe('stats of sessions the built hooks recorded', () => {
  it('a resume through SendMessage and one through the brief, and the tokens of every agent', async (t) => {
    const root = tempDir(t, 'agent-session-stats-hooks-');
    mkdirSync(path.join(root, '.claude'));
    const proj = { dir: root, store: path.join(root, '.claude', 'session') };
    const transcriptOf = (conversation, agent) => {
      const dir = path.join(root, 'projects', conversation, 'subagents');
      mkdirSync(dir, { recursive: true });
      return path.join(dir, `agent-${agent}.jsonl`);
    };
    const run = async (hook, payload, env) => assert.equal((await hook(proj, payload, env)).code, 0);

    // A reviewer paused for approval, continued by SendMessage (the default policy denies the second spawn).
    const sendMessagePath = async () => {
      const a1 = transcriptOf('sess-1', 'a1');
      copyFileSync(REAL, a1);
      const first = flow({ session: 'sess-1', toolUseId: 'toolu_1', agentId: 'a1', type: 'reviewer' });
      for (const payload of [first.pre, first.post, first.start])
        await run(payload === first.pre ? pre : life, payload);
      await run(life, first.stop('Plan ready.\nsession-phase: approval', { agent_transcript_path: a1 }));
      const second = flow({ session: 'sess-1', toolUseId: 'toolu_2', agentId: 'a2', type: 'reviewer' });
      const denied = await pre(proj, second.pre);
      assert.equal(denied.json.hookSpecificOutput.permissionDecision, 'deny');
      await run(pre, fixture('pretooluse-sendmessage', { session_id: 'sess-1' }));
      await run(life, fixture('subagentstart-continued', { session_id: 'sess-1', agent_id: 'a1' }));
      const stop = { session_id: 'sess-1', agent_id: 'a1', last_assistant_message: 'Done.', agent_transcript_path: a1 };
      await run(life, fixture('subagentstop-continued', stop));
    };
    // A planner paused for approval, resumed by a new agent given the brief; only b2's path is kept.
    const briefPath = async () => {
      const env = { AGENT_SESSION_RESUME_POLICY: 'brief' };
      writeFileSync(transcriptOf('sess-2', 'b1'), assistantLine('m1', [1000, 100, 10, 1]));
      writeFileSync(transcriptOf('sess-2', 'b2'), assistantLine('m2', [2000, 200, 20, 2]));
      for (const [agentId, toolUseId, message] of [
        ['b1', 'toolu_b1', 'Which one?\nsession-phase: approval'],
        ['b2', 'toolu_b2', 'Done.'],
      ]) {
        const f = flow({ session: 'sess-2', toolUseId, agentId, type: 'planner' });
        await run(pre, f.pre, env);
        await run(life, f.post, env);
        await run(life, f.start, env);
        await run(life, f.stop(message, { agent_transcript_path: transcriptOf('sess-2', agentId) }), env);
      }
    };
    // A tester delegated in one conversation (a5) and resumed through the brief from another (a6): the record
    // names only the second conversation, a5's transcript is found beside it in the project's directory.
    const otherConversation = async () => {
      let prompt = 'Test it';
      for (const [conversation, agentId, message, usage] of [
        ['c0ffee01', 'a5', 'Which one?\nsession-phase: approval', [4000, 400, 40, 4]],
        ['beef0002', 'a6', 'Done.', [5000, 500, 50, 5]],
      ]) {
        const transcript = transcriptOf(conversation, agentId);
        writeFileSync(transcript, assistantLine(`m-${agentId}`, usage));
        const f = flow({ session: conversation, toolUseId: `toolu_${agentId}`, agentId, type: 'tester', prompt });
        await run(pre, { ...f.pre, transcript_path: path.join(root, 'projects', `${conversation}.jsonl`) });
        await run(life, f.post);
        await run(life, f.start);
        await run(life, f.stop(message, { agent_transcript_path: transcript }));
        // From another conversation, a delegation resumes the session its prompt names.
        const id = sessionIds(proj.store).find((s) => readSession(proj.store, s).agent_name === 'tester');
        prompt = `Continue ${id}`;
      }
    };
    await Promise.all([sendMessagePath(), briefPath(), otherConversation()]);

    const report = await computeStats(Sessions.open({ dir: proj.store }));
    const resumes = (key) => {
      const { paused, resumed, same_agent, new_agent, other } = group(report, key).resumes;
      return { paused, resumed, same_agent, new_agent, other };
    };
    assert.deepEqual(resumes('reviewer'), { paused: 1, resumed: 1, same_agent: 1, new_agent: 0, other: 0 });
    assert.deepEqual(resumes('planner'), { paused: 1, resumed: 1, same_agent: 0, new_agent: 1, other: 0 });
    assert.deepEqual(report.totals.sessions, {
      started: 3,
      running: 0,
      paused: 0,
      completed: 3,
      failed: 0,
      abandoned: 0,
    });
    assert.deepEqual(group(report, 'reviewer').tokens, REAL_SUMS);
    assert.deepEqual(group(report, 'planner').tokens, tokens(3000, 300, 30, 3));
    assert.deepEqual(resumes('tester'), { paused: 1, resumed: 1, same_agent: 0, new_agent: 1, other: 0 });
    assert.deepEqual(group(report, 'tester').tokens, tokens(9000, 900, 90, 9));
    assert.deepEqual(report.transcripts, { read: 5, missing: 0, bytes_read: report.transcripts.bytes_read });
    // The path found is remembered: the next run reads nothing and searches no more.
    const cache = JSON.parse(readFileSync(path.join(proj.store, '.cache', 'transcripts.json'), 'utf8'));
    assert.deepEqual(cache.found, { a5: transcriptOf('c0ffee01', 'a5') });
    const again = await computeStats(Sessions.open({ dir: proj.store }));
    assert.deepEqual(group(again, 'tester').tokens, tokens(9000, 900, 90, 9));
    assert.deepEqual(again.transcripts, { read: 5, missing: 0, bytes_read: 0 });
  });
});

describe('the token cache', { concurrency: 1 }, () => {
  const cacheFile = (store) => path.join(store, '.cache', 'transcripts.json');

  it('a second run reads only what was appended; a rewritten or shorter file is read again', async (t) => {
    const { sessions, store, transcript } = knownStore(t);
    const file = transcript('ccc1');
    const first = await computeStats(sessions);
    assert.ok(first.transcripts.bytes_read > 0);
    assert.ok(existsSync(cacheFile(store)));
    const mtime = statSync(cacheFile(store)).mtimeMs;
    const second = await computeStats(sessions);
    assert.equal(second.transcripts.bytes_read, 0);
    assert.deepEqual(second.totals, first.totals);
    assert.equal(statSync(cacheFile(store)).mtimeMs, mtime, 'an unchanged cache is not rewritten');

    // An earlier message's figure changed in place (a full read would count 900) and a message appended:
    // only the appended bytes are read, so the earlier figure stays as first read.
    const text = readFileSync(file, 'utf8');
    const changed = text.replace('"input_tokens":100,', '"input_tokens":900,');
    assert.notEqual(changed, text);
    const appended = assistantLine('c3', [1000, 0, 0, 0]);
    writeFileSync(file, changed + appended);
    const third = await computeStats(sessions);
    assert.equal(third.transcripts.bytes_read, Buffer.byteLength(appended));
    assert.deepEqual(group(third, 'coder').tokens, tokens(1101, 12, 3, 9));

    // Rewritten shorter: read from the start.
    writeFileSync(file, assistantLine('d1', [7, 7, 7, 7]));
    const fourth = await computeStats(sessions);
    assert.deepEqual(group(fourth, 'coder').tokens, tokens(7, 7, 7, 7));
  });

  it('a corrupt cache is ignored and rebuilt; a cache area that is a link is not written through', async (t) => {
    const { sessions, store, root } = knownStore(t);
    const expected = (await computeStats(sessions)).totals;
    writeFileSync(cacheFile(store), '{"version":1,"transcripts":{"x":{"size":');
    const rebuilt = await computeStats(sessions);
    assert.deepEqual(rebuilt.totals, expected);
    assert.ok(rebuilt.transcripts.bytes_read > 0);
    assert.equal(JSON.parse(readFileSync(cacheFile(store), 'utf8')).version, 1);

    const elsewhere = path.join(root, 'elsewhere');
    mkdirSync(elsewhere);
    spawnSync('rm', ['-rf', path.join(store, '.cache')]);
    symlinkSync(elsewhere, path.join(store, '.cache'));
    assert.deepEqual((await computeStats(sessions)).totals, expected);
    assert.equal(existsSync(path.join(elsewhere, 'transcripts.json')), false);
  });

  it('a transcript path naming a FIFO or a directory is not read, and does not block', async (t) => {
    const { sessions, store, transcript } = knownStore(t);
    const fifo = transcript('fff1');
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const r = newRecord({ id: 's9-fifo', agentName: 'tester', purpose: null }, T);
    r.claude = { agent_ids: ['fff1', '../../etc'], agent_transcript_path: fifo, session_id: CONV };
    writeRecord(store, r);
    const report = await computeStats(sessions, { by: 'agent' });
    assert.deepEqual(group(report, 'tester').tokens, tokens(0, 0, 0, 0));
    assert.equal(report.transcripts.missing, 3);
  });
  it('a transcript over 256 MiB is not read; a line that never ends is read past once; sums stay safe', async (t) => {
    const { sessions, store, transcript } = knownStore(t);
    const withTranscript = (id, agent) => {
      const r = newRecord({ id, agentName: 'tester', purpose: null }, T);
      r.claude = { agent_ids: [agent], agent_transcript_path: transcript(agent), session_id: CONV };
      writeRecord(store, r);
      return transcript(agent);
    };
    // A sparse file of 257 MiB: not read at all (its size says it is no transcript).
    const huge = withTranscript('s9-huge', 'hhh1');
    writeFileSync(huge, assistantLine('h1', [5, 5, 5, 5]));
    truncateSync(huge, 257 * 1024 * 1024);
    // 33 MiB with no line end, then an assistant line appended: the long line is passed over once, for good.
    const endless = withTranscript('s9-endless', 'eee1');
    writeFileSync(endless, 'x'.repeat(33 * 1024 * 1024));
    // Figures past 2^53 are held at the largest safe integer, and the cache still serves the file.
    const big = withTranscript('s9-big', 'bbb9');
    writeFileSync(big, assistantLine('b1', [2 ** 53 - 10, 0, 0, 0]) + assistantLine('b2', [2 ** 53 - 10, 0, 0, 0]));

    const first = await computeStats(sessions);
    assert.deepEqual(group(first, 'tester').tokens, tokens(Number.MAX_SAFE_INTEGER, 0, 0, 0));
    appendFileSync(endless, `\n${assistantLine('e1', [1, 2, 3, 4])}`);
    const second = await computeStats(sessions);
    assert.ok(second.transcripts.bytes_read < 1024, `read again: ${second.transcripts.bytes_read} bytes`);
    assert.deepEqual(group(second, 'tester').tokens, tokens(Number.MAX_SAFE_INTEGER, 2, 3, 4));
    assert.equal(second.transcripts.missing, first.transcripts.missing, 'the huge one counts as not found');
  });
});

describe('stats through the CLI', { concurrency: 1 }, () => {
  it('text and JSON of one store; bad input is a usage error (2), a missing store 1', async (t) => {
    const { store, root } = knownStore(t);
    // A day before the others: a session through every phase, each taking nearly a day (the widest figures).
    const day = Date.parse('2026-11-17T00:00:00.000Z');
    let wide = newRecord({ id: 's10-wide', agentName: 'general-purpose', purpose: 'p' }, day);
    const phases = ['investigating', 'planning', 'approval', 'executing', 'validating'];
    phases.forEach((phase, i) => (wide = applyUpdate(wide, { phase }, day + (i + 1) * (1439 * M + 59_000))));
    wide = applyFinalize(wide, 'completed', null, day + 6 * (1439 * M + 59_000)).record;
    writeRecord(store, wide);
    const run = (args) => runNode(CLI, [...args, '--dir', store], { cwd: root, env: cleanEnv() });
    const period = ['--since', '2026-11-19', '--until', '2026-11-19T23:59:59Z'];
    const json = await run(['stats', ...period, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.version, 1);
    assert.equal(report.totals.sessions.started, 5);
    assert.deepEqual(report.totals.tokens, tokens(6116, 653, 1463, 265));

    const text = await run(['stats', ...period, '--by', 'outcome']);
    assert.equal(text.code, 0, text.stderr);
    const lines = text.stdout.split('\n');
    assert.match(lines[0], /^Sessions started from 2026-11-19T00:00:00.000Z to 2026-11-19T23:59:59.000Z, by outcome$/);
    const header = /^OUTCOME +STARTED +RUNNING +PAUSED +COMPLETED +FAILED +ABANDONED +SUCCESS +FAILURE +ABANDONMENT/m;
    assert.match(text.stdout, header);
    assert.match(text.stdout, /^completed +2 +0 +0 +2 +0 +0 +100% +0% +0% +0$/m);
    assert.match(text.stdout, /^TOTAL +5 +1 +0 +2 +1 +1 +50% +25% +25% +2$/m);
    assert.match(text.stdout, /^TOTAL +6,116 +653 +1,463 +265 +8,497 +8,497$/m);
    assert.match(text.stdout, /^OUTCOME +TO FINISH +APPROVAL$/m);
    assert.match(text.stdout, /^TOTAL +29m \/ 3h 10m +30m \/ 3h$/m);
    assert.match(text.stdout, /^OUTCOME +INITIALIZING +PLANNING +EXECUTING$/m);
    assert.match(text.stdout, /^TOTAL +1m \/ 10m +20m \/ 20m +12m \/ 20m$/m);
    assert.match(text.stdout, /^Trash: 0 entries, 0 bytes$/m);
    // Every phase, the widest durations, by day: fits a terminal of 120 columns.
    const byDay = await run(['stats', '--by', 'day']);
    assert.equal(byDay.code, 0, byDay.stderr);
    assert.match(byDay.stdout, /^2026-11-17 +5d 23h \/ 5d 23h +23h 59m \/ 23h 59m$/m);
    assert.match(byDay.stdout, /^DAY +INITIALIZING +INVESTIGATING +PLANNING +EXECUTING +VALIDATING$/m);
    const widest = Math.max(...byDay.stdout.split('\n').map((line) => line.length));
    assert.ok(widest <= 120, `a line of ${widest} columns:\n${byDay.stdout}`);

    const usage = [
      ['stats', '--since', 'yesterday'],
      ['stats', '--until', '2026-02-30'],
      ['stats', '--by', 'week'],
      ['stats', '--sinse', '7d'],
      ['stats', '--since'],
      ['stats', '--since', '1000000w'],
      ['stats', '--since', '99999999999999999999w'],
      ['stats', '--until', '2026-11-01T10:00'],
    ];
    const missing = path.join(root, 'no-store');
    const [none, ...bad] = await Promise.all([
      runNode(CLI, ['stats', '--dir', missing], { cwd: root, env: cleanEnv() }),
      ...usage.map(run),
    ]);
    bad.forEach((result, i) => {
      assert.equal(result.code, 2, `${usage[i].join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /^agent-session: /);
      assert.equal(result.stdout, '');
    });
    assert.match(bad.at(-3).stderr, /--since "1000000w" reaches back before the year 0/);
    assert.match(bad.at(-2).stderr, /reaches back before the year 0/);
    assert.match(bad.at(-1).stderr, /--until "2026-11-01T10:00" has no zone: add Z \(UTC\) or an offset/);
    assert.equal(none.code, 1, none.stderr);
    assert.equal(existsSync(missing), false, 'stats creates no store');
    const empty = await runNode(CLI, ['stats', '--dir', ''], { cwd: root, env: cleanEnv() });
    assert.equal(empty.code, 2, empty.stderr);
  });
});
