import type { Context } from './command-context.js';

/** Below this many items the work is over before a bar would be read. */
const PROGRESS_MIN = 500;
/** At most this often the bar is redrawn: a terminal write per item would cost more than the item. */
const REDRAW_MS = 100;
const WIDTH = 30;

export interface ProgressBar {
  /** `done` of `total` items; `size`, when given, is what decides whether the work is large (default total). */
  update(done: number, total: number, size?: number): void;
  /** The work finished: ends the bar's line. */
  end(): void;
  /** The work stopped (an error or an interrupt): erases the bar, so the error's line replaces it. */
  clear(): void;
}

/**
 * A progress bar on stderr, only when stderr is a terminal and the work is large: never on stdout, never
 * when piped. `label` names the work (`export`, `import`, ...). Without a terminal, every call does nothing.
 */
export function progressBar(ctx: Context, label: string, now: () => number = Date.now): ProgressBar {
  let shown = false;
  let last = 0;
  const write = (text: string) => ctx.io.stderr(text);
  if (!ctx.io.stderrIsTTY) return { update: () => {}, end: () => {}, clear: () => {} };
  return {
    update: (done, total, size = total) => {
      if (size < PROGRESS_MIN || total <= 0) return;
      const t = now();
      if (done !== total && t - last < REDRAW_MS) return;
      last = t;
      const filled = Math.round((Math.min(done, total) / total) * WIDTH);
      write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${done}/${total}`);
      shown = true;
    },
    end: () => {
      if (shown) write('\n');
      shown = false;
    },
    clear: () => {
      if (shown) write('\r\u001b[2K');
      shown = false;
    },
  };
}
