import { spawn } from 'node:child_process';
import type { Argv as Yargs } from 'yargs';
import { SessionError } from '../../errors.js';
import type { Argv, Context } from '../command-context.js';

interface Args {
  port?: number;
  open?: boolean;
  readOnly?: boolean;
}

export const command = 'dashboard';
export const describe =
  'Serve a live page of the store on 127.0.0.1: the tree, what waits, details, delete and restore';

export function builder(yargs: Yargs) {
  return yargs
    .option('port', { type: 'number', requiresArg: true, describe: 'Port on 127.0.0.1 (default: a free one)' })
    .option('open', { type: 'boolean', describe: "Open the page in the system's browser" })
    .option('read-only', { type: 'boolean', describe: 'Serve the page without delete and restore' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const port = argv.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new SessionError('EINVALID', `--port needs a port number from 0 to 65535, not ${String(argv.port)}`, {
      details: { usage: true },
    });
  const sessions = ctx.open(argv);
  // Loaded here: no other command pays for the server.
  const { startDashboard } = await import('../../dashboard/dashboard-server.js');
  const dashboard = await startDashboard(sessions, { port, readOnly: argv.readOnly });
  if (argv.json) await ctx.json({ url: dashboard.url, port: dashboard.port, read_only: dashboard.readOnly });
  else {
    ctx.out(`Dashboard${dashboard.readOnly ? ' (read-only)' : ''}: ${dashboard.url}`);
    ctx.out('Stop it with Ctrl-C.');
  }
  if (argv.open) openBrowser(ctx, dashboard.url);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
}

/** The system's browser, when there is one; the URL is printed either way, so a failure only warns. */
function openBrowser(ctx: Context, url: string) {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => ctx.warn(`could not open a browser (${opener}): open the URL above`));
    child.unref();
  } catch {
    ctx.warn(`could not open a browser (${opener}): open the URL above`);
  }
}
