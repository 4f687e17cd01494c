// The MCP server (`agent-session mcp`) as Claude Code runs it: a real child process on stdio, spoken
// to with the official SDK's client, which also checks every structured result against the tool's
// output schema.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { CLI, cleanEnv, cli, DIST, loadLibrary, tempDir } from './helpers/run.mjs';
import { HOUR, liveIds, sessionFiles, trashEntries } from './helpers/trees.mjs';

const CONV = 'conv-aaaa';
const OTHER = 'conv-bbbb';

/** Starts the built server on `dir` (as `agent-session mcp`, or the `agent-session-mcp` bin) and connects. */
async function connect(t, dir, { conversation = CONV, bin = false, answer } = {}) {
  const args = bin ? [path.join(DIST, 'bin', 'agent-session-mcp.js'), '--dir', dir] : [CLI, 'mcp', '--dir', dir];
  const env = cleanEnv({ HOME: path.dirname(dir), ...(conversation ? { CLAUDE_CODE_SESSION_ID: conversation } : {}) });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env,
    cwd: path.dirname(dir),
    stderr: 'pipe',
  });
  // With `answer`, the client can ask its person (form elicitation) and answers each question with it.
  const capabilities = answer ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities });
  if (answer) client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params));
  await client.connect(transport);
  // Progress notifications as they arrive. The SDK's client (1.32) hands them to `onprogress` a microtask
  // late, so one read in the same chunk as the response is dropped (typescript-sdk issue 2580); the tests
  // check what the server sent, in order, here.
  client.progress = [];
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === 'notifications/progress') client.progress.push(message.params);
    receive(message, extra);
  };
  // The client checks structuredContent against the output schemas it has listed.
  await client.listTools();
  t.after(() => client.close());
  return client;
}

/** Calls a tool; resolves the structured result, or rejects with the tool error's {code, message, details}. */
async function call(client, name, args = {}) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    const { error } = JSON.parse(result.content[0].text);
    throw Object.assign(new Error(error.message), error);
  }
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

/** Sessions made through the library, each in a Claude Code conversation (or none), backdated by `hoursAgo`. */
async function make(dir, spec, now = Date.now()) {
  const { Sessions } = await loadLibrary();
  for (const s of spec) {
    const sessions = Sessions.open({ dir, cwd: dir, env: {}, now: () => now - (s.hoursAgo ?? 0) * HOUR });
    const claude = s.conversation ? { session_id: s.conversation, agent_id: `a${s.id.replace(/\W/g, '')}` } : undefined;
    await sessions.create({ agentName: s.agent ?? 'worker', id: s.id, parent: s.parent ?? null, claude });
    if (s.phase) await sessions.update(s.id, { phase: s.phase });
    if (s.outcome) await sessions.finalize(s.id, s.outcome, 'done');
  }
}

function auditLines(dir) {
  return readFileSync(path.join(dir, 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

const rejectsWith = (promise, code, reason) =>
  assert.rejects(promise, (err) => {
    assert.equal(err.code, code, err.message);
    if (reason) assert.equal(err.details?.reason, reason, err.message);
    return true;
  });

const TREE = [
  { id: 'root', conversation: CONV, phase: 'planning' },
  { id: 'kid-1', parent: 'root', conversation: CONV, phase: 'approval' },
  { id: 'kid-2', parent: 'root', conversation: CONV, outcome: 'completed' },
  { id: 'grandkid', parent: 'kid-1', conversation: CONV, phase: 'planning' },
  { id: 'theirs', conversation: OTHER, phase: 'planning' },
  { id: 'nobodys' },
];

test('tools/list: eight tools, each with input and output schemas and honest annotations, under 8 KB', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  const client = await connect(t, dir);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), [
    'cleanup_sessions',
    'delete_session',
    'finalize_session',
    'get_session',
    'list_sessions',
    'list_trash',
    'restore_session',
    'update_session',
  ]);
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.equal(tool.outputSchema.type, 'object', tool.name);
    assert.ok(tool.description.length > 20, tool.name);
  }
  const hint = (name) => tools.find((x) => x.name === name).annotations;
  for (const name of ['list_sessions', 'get_session', 'list_trash'])
    assert.deepEqual(hint(name), { readOnlyHint: true, destructiveHint: false }, name);
  for (const name of ['update_session', 'finalize_session', 'restore_session'])
    assert.deepEqual(hint(name), { readOnlyHint: false, destructiveHint: false }, name);
  for (const name of ['delete_session', 'cleanup_sessions'])
    assert.deepEqual(hint(name), { readOnlyHint: false, destructiveHint: true }, name);
  assert.ok(Buffer.byteLength(JSON.stringify({ tools })) < 8192, `${JSON.stringify({ tools }).length} bytes`);
  // The server's own bin serves the same tools.
  const direct = await connect(t, dir, { bin: true });
  assert.deepEqual((await direct.listTools()).tools, tools);
});

