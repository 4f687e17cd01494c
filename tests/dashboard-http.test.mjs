// The dashboard server over HTTP, run as the built CLI: the token, the Host check, the methods, the
// same-origin check of changes, a read-only server, the event stream and the cache headers.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'node:test';
import { collectEvents, request, startDashboard } from './helpers/dashboard.mjs';
import { cli, cliJson, DIST, ROOT as REPO, tempDir } from './helpers/run.mjs';
import { until } from './helpers/poll.mjs';
import { build } from './helpers/trees.mjs';

async function store(t) {
  const dir = path.join(tempDir(t, 'dashboard-http-'), 'store');
  await build(dir, [
    { id: 'agent-20260101-000000-aaaaaaaa', agent: 'explorer', phase: 'planning', hoursAgo: 2 },
    { id: 'agent-20260101-000001-bbbbbbbb', parent: 'agent-20260101-000000-aaaaaaaa', phase: 'approval', hoursAgo: 1 },
    { id: 'agent-20260101-000002-cccccccc', agent: 'builder', phase: 'executing' },
  ]);
  return dir;
}
const ROOT = 'agent-20260101-000000-aaaaaaaa';
const CHILD = 'agent-20260101-000001-bbbbbbbb';
const RUNNING = 'agent-20260101-000002-cccccccc';

