import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import type { Argv as Yargs } from 'yargs';
import type { Argv } from '../command-context.js';

export const command = 'mcp';
export const describe = 'Serve the MCP server on stdin/stdout (for Claude Code: install --mcp)';

export function builder(yargs: Yargs) {
  return yargs;
}

interface McpModule {
  serveMcp(options: { dir?: string; cwd: string; env: Record<string, string | undefined> }): Promise<void>;
}

export async function handler(argv: Argv<object>) {
  const { io } = argv.ctx;
  await (await loadServer()).serveMcp({ dir: argv.dir, cwd: io.cwd, env: io.env });
}

/**
 * The server is a bundle of its own (the MCP SDK is large): the other commands never load it. From
 * the CLI's bundle it is loaded through its launcher, which gives it V8's code cache; from the
 * transpiled library, as a module. The names are computed so that the bundler leaves them alone.
 */
async function loadServer(): Promise<McpModule> {
  const here = import.meta.filename;
  if (basename(dirname(here)) === 'bundles') {
    return createRequire(here)(join(dirname(dirname(here)), 'agent-session-mcp.js')) as McpModule;
  }
  const library = ['..', '..', 'mcp', 'serve.js'].join('/');
  return (await import(library)) as McpModule;
}