test("list_sessions shows the conversation's own sessions first, counts the others, and pages", async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, TREE);
  const client = await connect(t, dir);
  const mine = await call(client, 'list_sessions');
  assert.equal(mine.scope, 'conversation');
  assert.equal(mine.conversation, CONV);
  assert.deepEqual(mine.sessions.map((s) => s.id).sort(), ['grandkid', 'kid-1', 'kid-2', 'root']);
  assert.equal(mine.others, 2);
  const kid = mine.sessions.find((s) => s.id === 'kid-1');
  assert.equal(kid.phase, 'approval');
  assert.equal(kid.conversation, CONV);
  assert.equal(typeof kid.resume.resume, 'boolean');
  assert.match(kid.status, /paused/);
  const all = await call(client, 'list_sessions', { scope: 'project' });
  assert.equal(all.total, 6);
  assert.equal(all.others, 0);
  const page = await call(client, 'list_sessions', { scope: 'project', limit: 4, offset: 4 });
  assert.equal(page.sessions.length, 2);
  assert.equal(page.next_offset, null);
  assert.equal((await call(client, 'list_sessions', { limit: 3 })).next_offset, 3);
  const planning = await call(client, 'list_sessions', { phase: 'planning', scope: 'project' });
  assert.deepEqual(planning.sessions.map((s) => s.id).sort(), ['grandkid', 'root', 'theirs']);
  // Outside Claude Code there is no conversation: the default is the project.
  const outside = await connect(t, dir, { conversation: null });
  const listed = await call(outside, 'list_sessions');
  assert.equal(listed.scope, 'project');
  assert.equal(listed.total, 6);
  // A record that cannot be read is named, not silently left out.
  assert.deepEqual(mine.problems, []);
  writeFileSync(path.join(dir, 'kid-2', 'state.json'), '{not json');
  const broken = await call(client, 'list_sessions');
  assert.equal(broken.total, 3);
  assert.deepEqual(
    broken.problems.map((p) => [p.id, p.code]),
    [['kid-2', 'ECORRUPT']],
  );
});

test('get_session returns the record, children, resume verdict and recent audit entries', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, TREE);
  const client = await connect(t, dir);
  const got = await call(client, 'get_session', { id: 'root' });
  assert.equal(got.session.agent_id, 'root');
  assert.equal(got.conversation, CONV);
  assert.deepEqual(got.children.map((c) => c.id).sort(), ['kid-1', 'kid-2']);
  assert.equal(typeof got.resume.reason, 'string');
  assert.deepEqual(
    got.audit.map((e) => e.action),
    ['create', 'update'],
  );
  // A Claude Code agent id works where a session id goes, as in the CLI.
  await cli(dir, ['update', 'kid-1', '--phase', 'planning']);
  assert.equal((await call(client, 'get_session', { id: 'root', audit: 0 })).audit.length, 0);
  await rejectsWith(call(client, 'get_session', { id: 'missing' }), 'ENOTFOUND');
});

