// `agent-session install --mcp` / `uninstall --mcp`: the project's .mcp.json, run through the built CLI
// on temp projects; the entry it writes is started as Claude Code starts it (its command and args, in
// the project directory) and spoken to with the SDK's client.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bareProject, dependencyProject } from './helpers/installs.mjs';
import { cleanEnv, DIST, runNode } from './helpers/run.mjs';

const SERVER = path.join(DIST, 'bin', 'agent-session-mcp.js');

/** Runs a CLI (the build's, or a project's own copy) in the project with its HOME. */
const run = (proj, args, cli = path.join(DIST, 'bin', 'agent-session.js')) =>
  runNode(cli, args, { cwd: proj.dir, env: cleanEnv({ HOME: proj.home }) });

const mcpJson = (proj) => path.join(proj.dir, '.mcp.json');
const read = (file) => readFileSync(file, 'utf8');

/** Another tool's servers, in a layout of its own (tabs, a compact entry, a trailing member after ours). */
const OTHERS =
  '{\n\t"mcpServers": {\n\t\t"github": {"command": "gh-mcp", "args": ["--token", "${GH_TOKEN}"]},\n' +
  '\t\t"db": {\n\t\t\t"type": "http",\n\t\t\t"url": "http://127.0.0.1:9/mcp"\n\t\t}\n\t},\n\t"x-note": 1.50\n}\n';

/** Starts a `.mcp.json` entry as Claude Code does (in the project directory) and lists its tools. */
async function startEntry(t, proj, entry) {
  const transport = new StdioClientTransport({
    command: entry.command === 'node' ? process.execPath : entry.command,
    args: entry.args,
    cwd: proj.dir,
    env: cleanEnv({ HOME: proj.home, CLAUDE_PROJECT_DIR: proj.dir, CLAUDE_CODE_SESSION_ID: 'conv-1' }),
  });
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return (await client.listTools()).tools;
}

test("install --mcp adds the server, keeps the others' text, is idempotent; uninstall removes just it", async (t) => {
  const proj = bareProject(t);
  writeFileSync(mcpJson(proj), OTHERS);
  const installed = await run(proj, ['install', '--mcp', '--json']);
  assert.equal(installed.code, 0, installed.stderr);
  const report = JSON.parse(installed.stdout);
  assert.equal(report.changed, true);
  assert.deepEqual(report.permission_rules, [
    'mcp__agent-session__list_sessions',
    'mcp__agent-session__get_session',
    'mcp__agent-session__list_trash',
  ]);
  // Not a dependency: this machine's path, and a warning that .mcp.json is shared.
  assert.ok(
    report.warnings.some((w) => w.includes('a path of this machine')),
    report.warnings.join('\n'),
  );
  const text = read(mcpJson(proj));
  const json = JSON.parse(text);
  assert.deepEqual(json.mcpServers['agent-session'], { command: 'node', args: [SERVER] });
  assert.ok(text.includes('\t\t"github": {"command": "gh-mcp", "args": ["--token", "${GH_TOKEN}"]},\n'), text);
  assert.ok(text.includes('"x-note": 1.50'), text);
  assert.deepEqual(Object.keys(json.mcpServers), ['github', 'db', 'agent-session']);
  // The old file is backed up under .claude/, not in a new directory at the project's root.
  const backups = path.join(proj.dir, '.claude', '.agent-session-backups');
  assert.deepEqual(readdirSync(backups).filter((f) => f.startsWith('.mcp.json.bak-')).length, 1);
  assert.equal(
    read(
      path.join(
        backups,
        readdirSync(backups).find((f) => f.startsWith('.mcp.json.bak-')),
      ),
    ),
    OTHERS,
  );
  assert.ok(!existsSync(path.join(proj.dir, '.agent-session-backups')));
  // The hooks' settings are not touched.
  assert.ok(!existsSync(path.join(proj.dir, '.claude', 'settings.local.json')));
  assert.ok(!existsSync(path.join(proj.dir, '.claude', 'settings.json')));

  const again = await run(proj, ['install', '--mcp', '--json']);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).changed, false);
  assert.equal(read(mcpJson(proj)), text);

  // The entry starts the server, with the read-only tools the permission rules name.
  const tools = await startEntry(t, proj, json.mcpServers['agent-session']);
  assert.deepEqual(
    tools.filter((x) => x.annotations.readOnlyHint).map((x) => `mcp__agent-session__${x.name}`),
    report.permission_rules,
  );

  const removed = await run(proj, ['uninstall', '--mcp']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /Removed the agent-session MCP server from/);
  assert.equal(read(mcpJson(proj)), OTHERS);
  const twice = await run(proj, ['uninstall', '--mcp', '--json']);
  assert.equal(twice.code, 0, twice.stderr);
  assert.equal(JSON.parse(twice.stdout).changed, false);
  assert.equal(read(mcpJson(proj)), OTHERS);
});

