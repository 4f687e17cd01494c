// Measures what a no-op hook costs Claude Code per event, as a `command` hook (`node <empty file>`)
// and as an `mcp_tool` hook (a no-op tool of a connected SDK server), in the same runs: the scripted
// model makes three Bash calls, and the time from the mock answering with each tool_use to the
// request carrying its result (PreToolUse hook, the Bash call, PostToolUse hook) is compared with
// runs that have no hook; half the difference is the cost per event. Configurations interleaved.
// Not a test:   node tests/e2e/mcp-hook-cost.mjs [rounds=5]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/run.mjs';
import { makeProject, runClaude } from './harness.mjs';
import { startMockApi } from './mock-api.mjs';

const rounds = Number(process.argv[2] ?? 5);
const CALLS = 3;
const sdk = (file) => pathToFileURL(join(ROOT, 'node_modules', file)).href;
const project = makeProject();
const server = project.writeFile(
  'noop-server.mjs',
  `import { McpServer } from '${sdk('@modelcontextprotocol/sdk/dist/esm/server/mcp.js')}';
import { StdioServerTransport } from '${sdk('@modelcontextprotocol/sdk/dist/esm/server/stdio.js')}';
const server = new McpServer({ name: 'noop', version: '1.0.0' });
server.registerTool('noop', { description: 'noop' }, async () => ({ content: [{ type: 'text', text: '' }] }));
await server.connect(new StdioServerTransport());
`,
);
const noop = project.writeFile('noop.cjs', '');
writeFileSync(
  join(project.dir, '.mcp.json'),
  JSON.stringify({ mcpServers: { noop: { command: 'node', args: [server] } } }),
);
const HOOKS = {
  none: null,
  command: { type: 'command', command: `node ${noop}`, timeout: 10 },
  mcp_tool: { type: 'mcp_tool', server: 'noop', tool: 'noop', input: { s: '${session_id}' }, timeout: 10 },
};
const gaps = Object.fromEntries(Object.keys(HOOKS).map((k) => [k, []]));
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, hook] of Object.entries(HOOKS)) {
      const group = { matcher: 'Bash', hooks: [hook] };
      project.writeSettings(hook ? { hooks: { PreToolUse: [group], PostToolUse: [group] } } : {});
      let n = 0;
      const api = await startMockApi({
        script: () =>
          ++n <= CALLS
            ? { toolUse: { name: 'Bash', input: { command: 'true', description: 'noop' } } }
            : { text: 'done' },
      });
      const r = await runClaude({
        projectDir: project.dir,
        home: project.home,
        tmp: project.tmp,
        apiUrl: api.url,
        prompt: 'hi',
        args: ['--allowedTools', 'Bash'],
      });
      await api.close();
      if (r.code !== 0) throw new Error(`claude exited ${r.code}: ${r.stderr}`);
      const main = api.requests.filter((q) => q.kind === 'main').map((q) => q.at);
      for (let i = 1; i < main.length; i++) gaps[name].push(main[i] - main[i - 1]);
    }
  }
} finally {
  project.cleanup();
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const base = median(gaps.none);
console.log(`rounds ${rounds}, ${CALLS} Bash calls each; median time from a tool_use to its result:`);
for (const [name, list] of Object.entries(gaps)) {
  const m = median(list);
  const perEvent = name === 'none' ? '' : `, per event ${((m - base) / 2).toFixed(0)} ms`;
  console.log(`  ${name.padEnd(8)} ${m} ms (${list.length} calls)${perEvent}`);
}