test('update_session and finalize_session change the record, audited as actor mcp with the conversation', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, TREE);
  const client = await connect(t, dir);
  const updated = await call(client, 'update_session', { id: 'kid-1', phase: 'executing', metadata: { k: 1 } });
  assert.equal(updated.session.phase, 'executing');
  assert.deepEqual(updated.session.metadata, { k: 1 });
  const errored = await call(client, 'update_session', { id: 'kid-1', error: 'tests failed' });
  assert.equal(errored.session.error_count, 1);
  const final = await call(client, 'finalize_session', { id: 'kid-1', outcome: 'failed', summary: 'gave up' });
  assert.equal(final.session.phase, 'failed');
  await rejectsWith(call(client, 'update_session', { id: 'kid-1', phase: 'planning' }), 'EFINAL');
  await rejectsWith(call(client, 'update_session', { id: 'kid-1' }), 'EINVALID');
  const mine = auditLines(dir).filter((e) => e.actor === 'mcp');
  assert.deepEqual(
    mine.map((e) => [e.action, e.ids[0], e.details.conversation]),
    [
      ['update', 'kid-1', CONV],
      ['update', 'kid-1', CONV],
      ['finalize', 'kid-1', CONV],
    ],
  );
  // Another conversation's session (or one of none) needs scope "project".
  for (const id of ['theirs', 'nobodys']) {
    await rejectsWith(call(client, 'update_session', { id, phase: 'executing' }), 'EREFUSED', 'other_conversation');
    await rejectsWith(call(client, 'finalize_session', { id, outcome: 'completed' }), 'EREFUSED', 'other_conversation');
  }
  assert.equal((await cli(dir, ['get', 'theirs'])).json.phase, 'planning');
  const widened = await call(client, 'update_session', { id: 'theirs', phase: 'executing', scope: 'project' });
  assert.equal(widened.session.phase, 'executing');
});

test('delete_session previews, deletes only with the token, and restore_session brings the subtree back', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(
    dir,
    TREE.map((s) => ({ ...s, hoursAgo: 3 })),
  );
  const client = await connect(t, dir);
  const before = sessionFiles(dir);
  const preview = await call(client, 'delete_session', { id: 'kid-1' });
  assert.equal(preview.stage, 'preview');
  assert.deepEqual(
    preview.sessions.map((s) => [s.id, s.depth, s.phase]),
    [
      ['kid-1', 0, 'approval'],
      ['grandkid', 1, 'planning'],
    ],
  );
  assert.deepEqual(preview.counts_by_depth, { 0: 1, 1: 1 });
  assert.ok(preview.sessions[0].age_seconds >= 3 * 3600 - 60);
  assert.ok(preview.bytes > 0);
  assert.deepEqual(preview.blocked, []);
  assert.match(preview.confirm_token, /^[0-9a-z]+\.[\w-]{43}$/);
  assert.deepEqual(sessionFiles(dir), before, 'the preview changed nothing');

  // The client asks for progress (a progressToken): the delete reports each session moved. What the
  // server sent, as `connect` taps it (the SDK's `onprogress` can miss the last one, see there).
  const deleting = await client.callTool(
    {
      name: 'delete_session',
      arguments: { id: 'kid-1', confirm_token: preview.confirm_token, reason: 'done with it' },
    },
    undefined,
    { onprogress: () => undefined },
  );
  const progress = client.progress.splice(0);
  assert.ok(!deleting.isError, deleting.content[0].text);
  const done = deleting.structuredContent;
  assert.equal(done.stage, 'deleted');
  assert.equal(done.total, 2);
  assert.deepEqual(
    progress.map((p) => [p.progress, p.total]),
    [
      [1, 2],
      [2, 2],
    ],
  );
  assert.ok(done.trash_entry);
  assert.deepEqual(liveIds(dir), ['kid-2', 'nobodys', 'root', 'theirs']);
  const [entry] = trashEntries(dir);
  assert.equal(entry.entry, done.trash_entry);
  assert.deepEqual(entry.held, ['grandkid', 'kid-1']);
  const deleted = auditLines(dir).find((e) => e.action === 'delete');
  assert.equal(deleted.actor, 'mcp');
  assert.equal(deleted.details.conversation, CONV);
  assert.equal(deleted.details.reason, 'done with it', 'a reason without force is recorded too');
  // A token is good for one delete: the subtree is gone now.
  await rejectsWith(call(client, 'delete_session', { id: 'kid-1', confirm_token: preview.confirm_token }), 'ENOTFOUND');

  const trash = await call(client, 'list_trash');
  assert.equal(trash.total, 1);
  assert.equal(trash.entries[0].entry, done.trash_entry);
  assert.equal(trash.entries[0].root, 'kid-1');
  const restoredAnswer = await client.callTool(
    { name: 'restore_session', arguments: { target: done.trash_entry } },
    undefined,
    { onprogress: () => undefined },
  );
  const restoring = client.progress.splice(0);
  assert.ok(!restoredAnswer.isError, restoredAnswer.content[0].text);
  const restored = restoredAnswer.structuredContent;
  assert.deepEqual(restored.restored.map((s) => s.id).sort(), ['grandkid', 'kid-1']);
  assert.equal(restoring.at(-1)?.progress, 2, 'restore reports its progress');
  assert.deepEqual(sessionFiles(dir), before, 'restored byte for byte');
  assert.equal(auditLines(dir).find((e) => e.action === 'restore').actor, 'mcp');
  // The restored subtree is exactly what was previewed, yet the token was spent: a retry deletes nothing.
  await rejectsWith(
    call(client, 'delete_session', { id: 'kid-1', confirm_token: preview.confirm_token }),
    'EREFUSED',
    'used_token',
  );
  assert.deepEqual(sessionFiles(dir), before);
});

