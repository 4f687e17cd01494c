import { PROGRAM } from '../errors.js';
import type { Context, StopSignal } from './command-context.js';
import { EXIT } from './exit-codes.js';

const NAMES: StopSignal[] = ['SIGINT', 'SIGTERM'];

/**
 * Runs a bulk command so that SIGINT or SIGTERM stops it at its next safe point: the library throws
 * EINTERRUPTED (exit 130) and its `finally` blocks release the locks. A second signal while it stops
 * exits at once (`onExit` first, to clear a progress line); the `exit` handler of the locks still
 * removes them. Other commands keep Node's default: they are short, and hold nothing across a signal.
 */
export async function interruptible<T>(
  ctx: Context,
  run: (signal: AbortSignal) => Promise<T>,
  onExit?: () => void,
): Promise<T> {
  const controller = new AbortController();
  const source = ctx.io.signals;
  if (!source) return run(controller.signal);
  const listener = () => {
    if (!controller.signal.aborted) return controller.abort();
    onExit?.();
    ctx.io.stderr(`${PROGRAM}: interrupted again: stopped at once; run it again to finish\n`);
    source.exit(EXIT.interrupted);
  };
  for (const name of NAMES) source.on(name, listener);
  try {
    return await run(controller.signal);
  } finally {
    for (const name of NAMES) source.off(name, listener);
  }
}
