import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createServer } from './server.js';

declare const AGENT_SESSION_VERSION: string;

export interface ServeOptions {
  dir?: string;
  cwd?: string;
  env?: Record<string, string | undefined>;
}

/**
 * Serves the MCP server on stdin/stdout until the client closes them. The entry of its own bundle
 * (dist/bin/bundles/agent-session-mcp.cjs), so the CLI's other commands never load the MCP SDK:
 * `agent-session mcp` loads this bundle and calls `serveMcp`; `agent-session-mcp` runs it directly.
 */
export async function serveMcp(options: ServeOptions = {}): Promise<void> {
  const version = typeof AGENT_SESSION_VERSION === 'string' ? AGENT_SESSION_VERSION : '0.0.0';
  const server = createServer({
    dir: options.dir,
    cwd: options.cwd ?? process.cwd(),
    env: options.env ?? process.env,
    version,
  });
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  // The transport does not end the process when the client goes away: stdin's end does.
  process.stdin.once('end', () => void server.close());
  await closed;
}

/** Started directly (the bin), not loaded by the CLI: `--dir <store>` is the one option. */
export function runMcpMain(argv: string[]): void {
  const [flag, dir, ...rest] = argv;
  // A typo in .mcp.json's args must not quietly serve another store (the project's) than the one meant.
  if (argv.length > 0 && (flag !== '--dir' || !dir || dir.startsWith('-') || rest.length > 0)) {
    process.stderr.write(`agent-session-mcp: usage: agent-session-mcp [--dir <store>] (got ${JSON.stringify(argv)})\n`);
    process.exit(2);
  }
  serveMcp({ dir }).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`agent-session mcp: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