test('a token is refused once the subtree changed, for another subtree, or with other options', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(
    dir,
    TREE.map((s) => ({ ...s, hoursAgo: 3 })),
  );
  const client = await connect(t, dir);
  const preview = await call(client, 'delete_session', { id: 'kid-1' });
  // A hook moves a session of the subtree on (backdated, so that it does not count as running).
  const { Sessions } = await loadLibrary();
  await Sessions.open({ dir, cwd: dir, env: {}, now: () => Date.now() - 2 * HOUR }).update('grandkid', {
    phase: 'approval',
  });
  await rejectsWith(
    call(client, 'delete_session', { id: 'kid-1', confirm_token: preview.confirm_token }),
    'EREFUSED',
    'stale_token',
  );
  // A new child is a change too.
  const second = await call(client, 'delete_session', { id: 'kid-1' });
  await make(dir, [{ id: 'late', parent: 'grandkid', conversation: CONV, phase: 'planning', hoursAgo: 3 }]);
  await rejectsWith(
    call(client, 'delete_session', { id: 'kid-1', confirm_token: second.confirm_token }),
    'EREFUSED',
    'stale_token',
  );
  const third = await call(client, 'delete_session', { id: 'kid-1' });
  await rejectsWith(
    call(client, 'delete_session', { id: 'kid-2', confirm_token: third.confirm_token }),
    'EREFUSED',
    'stale_token',
  );
  await rejectsWith(
    call(client, 'delete_session', { id: 'kid-1', confirm_token: third.confirm_token, backup: false }),
    'EREFUSED',
    'stale_token',
  );
  await rejectsWith(call(client, 'delete_session', { id: 'kid-1', confirm_token: 'made-up' }), 'EINVALID');
  // A token of another server (another key) is refused as well.
  const other = await connect(t, dir);
  await rejectsWith(
    call(other, 'delete_session', { id: 'kid-1', confirm_token: third.confirm_token }),
    'EREFUSED',
    'stale_token',
  );
  assert.deepEqual(liveIds(dir), ['grandkid', 'kid-1', 'kid-2', 'late', 'nobodys', 'root', 'theirs']);
  await call(client, 'delete_session', { id: 'kid-1', confirm_token: third.confirm_token });
  assert.deepEqual(liveIds(dir), ['kid-2', 'nobodys', 'root', 'theirs']);
});

