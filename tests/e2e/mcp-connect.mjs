// Measures the time Claude Code takes to connect our MCP server against a trivial server on the
// official SDK, in the same `claude -p` runs (both declared in the project's .mcp.json, their order
// swapped every run), from the debug log's "Successfully connected ... in <n>ms" lines. Not a test:
//   AGENT_SESSION_DIST=.build/<you>/dist node tests/e2e/mcp-connect.mjs [runs=9] [--cli]
// --cli starts ours as `agent-session mcp` (through the CLI) instead of its own bin.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DIST, ROOT } from '../helpers/run.mjs';
import { makeProject, runClaude } from './harness.mjs';
import { startMockApi } from './mock-api.mjs';

const runs = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 9);
const viaCli = process.argv.includes('--cli');
const sdk = (file) => pathToFileURL(join(ROOT, 'node_modules', file)).href;
const TRIVIAL = `import { McpServer } from '${sdk('@modelcontextprotocol/sdk/dist/esm/server/mcp.js')}';
import { StdioServerTransport } from '${sdk('@modelcontextprotocol/sdk/dist/esm/server/stdio.js')}';
import * as z from '${sdk('zod/index.js')}';
const server = new McpServer({ name: 'trivial', version: '1.0.0' });
server.registerTool('ping', { description: 'ping', inputSchema: { x: z.string().optional() } }, async () => ({
  content: [{ type: 'text', text: 'pong' }],
}));
await server.connect(new StdioServerTransport());
`;

const ours = viaCli
  ? { command: 'node', args: [join(DIST, 'bin', 'agent-session.js'), 'mcp'] }
  : { command: 'node', args: [join(DIST, 'bin', 'agent-session-mcp.js')] };
const times = { ours: [], trivial: [] };
const misses = { ours: 0, trivial: 0 };
const project = makeProject();
const api = await startMockApi({ script: () => ({ text: 'done' }) });
try {
  const trivial = project.writeFile('trivial.mjs', TRIVIAL);
  for (let i = 0; i < runs; i++) {
    const servers = [
      ['agent-session', ours],
      ['trivial', { command: 'node', args: [trivial] }],
    ];
    if (i % 2 === 1) servers.reverse();
    writeFileSync(join(project.dir, '.mcp.json'), JSON.stringify({ mcpServers: Object.fromEntries(servers) }));
    const debug = join(project.root, `debug-${i}.log`);
    const r = await runClaude({
      projectDir: project.dir,
      home: project.home,
      tmp: project.tmp,
      apiUrl: api.url,
      prompt: 'hi',
      args: ['--debug-file', debug],
    });
    if (r.code !== 0) throw new Error(`claude exited ${r.code}: ${r.stderr}`);
    const log = readFileSync(debug, 'utf8');
    for (const [name, key] of [
      ['agent-session', 'ours'],
      ['trivial', 'trivial'],
    ]) {
      const m = new RegExp(`MCP server "${name}": Successfully connected \\(transport: stdio\\) in (\\d+)ms`).exec(log);
      // A server still connecting when the run ends has no line: counted as a miss.
      if (m) times[key].push(Number(m[1]));
      else misses[key]++;
    }
  }
} finally {
  await api.close();
  project.cleanup();
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const o = median(times.ours);
const tr = median(times.trivial);
console.log(`runs ${runs}${viaCli ? ' (agent-session mcp)' : ''}`);
console.log(`ours    median ${o} ms  [${times.ours.join(', ')}]`);
console.log(`trivial median ${tr} ms  [${times.trivial.join(', ')}]`);
console.log(
  `ratio ${(o / tr).toFixed(2)}; not connected before the run ended: ours ${misses.ours}, trivial ${misses.trivial}`,
);
