import type { Argv as Yargs } from 'yargs';
import { SessionError } from '../../errors.js';
import { watchSessions } from '../../watch/watch-screen.js';
import type { Argv } from '../command-context.js';

export const command = 'watch';
export const describe = 'A live view of the running and paused sessions, in the terminal (q quits, a: approval only)';

export function builder(yargs: Yargs) {
  // A screen, not a document: --json is refused (below), so help does not offer it.
  return yargs.hide('json');
}

export async function handler(argv: Argv<object>) {
  const { ctx } = argv;
  const terminal = ctx.io.terminal;
  // A screen redrawn in place means nothing in a file or a pipe: say what to use there instead.
  if (!ctx.io.isTTY || !terminal || argv.json)
    throw new SessionError(
      'EREFUSED',
      `watch draws on a terminal${argv.json ? ' and has no --json' : ' and stdout is not one'}; for scripts use ` +
        '`agent-session stats --json` (figures) or `agent-session audit --follow` (changes as they happen)',
    );
  // Like audit --follow, it may start before the first delegation creates the store: it waits for it.
  const sessions = ctx.open(argv);
  const controller = new AbortController();
  const stop = () => controller.abort();
  ctx.io.signals?.on('SIGINT', stop);
  ctx.io.signals?.on('SIGTERM', stop);
  try {
    await watchSessions(sessions, terminal, {
      palette: ctx.style.palette,
      store: sessions.store.dir,
      signal: controller.signal,
    });
  } finally {
    ctx.io.signals?.off('SIGINT', stop);
    ctx.io.signals?.off('SIGTERM', stop);
  }
}