test('a running subtree blocks the delete; force needs a reason, which the audit entry records', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, [
    { id: 'boss', conversation: CONV, phase: 'planning', hoursAgo: 3 },
    { id: 'busy', parent: 'boss', conversation: CONV, phase: 'executing' },
  ]);
  const client = await connect(t, dir);
  const blocked = await call(client, 'delete_session', { id: 'boss' });
  assert.equal(blocked.stage, 'blocked');
  assert.equal(blocked.confirm_token, null);
  assert.deepEqual(
    blocked.blocked.map((b) => b.id),
    ['busy'],
  );
  await rejectsWith(call(client, 'delete_session', { id: 'boss', force: true }), 'EINVALID');
  const forced = await call(client, 'delete_session', { id: 'boss', force: true, reason: 'the agent crashed' });
  assert.equal(forced.stage, 'preview');
  // The token of a forced preview does not serve an unforced delete.
  await rejectsWith(call(client, 'delete_session', { id: 'boss', confirm_token: forced.confirm_token }), 'EREFUSED');
  const done = await call(client, 'delete_session', {
    id: 'boss',
    force: true,
    reason: 'the agent crashed',
    confirm_token: forced.confirm_token,
  });
  assert.equal(done.stage, 'deleted');
  // Warnings name the tool's arguments, not the CLI's flags.
  const forcedWarning = '1 running session(s) were removed because of force';
  assert.ok(done.warnings.includes(forcedWarning), done.warnings.join('; '));
  const entry = auditLines(dir).find((e) => e.action === 'delete');
  assert.equal(entry.details.reason, 'the agent crashed');
  assert.equal(entry.details.conversation, CONV);
  assert.equal(entry.actor, 'mcp');
});

test("deleting another conversation's session needs scope project", async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, [
    { id: 'mine', conversation: CONV, hoursAgo: 3, outcome: 'completed' },
    { id: 'adopted', parent: 'mine', conversation: OTHER, hoursAgo: 3, outcome: 'completed' },
  ]);
  const client = await connect(t, dir);
  await rejectsWith(call(client, 'delete_session', { id: 'mine' }), 'EREFUSED', 'other_conversation');
  const preview = await call(client, 'delete_session', { id: 'mine', scope: 'project' });
  await call(client, 'delete_session', { id: 'mine', scope: 'project', confirm_token: preview.confirm_token });
  assert.deepEqual(liveIds(dir), []);
});