test('the token, the Host, the methods and the origin guard every request; nothing is cached', async (t) => {
  const dir = await store(t);
  const d = await startDashboard(t, dir);
  const host = { Host: `127.0.0.1:${d.port}` };
  const auth = { ...host, 'X-Agent-Session-Token': d.token };

  assert.equal((await request(d.port, '/', { headers: host })).status, 401);
  assert.equal((await request(d.port, '/?token=wrong', { headers: host })).status, 403);
  const page = await request(d.port, `/?token=${d.token}`, { headers: host });
  assert.equal(page.status, 200);
  assert.equal(page.headers['cache-control'], 'no-store');
  assert.match(page.headers['content-security-policy'], /default-src 'none'/);
  assert.match(page.headers['content-security-policy'], /connect-src 'self'/);
  assert.doesNotMatch(page.body, /(src|href)="https?:/, 'the page loads nothing from the network');
  assert.match(page.body, /"readOnly":false/);

  // The API takes the token from its header only: a URL token is for the page.
  assert.equal((await request(d.port, `/api/roots?token=${d.token}`, { headers: host })).status, 401);
  const wrong = await request(d.port, '/api/roots', { headers: { ...host, 'X-Agent-Session-Token': 'x' + d.token } });
  assert.equal(wrong.status, 403);
  assert.equal(wrong.json.error.code, 'EREFUSED');
  const roots = await request(d.port, '/api/roots', { headers: auth });
  assert.equal(roots.status, 200);
  assert.equal(roots.headers['cache-control'], 'no-store');
  assert.deepEqual(
    roots.json.rows.map((r) => [r.agent_id, r.children]),
    [
      [RUNNING, 0],
      [ROOT, 1],
    ],
  );
  const kids = await request(d.port, `/api/children?id=${ROOT}`, { headers: auth });
  assert.deepEqual(
    kids.json.rows.map((r) => r.agent_id),
    [CHILD],
  );
  const waiting = await request(d.port, '/api/waiting', { headers: auth });
  assert.deepEqual(
    waiting.json.sessions.map((s) => s.agent_id),
    [CHILD, ROOT],
    'approval first',
  );
  assert.match(waiting.json.sessions[0].next_step, /agent-session update/);
  // The cards are stats' figures (computeStats): the store's three sessions started today.
  const cards = (await request(d.port, '/api/stats', { headers: auth })).json;
  for (const period of ['day', 'week'])
    assert.deepEqual(cards[period][0], {
      title: 'sessions',
      value: '3',
      detail: '1 running, 2 paused, 0 completed, 0 failed, 0 abandoned',
    });

  // DNS rebinding: a page of another name that resolves to 127.0.0.1.
  const rebound = await request(d.port, '/api/roots', { headers: { ...auth, Host: `evil.example:${d.port}` } });
  assert.equal(rebound.status, 403);
  assert.equal(rebound.json.error.details.reason, 'host');
  assert.equal(
    (await request(d.port, '/api/roots', { headers: { ...auth, Host: `localhost:${d.port}` } })).status,
    200,
  );
  assert.equal((await request(d.port, '/api/roots', { headers: { ...auth, Host: '127.0.0.1:1' } })).status, 403);

  assert.equal((await request(d.port, `/api/delete?id=${ROOT}`, { headers: auth })).status, 405);
  assert.equal((await request(d.port, '/api/restore', { headers: auth })).status, 405);
  assert.equal((await request(d.port, '/api/roots', { method: 'POST', headers: auth, body: {} })).status, 405);

  const body = { id: ROOT };
  const noOrigin = await request(d.port, '/api/delete-preview', { method: 'POST', headers: auth, body });
  assert.equal(noOrigin.status, 403);
  assert.equal(noOrigin.json.error.details.reason, 'origin');
  const foreign = { ...auth, Origin: 'http://evil.example' };
  assert.equal((await request(d.port, '/api/delete', { method: 'POST', headers: foreign, body })).status, 403);
  const same = { ...auth, Origin: d.origin, 'Content-Type': 'application/json' };
  // A form of another page can send the origin header only with a token it does not have.
  const tokenInUrl = { ...host, Origin: d.origin };
  assert.equal(
    (await request(d.port, `/api/delete?token=${d.token}`, { method: 'POST', headers: tokenInUrl, body })).status,
    401,
  );

  const preview = await request(d.port, '/api/delete-preview', { method: 'POST', headers: same, body });
  assert.equal(preview.status, 200);
  assert.equal(preview.json.dry_run, true);
  assert.deepEqual(
    preview.json.removed.map((s) => s.id),
    [ROOT, CHILD],
  );
  assert.ok(preview.json.bytes > 0);
  assert.equal((await cliJson(dir, ['list'])).sessions.length, 3, 'a preview changes nothing');

  const refused = await request(d.port, '/api/delete', { method: 'POST', headers: same, body: { id: RUNNING } });
  assert.equal(refused.status, 409);
  assert.equal(refused.json.error.code, 'EREFUSED');
  assert.match(refused.json.error.details.blocked[0].reason, /running/);
  const bad = await request(d.port, '/api/delete', { method: 'POST', headers: same, body: { id: '../x' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, 'EINVALID');

  const deleted = await request(d.port, '/api/delete', { method: 'POST', headers: same, body });
  assert.equal(deleted.status, 200);
  assert.equal(deleted.json.total, 2);
  const trash = await request(d.port, '/api/trash', { headers: auth });
  assert.deepEqual(
    trash.json.entries.map((e) => e.root),
    [ROOT],
  );
  const restored = await request(d.port, '/api/restore', {
    method: 'POST',
    headers: same,
    body: { target: trash.json.entries[0].entry },
  });
  assert.equal(restored.status, 200);
  assert.equal(restored.json.restored.length, 2);
  const audit = await cliJson(dir, ['audit', '--session', ROOT]);
  assert.deepEqual(
    audit.entries.filter((e) => e.action === 'delete' || e.action === 'restore').map((e) => [e.action, e.actor]),
    [
      ['delete', 'dashboard'],
      ['restore', 'dashboard'],
    ],
  );
  assert.equal((await cliJson(dir, ['list'])).sessions.length, 3);

  // Another server on the same port: a clear refusal, exit 3.
  const second = await cli(dir, ['dashboard', '--port', String(d.port)], { timeoutMs: 20_000 });
  assert.equal(second.code, 3, second.stderr);
  assert.match(second.stderr, new RegExp(`port ${d.port} is in use`));
  const usage = await cli(dir, ['dashboard', '--port', '70000'], { timeoutMs: 20_000 });
  assert.equal(usage.code, 2, usage.stderr);
});

test('the event stream names the sessions a CLI change touched; SIGTERM ends it and the server', async (t) => {
  const dir = await store(t);
  const d = await startDashboard(t, dir);
  let connected;
  const ready = new Promise((resolve) => (connected = resolve));
  const stream = collectEvents(d.port, d.token, (events) => {
    if (events.some((e) => 'retry' in e)) connected();
    return events.some((e) => e.event === 'change' && JSON.parse(e.data).ids.includes(CHILD));
  });
  await ready;
  await cliJson(dir, ['update', CHILD, '--phase', 'executing']);
  const { events, headers } = await stream;
  assert.equal(headers['cache-control'], 'no-store');
  assert.match(headers['content-type'], /^text\/event-stream/);
  assert.equal(events[0].retry, '1000');
  const change = events.find((e) => e.event === 'change');
  assert.match(change.id, /^\d+$/);
  const data = JSON.parse(change.data);
  assert.equal(data.action, 'update');
  // The parent too: its row shows the child count.
  assert.deepEqual(data.ids.sort(), [ROOT, CHILD].sort());
  const rows = await request(d.port, `/api/rows?ids=${CHILD},agent-20990101-000000-dddddddd`, {
    headers: { Host: `127.0.0.1:${d.port}`, 'X-Agent-Session-Token': d.token },
  });
  assert.equal(rows.json.rows[0].phase, 'executing');
  assert.deepEqual(rows.json.gone, ['agent-20990101-000000-dddddddd']);

  // A restore records itself before its sessions are back: the server reads them again once they are.
  const auth = { Host: `127.0.0.1:${d.port}`, 'X-Agent-Session-Token': d.token };
  const rowOf = async (id) => (await request(d.port, `/api/rows?ids=${id}`, { headers: auth })).json.rows[0];
  await cliJson(dir, ['delete', ROOT, '--force']);
  await until(async () => (await rowOf(ROOT)) === undefined, 'the deleted root to leave the rows');
  await cliJson(dir, ['restore', ROOT]);
  // Parents come back first: the root's row, then its child.
  await until(async () => (await rowOf(ROOT))?.children === 1, 'the restored root and its child to come back');

  // An open stream does not keep the server from stopping.
  let open;
  const opened = new Promise((resolve) => (open = resolve));
  collectEvents(d.port, d.token, (e) => void open()).catch(() => undefined);
  await opened;
  const exit = await d.stop();
  assert.equal(exit.code, 0, exit.stderr);
});

test('a read-only server refuses every change and its page has no actions', async (t) => {
  const dir = await store(t);
  const d = await startDashboard(t, dir, ['--read-only']);
  const headers = { Host: `127.0.0.1:${d.port}`, 'X-Agent-Session-Token': d.token, Origin: d.origin };
  for (const action of ['delete-preview', 'delete', 'restore']) {
    const res = await request(d.port, `/api/${action}`, { method: 'POST', headers, body: { id: ROOT, target: ROOT } });
    assert.equal(res.status, 403, action);
    assert.equal(res.json.error.details.reason, 'read-only');
  }
  const page = await request(d.port, `/?token=${d.token}`, { headers });
  assert.match(page.body, /"readOnly":true/);
  assert.equal((await cliJson(dir, ['list'])).sessions.length, 3);
});

test('a bad --port is quoted, a missing store refused as by list, a failing browser opener warned', async (t) => {
  const base = tempDir(t, 'dashboard-cli-');
  const missing = path.join(base, 'no-store');
  const [port, none, list] = await Promise.all([
    cli(missing, ['dashboard', '--port', 'abc'], { timeoutMs: 10_000 }),
    cli(missing, ['dashboard'], { timeoutMs: 10_000 }),
    cli(missing, ['list']),
  ]);
  assert.equal(port.code, 2);
  assert.match(port.stderr, /--port needs a port number from 0 to 65535, not "abc"/);
  assert.equal(none.code, list.code);
  assert.equal(none.code, 1);
  assert.equal(none.stderr, list.stderr);
  assert.match(none.stderr, /no sessions have been recorded here yet/);

  // An xdg-open that finds no browser exits 3: the URL is printed, and the command says to open it.
  const bin = path.join(base, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'xdg-open'), '#!/bin/sh\nexit 3\n');
  chmodSync(path.join(bin, 'xdg-open'), 0o755);
  const dir = path.join(base, 'store');
  await build(dir, [{ id: ROOT }]);
  const d = await startDashboard(t, dir, ['--open'], { PATH: `${bin}${path.delimiter}${process.env.PATH}` });
  await until(() => d.stderr().includes('\n'), 'the warning');
  assert.equal(d.stderr(), 'agent-session: cannot open a browser: xdg-open exited with 3; open the URL yourself\n');
  assert.deepEqual(await d.stop(), { code: 0, signal: null, stderr: d.stderr() });

  // The opener's command line (which `ps` shows every local user) carries a launch code, never the token:
  // good once, it redirects to the page's URL.
  const opened = path.join(base, 'opened');
  writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > ${opened}\n`);
  const e = await startDashboard(t, dir, ['--open'], { PATH: `${bin}${path.delimiter}${process.env.PATH}` });
  const launch = await until(() => existsSync(opened) && readFileSync(opened, 'utf8'), 'the opener to run');
  assert.doesNotMatch(launch, new RegExp(e.token));
  const { pathname, search } = new URL(launch);
  const host = { Host: `127.0.0.1:${e.port}` };
  const first = await request(e.port, pathname + search, { headers: host });
  assert.equal(first.status, 303);
  assert.equal(first.headers.location, `/?token=${e.token}`);
  assert.equal((await request(e.port, pathname + search, { headers: host })).status, 403, 'a launch code works once');
  // A path that is no URL is refused before anything else looks at it, after the Host check.
  assert.equal((await request(e.port, '//[', { headers: host })).status, 400);
  assert.equal((await request(e.port, '//[', { headers: { Host: 'evil.com' } })).status, 403);
  assert.equal(e.stderr(), '');
});

test('the stats cards show the figures of the stats contract', async () => {
  const { statsCards } = await import(pathToFileURL(path.join(DIST, 'tools', 'dashboard', 'stats-cards.js')).href);
  assert.equal(statsCards(null), null);
  const group = {
    sessions: { started: 12, running: 2, paused: 3, completed: 5, failed: 1, abandoned: 1 },
    rates: { success: 0.7142857, failure: 0.1428571, abandonment: 0.1428571 },
    resumes: { paused: 6, same_agent: 2, new_agent: 1, other: 1, expired: 1, rate: 0.6666667 },
    durations_ms: { to_finish: { median: 90_000, p90: 5_400_000 }, phases: {} },
    tokens: { input: 11_000, output: 200, cache_read: 30, cache_write: 4 },
    errors: 6,
  };
  const report = {
    version: 1,
    period: { since: '2026-11-25T00:00:00.000Z', until: '2026-11-26T00:00:00.000Z' },
    by: 'agent',
    totals: group,
    groups: [{ key: 'explorer', ...group }],
    trash: { entries: 2, bytes: 4096 },
  };
  assert.deepEqual(
    statsCards(report).map((c) => [c.title, c.value, c.detail]),
    [
      ['sessions', '12', '2 running, 3 paused, 5 completed, 1 failed, 1 abandoned'],
      ['success', '71%', 'failure 14%, abandonment 14%'],
      ['resumes', '67%', '2 same agent, 1 new agent, 1 cli, 1 expired of 6 paused'],
      ['time to finish', '2 min', 'median; p90 1.5 h'],
      ['errors', '6', 'trash: 2 entries, 4,096 bytes'],
      ['tokens', '11,234', 'in 11,000, out 200, cache read 30, cache write 4'],
    ],
  );
  const empty = { ...group, rates: { success: null, failure: null, abandonment: null }, durations_ms: null };
  assert.deepEqual(
    statsCards({ ...report, totals: empty })
      .map((c) => c.value)
      .slice(1, 4),
    ['-', '67%', '-'],
  );
});

test("SESSION_README's images are files the package ships", () => {
  const { files } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  const guide = readFileSync(path.join(REPO, 'SESSION_README.md'), 'utf8');
  const images = [...guide.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((p) => !/^\w+:/.test(p));
  assert.ok(images.includes('docs/dashboard.png'), images.join(', '));
  for (const image of images) {
    assert.ok(existsSync(path.join(REPO, image)), `${image} is missing`);
    assert.ok(
      files.some((f) => f === image || (f.endsWith('/') && image.startsWith(f))),
      `${image} is not in package.json "files": the installed guide's link would be broken`,
    );
  }
});
