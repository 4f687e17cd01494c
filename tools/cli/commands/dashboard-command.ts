import type { Argv as Yargs } from 'yargs';
import { SessionError } from '../../errors.js';
import type { Argv, Context } from '../command-context.js';
import { openExisting } from '../store-origin.js';
import { builtinModule } from '../../builtin.js';

interface Args {
  /** Text, not a yargs number: a bad value is quoted as given. */
  port?: string;
  open?: boolean;
  readOnly?: boolean;
}

export const command = 'dashboard';
export const describe =
  'Serve a live page of the store on 127.0.0.1: the tree, what waits, details, delete and restore';

export function builder(yargs: Yargs) {
  return yargs
    .option('port', { type: 'string', requiresArg: true, describe: 'Port on 127.0.0.1 (default: a free one)' })
    .option('open', { type: 'boolean', describe: "Open the page in the system's browser" })
    .option('read-only', { type: 'boolean', describe: 'Serve the page without delete and restore' });
}

export async function handler(argv: Argv<Args>) {
  const { ctx } = argv;
  const port = argv.port === undefined ? 0 : /^\d{1,5}$/.test(argv.port) ? Number(argv.port) : NaN;
  if (!(port <= 65535))
    throw new SessionError('EINVALID', `--port needs a port number from 0 to 65535, not ${JSON.stringify(argv.port)}`, {
      details: { usage: true },
    });
  // A store that does not exist is refused as by list and stats: most likely a wrong --dir or project.
  const sessions = openExisting(argv);
  // Loaded here: no other command pays for the server.
  const { startDashboard } = await import('../../dashboard/dashboard-server.js');
  const dashboard = await startDashboard(sessions, { port, readOnly: argv.readOnly });
  if (argv.json) await ctx.json({ url: dashboard.url, port: dashboard.port, read_only: dashboard.readOnly });
  else {
    ctx.out(`Dashboard${dashboard.readOnly ? ' (read-only)' : ''}: ${dashboard.url}`);
    ctx.out('Stop it with Ctrl-C.');
  }
  if (argv.open) openBrowser(ctx, dashboard.launchUrl());
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
}

/**
 * The system's browser, when there is one; the URL is printed either way, so a failure only warns: an
 * opener that is missing, or that exits non-zero (xdg-open exits 3 when it finds no browser).
 */
function openBrowser(ctx: Context, url: string) {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  let warned = false;
  // Once: a child that fails to start may report both an error and an exit.
  const warn = (why: string) => {
    if (!warned) ctx.warn(`cannot open a browser: ${why}; open the URL yourself`);
    warned = true;
  };
  try {
    // Loaded here: node:child_process costs every CLI run about 1.5 ms at start-up.
    const { spawn } = builtinModule('node:child_process');
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', (err) => warn(`${opener}: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    child.on('exit', (code, signal) => {
      if (code !== 0) warn(`${opener} exited with ${code ?? signal}`);
    });
    child.unref();
  } catch (err) {
    warn(`${opener}: ${String(err)}`);
  }
}