test('bad input: hostile ids, wrong types, unknown fields and tools are refused with the library codes', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, TREE);
  const client = await connect(t, dir);
  const before = sessionFiles(dir);
  for (const id of ['../x', '..', '.', 'a/b', '/etc/passwd', '', 'x'.repeat(200), 'audit.jsonl']) {
    await rejectsWith(call(client, 'get_session', { id }), 'EINVALID');
    await rejectsWith(call(client, 'delete_session', { id }), 'EINVALID');
    await rejectsWith(call(client, 'update_session', { id, phase: 'planning' }), 'EINVALID');
    await rejectsWith(call(client, 'restore_session', { target: id }), 'EINVALID');
  }
  await rejectsWith(call(client, 'restore_session', { target: '../../etc' }), 'EINVALID');
  await rejectsWith(call(client, 'get_session', { id: 5 }), 'EINVALID');
  await rejectsWith(call(client, 'get_session', {}), 'EINVALID');
  await rejectsWith(call(client, 'list_sessions', { limit: 'ten' }), 'EINVALID');
  await rejectsWith(call(client, 'list_sessions', { limit: 0 }), 'EINVALID');
  await rejectsWith(call(client, 'list_sessions', { phase: 'sleeping' }), 'EINVALID');
  await rejectsWith(call(client, 'list_sessions', { scope: 'everything' }), 'EINVALID');
  await rejectsWith(call(client, 'list_sessions', { parent: '../x' }), 'EINVALID');
  await rejectsWith(call(client, 'list_sessions', { limt: 3 }), 'EINVALID');
  await rejectsWith(call(client, 'finalize_session', { id: 'root', outcome: 'great' }), 'EINVALID');
  await rejectsWith(call(client, 'cleanup_sessions', { hours: -1 }), 'EINVALID');
  // What a call writes into a record stays small: the record comes back whole in every answer.
  await rejectsWith(call(client, 'update_session', { id: 'root', error: 'e'.repeat(10_001) }), 'EINVALID');
  await rejectsWith(call(client, 'update_session', { id: 'root', metadata: { big: 'm'.repeat(100_000) } }), 'EINVALID');
  await rejectsWith(
    call(client, 'finalize_session', { id: 'root', outcome: 'failed', summary: 's'.repeat(10_001) }),
    'EINVALID',
  );
  // A cutoff before any date is bad input, not an I/O failure.
  await rejectsWith(call(client, 'cleanup_sessions', { hours: 1e12 }), 'EINVALID');
  // An error echoes what was sent, cut short: all of it would land in the model's context.
  const huge = await client.callTool({ name: 'get_session', arguments: { id: 'x'.repeat(100_000) } });
  assert.ok(huge.isError);
  assert.ok(huge.content[0].text.length < 2000, `${huge.content[0].text.length} characters`);
  assert.equal(JSON.parse(huge.content[0].text).error.code, 'EINVALID');
  await rejectsWith(call(client, 'delete_session', { id: 'root', force: 'yes' }), 'EINVALID');
  await assert.rejects(client.callTool({ name: 'drop_database', arguments: {} }), /unknown tool/);
  assert.deepEqual(sessionFiles(dir), before);
  // The server is still serving.
  assert.equal((await call(client, 'list_sessions', { scope: 'project' })).total, 6);
});

test('cleanup_sessions previews what cleanup --dry-run computes and purges only with the token', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, [
    { id: 'old-1', conversation: CONV, outcome: 'completed', hoursAgo: 48 },
    { id: 'old-2', conversation: CONV, outcome: 'failed', hoursAgo: 30 },
    { id: 'fresh', conversation: CONV, outcome: 'completed', hoursAgo: 1 },
  ]);
  const client = await connect(t, dir);
  const preview = await call(client, 'cleanup_sessions', { hours: 24 });
  const dry = await cli(dir, ['cleanup', '--hours', '24', '--dry-run', '--json']);
  assert.deepEqual(preview.purged.map((p) => p.id).sort(), dry.json.purged.map((p) => p.id).sort());
  assert.deepEqual(preview.purged.map((p) => p.id).sort(), ['old-1', 'old-2']);
  assert.deepEqual(liveIds(dir), ['fresh', 'old-1', 'old-2']);
  await rejectsWith(
    call(client, 'cleanup_sessions', { hours: 12, confirm_token: preview.confirm_token }),
    'EREFUSED',
    'stale_token',
  );
  // The client asks for progress (a progressToken): the cleanup reports it as it goes.
  const answer = await client.callTool(
    { name: 'cleanup_sessions', arguments: { hours: 24, confirm_token: preview.confirm_token } },
    undefined,
    { onprogress: () => undefined },
  );
  const progress = client.progress.splice(0);
  assert.ok(!answer.isError, answer.content[0].text);
  const done = answer.structuredContent;
  assert.equal(done.stage, 'done');
  assert.ok(progress.length >= 1, 'no progress notification');
  assert.equal(progress.at(-1).progress, progress.at(-1).total);
  assert.deepEqual(liveIds(dir), ['fresh']);
  assert.ok(done.trash_entries.length >= 1);
  assert.ok(auditLines(dir).some((e) => e.action === 'cleanup' && e.actor === 'mcp'));
  // Restored, the sessions are the plan again; the spent token purges nothing.
  for (const entry of done.trash_entries) await call(client, 'restore_session', { target: entry });
  assert.deepEqual(liveIds(dir), ['fresh', 'old-1', 'old-2']);
  await rejectsWith(
    call(client, 'cleanup_sessions', { hours: 24, confirm_token: preview.confirm_token }),
    'EREFUSED',
    'used_token',
  );
  assert.deepEqual(liveIds(dir), ['fresh', 'old-1', 'old-2']);
});