test('install --mcp makes .mcp.json when there is none; uninstall --mcp removes it when left empty', async (t) => {
  const proj = bareProject(t);
  const dry = await run(proj, ['install', '--mcp', '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(JSON.parse(dry.stdout).mcpServers['agent-session'].args, [SERVER]);
  assert.ok(!existsSync(mcpJson(proj)), 'a dry run wrote the file');
  assert.equal((await run(proj, ['install', '--mcp'])).code, 0);
  assert.deepEqual(Object.keys(JSON.parse(read(mcpJson(proj)))), ['mcpServers']);
  const removed = await run(proj, ['uninstall', '--mcp']);
  assert.equal(removed.code, 0, removed.stderr);
  assert.ok(!existsSync(mcpJson(proj)));
});

test('a dependency is named by its path under the project (Claude Code starts it there)', async (t) => {
  const proj = dependencyProject(t);
  const own = path.join(proj.dist, 'bin', 'agent-session.js');
  const installed = await run(proj, ['install', '--mcp', '--json'], own);
  assert.equal(installed.code, 0, installed.stderr);
  assert.deepEqual(JSON.parse(installed.stdout).warnings, []);
  const entry = JSON.parse(read(mcpJson(proj))).mcpServers['agent-session'];
  assert.deepEqual(entry, { command: 'node', args: ['node_modules/agent-session/dist/bin/agent-session-mcp.js'] });
  assert.equal((await startEntry(t, proj, entry)).length, 8);
  // The build of this checkout finds the same: the project lists the package.
  const pkg = JSON.parse(read(path.join(proj.dir, 'package.json')));
  writeFileSync(
    path.join(proj.dir, 'package.json'),
    JSON.stringify({ ...pkg, devDependencies: { 'agent-session': '*' } }),
  );
  const again = await run(proj, ['install', '--mcp', '--json']);
  assert.equal(JSON.parse(again.stdout).changed, false, again.stdout);
});

test('install --mcp refuses a server of that name that is not ours, and --user', async (t) => {
  const proj = bareProject(t);
  const foreign = '{"mcpServers": {"agent-session": {"command": "python", "args": ["their_server.py"]}}}\n';
  writeFileSync(mcpJson(proj), foreign);
  const refused = await run(proj, ['install', '--mcp']);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /does not run agent-session; refusing to replace it/);
  assert.equal(read(mcpJson(proj)), foreign);
  const kept = await run(proj, ['uninstall', '--mcp']);
  assert.equal(kept.code, 0, kept.stderr);
  assert.equal(read(mcpJson(proj)), foreign);
  const user = await run(proj, ['install', '--mcp', '--user']);
  assert.equal(user.code, 2);
  assert.match(user.stderr, /~\/\.claude\.json/);
  // An mcpServers that is not an object of servers is not replaced by one: what it holds would be lost.
  for (const servers of ['[{"command": "gh-mcp"}]', '"gh-mcp"', 'null']) {
    const odd = `{"mcpServers": ${servers}}\n`;
    writeFileSync(mcpJson(proj), odd);
    const malformed = await run(proj, ['install', '--mcp']);
    assert.equal(malformed.code, 2, `${servers}: ${malformed.stderr}`);
    assert.match(malformed.stderr, /"mcpServers" is not a JSON object/);
    assert.equal(read(mcpJson(proj)), odd);
  }
});

test('an older form of our entry (agent-session mcp) is replaced, not doubled', async (t) => {
  const proj = bareProject(t);
  writeFileSync(mcpJson(proj), '{"mcpServers": {"agent-session": {"command": "agent-session", "args": ["mcp"]}}}\n');
  const installed = await run(proj, ['install', '--mcp', '--json']);
  assert.equal(installed.code, 0, installed.stderr);
  const report = JSON.parse(installed.stdout);
  assert.deepEqual(
    report.removed.map((e) => e.command),
    ['agent-session mcp'],
  );
  assert.deepEqual(JSON.parse(read(mcpJson(proj))).mcpServers, {
    'agent-session': { command: 'node', args: [SERVER] },
  });
});

test('the server bin refuses arguments it does not know instead of serving the project store', async (t) => {
  const proj = bareProject(t);
  for (const args of [['--dir'], ['--bogus'], ['--dir', 'store', 'extra'], ['--dri', 'store']]) {
    const run = await runNode(SERVER, args, { cwd: proj.dir, env: cleanEnv({ HOME: proj.home }), timeoutMs: 20_000 });
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, /usage: agent-session-mcp \[--dir <store>\]/);
    assert.equal(run.stdout, '');
  }
});