test('cleanup_sessions: a plan that changed, or that reaches other conversations, is refused', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, [
    { id: 'old-1', conversation: CONV, outcome: 'completed', hoursAgo: 48 },
    { id: 'old-theirs', conversation: OTHER, outcome: 'completed', hoursAgo: 48 },
  ]);
  const client = await connect(t, dir);
  const preview = await call(client, 'cleanup_sessions', { hours: 24 });
  await rejectsWith(
    call(client, 'cleanup_sessions', { hours: 24, confirm_token: preview.confirm_token }),
    'EREFUSED',
    'other_conversation',
  );
  const wide = await call(client, 'cleanup_sessions', { hours: 24, scope: 'project' });
  await make(dir, [{ id: 'old-2', conversation: CONV, outcome: 'completed', hoursAgo: 48 }]);
  await rejectsWith(
    call(client, 'cleanup_sessions', { hours: 24, scope: 'project', confirm_token: wide.confirm_token }),
    'EREFUSED',
    'stale_token',
  );
  assert.deepEqual(liveIds(dir), ['old-1', 'old-2', 'old-theirs']);
});

test('concurrent calls: reads in parallel, and one token confirmed twice at once deletes once', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(
    dir,
    TREE.map((s) => ({ ...s, hoursAgo: 3 })),
  );
  const client = await connect(t, dir);
  const reads = await Promise.all([
    ...Array.from({ length: 8 }, () => call(client, 'list_sessions', { scope: 'project' })),
    ...Array.from({ length: 8 }, () => call(client, 'get_session', { id: 'root' })),
  ]);
  for (const r of reads.slice(0, 8)) assert.equal(r.total, 6);
  for (const r of reads.slice(8)) assert.equal(r.session.agent_id, 'root');
  const preview = await call(client, 'delete_session', { id: 'kid-1' });
  const both = await Promise.allSettled([
    call(client, 'delete_session', { id: 'kid-1', confirm_token: preview.confirm_token }),
    call(client, 'delete_session', { id: 'kid-1', confirm_token: preview.confirm_token }),
  ]);
  const ok = both.filter((r) => r.status === 'fulfilled');
  assert.equal(ok.length, 1, JSON.stringify(both.map((r) => r.reason?.code)));
  assert.ok(['ENOTFOUND', 'ELOCKED', 'EREFUSED'].includes(both.find((r) => r.status === 'rejected').reason.code));
  assert.equal(trashEntries(dir).length, 1);
  // Two servers (two conversations) changing sessions at once keep every change.
  const other = await connect(t, dir, { conversation: OTHER });
  await Promise.all([
    ...Array.from({ length: 5 }, (_, i) => call(client, 'update_session', { id: 'root', metadata: { [`a${i}`]: i } })),
    ...Array.from({ length: 5 }, (_, i) => call(other, 'update_session', { id: 'theirs', metadata: { [`b${i}`]: i } })),
  ]);
  assert.equal(Object.keys((await cli(dir, ['get', 'root'])).json.metadata).length, 5);
  assert.equal(Object.keys((await cli(dir, ['get', 'theirs'])).json.metadata).length, 5);
});

test('a client that can ask its person confirms the delete instead of the token round trip', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(
    dir,
    TREE.map((s) => ({ ...s, hoursAgo: 3 })),
  );
  const asked = [];
  let reply;
  const client = await connect(t, dir, {
    answer: (params) => {
      asked.push(params.message);
      return reply;
    },
  });
  reply = { action: 'decline' };
  const declined = await call(client, 'delete_session', { id: 'kid-1' });
  assert.equal(declined.stage, 'declined');
  assert.equal(declined.confirm_token, null);
  assert.match(asked[0], /Delete 2 agent session\(s\): kid-1 \(worker, approval\), grandkid/);
  reply = { action: 'accept', content: { confirm: false } };
  assert.equal((await call(client, 'delete_session', { id: 'kid-1' })).stage, 'declined');
  // Nobody answered (Claude Code in -p mode cancels at once): the token flow.
  reply = { action: 'cancel' };
  const preview = await call(client, 'delete_session', { id: 'kid-1' });
  assert.equal(preview.stage, 'preview');
  assert.ok(preview.confirm_token);
  assert.deepEqual(liveIds(dir), ['grandkid', 'kid-1', 'kid-2', 'nobodys', 'root', 'theirs']);
  reply = { action: 'accept', content: { confirm: true } };
  const done = await call(client, 'delete_session', { id: 'kid-1' });
  assert.equal(done.stage, 'deleted');
  assert.deepEqual(liveIds(dir), ['kid-2', 'nobodys', 'root', 'theirs']);
  const entry = auditLines(dir).find((e) => e.action === 'delete');
  assert.equal(entry.details.confirmed, 'elicitation');
  assert.equal(asked.length, 4);
  // A blocked subtree is not put to the person.
  await make(dir, [{ id: 'busy', parent: 'root', conversation: CONV, phase: 'executing' }]);
  assert.equal((await call(client, 'delete_session', { id: 'root' })).stage, 'blocked');
  assert.equal(asked.length, 4);
  // The question says what the person agrees to: without a backup nothing can bring them back, and
  // with force, that running sessions go too.
  reply = { action: 'decline' };
  await call(client, 'delete_session', { id: 'root', force: true, reason: 'stuck', backup: false });
  assert.equal(asked.length, 5);
  assert.doesNotMatch(asked[4], /trash|restore_session brings/);
  assert.match(asked[4], /destroyed/);
  assert.match(asked[4], /running/);
});

test('a client that can ask its person confirms a cleanup instead of the token round trip', async (t) => {
  const dir = path.join(tempDir(t), 'store');
  await make(dir, [
    { id: 'old-1', conversation: CONV, outcome: 'completed', hoursAgo: 48 },
    { id: 'fresh', conversation: CONV, outcome: 'completed', hoursAgo: 1 },
  ]);
  const asked = [];
  let reply;
  const client = await connect(t, dir, {
    answer: (params) => {
      asked.push(params.message);
      return reply;
    },
  });
  reply = { action: 'decline' };
  const declined = await call(client, 'cleanup_sessions', { hours: 24 });
  assert.equal(declined.stage, 'declined');
  assert.equal(declined.confirm_token, null);
  assert.match(asked[0], /purge 1 finished session\(s\), abandon 0 stuck one\(s\), quarantine 0 corrupt one\(s\)\?/);
  assert.match(asked[0], /go to the trash/);
  assert.deepEqual(liveIds(dir), ['fresh', 'old-1']);
  // Nobody answered: the token flow.
  reply = { action: 'cancel' };
  const preview = await call(client, 'cleanup_sessions', { hours: 24 });
  assert.equal(preview.stage, 'preview');
  assert.ok(preview.confirm_token);
  reply = { action: 'accept', content: { confirm: true } };
  const done = await call(client, 'cleanup_sessions', { hours: 24 });
  assert.equal(done.stage, 'done');
  assert.deepEqual(liveIds(dir), ['fresh']);
  const entry = auditLines(dir).find((e) => e.action === 'cleanup');
  assert.equal(entry.details.confirmed, 'elicitation');
  assert.equal(entry.details.conversation, CONV);
  // Nothing to clean: nothing to ask.
  const again = await call(client, 'cleanup_sessions', { hours: 24 });
  assert.equal(again.stage, 'preview');
  assert.equal(asked.length, 3);
});
