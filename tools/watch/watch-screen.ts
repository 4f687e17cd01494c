// The terminal side of `watch`: the alternate screen, the keys, redraws on a change, a resize or the clock,
// and the screen, cursor and terminal mode given back however it ends (q, Ctrl-C, a signal, an error).
import { followAudit } from '../audit/follow.js';
import type { AuditEntry } from '../audit/entry.js';
import type { Palette } from '../cli/colour.js';
import type { SessionContext } from '../session-context.js';
import { layoutWatch } from './watch-layout.js';
import { WatchModel, type WatchSnapshot } from './watch-model.js';

/** What `watch` needs of a terminal; the bin passes one made of its own stdin and stdout. */
export interface Terminal {
  size(): { columns?: number; rows?: number };
  write(text: string): void;
  /** Hands each key pressed to `onKey` (raw mode, when stdin is a terminal); the function returned undoes it. */
  keys(onKey: (key: string) => void): () => void;
  /** Calls `listener` when the terminal is resized; the function returned stops it. */
  onResize(listener: () => void): () => void;
}

export interface WatchOptions {
  palette: Palette;
  /** The store's directory, for the title line. */
  store: string;
  /** Ends the watch (SIGINT, SIGTERM) as `q` does. */
  signal?: AbortSignal;
  /** How often the audit trail is polled (default 100 ms). */
  intervalMs?: number;
}

// Alternate screen on, cursor hidden, cleared; and the reverse.
const ENTER = '\u001b[?1049h\u001b[?25l\u001b[H\u001b[2J';
const LEAVE = '\u001b[?25h\u001b[?1049l';
/** Ages on screen count seconds: redrawn this often even when nothing changed (only if the frame differs). */
const TICK_MS = 1000;
/**
 * Between changes, what depends on the clock alone (whether a paused session would resume now, what finished
 * today) is worked out again this often: on a store with thousands open, not at every tick.
 */
const SNAPSHOT_MS = 10_000;
const CTRL_C = '\u0003';

/** Runs until `q`, Ctrl-C or `signal`; rejects with the error that stopped it, once the screen is restored. */
export async function watchSessions(ctx: SessionContext, terminal: Terminal, options: WatchOptions): Promise<void> {
  const model = new WatchModel(ctx);
  const stop = new AbortController();
  let failure: unknown;
  const fail = (err: unknown) => {
    failure ??= err;
    stop.abort();
  };
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort);
  let approvalOnly = false;
  let shown = '';
  let snapshot: { taken: number; value: WatchSnapshot } | undefined;
  const draw = () => {
    if (stop.signal.aborted) return;
    const { columns, rows } = terminal.size();
    const now = ctx.now();
    if (!snapshot || now - snapshot.taken >= SNAPSHOT_MS) snapshot = { taken: now, value: model.snapshot(now) };
    const lines = layoutWatch({
      snapshot: snapshot.value,
      now,
      width: columns || 80,
      height: rows || 24,
      palette: options.palette,
      approvalOnly,
      store: options.store,
    });
    // Home, each line then the rest of it erased, then the rest of the screen: no flicker of a full clear.
    const frame = `\u001b[H${lines.map((line) => `${line}\u001b[K`).join('\r\n')}\u001b[J`;
    if (frame !== shown) terminal.write(frame);
    shown = frame;
  };
  const changes = changeQueue(model, () => guard(() => ((snapshot = undefined), draw()), fail), fail);
  const onKeys = (keys: string) => {
    // An escape sequence (an arrow, a function key) is no command, though it ends in a letter.
    if (keys.startsWith('\u001b')) return;
    for (const key of keys) {
      if (key === 'q' || key === 'Q' || key === CTRL_C) return stop.abort();
      if (key === 'a' || key === 'A') [approvalOnly, shown] = [!approvalOnly, ''];
    }
    draw();
  };
  let undoKeys = () => {};
  let undoResize = () => {};
  let tick: NodeJS.Timeout | undefined;
  try {
    terminal.write(ENTER);
    undoKeys = terminal.keys((keys) => guard(() => onKeys(keys), fail));
    undoResize = terminal.onResize(() => guard(() => ((shown = ''), draw()), fail));
    tick = setInterval(() => guard(draw, fail), TICK_MS);
    // The trail is tailed from its end before the store is read: a change made in between is read twice, not lost.
    const following = followAudit(ctx, { signal: stop.signal, intervalMs: options.intervalMs, onEntry: changes.add });
    following.catch(fail);
    if (!options.signal?.aborted) {
      model.loadAll();
      snapshot = undefined;
      draw();
    }
    await following.catch(() => undefined);
    await changes.idle();
  } finally {
    // An error in the first read leaves the trail's poll running: stopped here, or the process would never end.
    stop.abort();
    clearInterval(tick);
    undoResize();
    undoKeys();
    options.signal?.removeEventListener('abort', onAbort);
    terminal.write(LEAVE);
  }
  if (failure !== undefined) throw failure;
}

/**
 * Entries as they come, applied one batch at a time: the sessions they name are read again (or the whole
 * store, for a bulk change), then the screen is drawn once for the batch.
 */
function changeQueue(model: WatchModel, redraw: () => void, fail: (err: unknown) => void) {
  let pending: AuditEntry[] = [];
  let running: Promise<void> = Promise.resolve();
  let scheduled = false;
  const apply = async () => {
    scheduled = false;
    const entries = pending;
    pending = [];
    const { all, ids } = WatchModel.changedBy(entries);
    if (all) model.loadAll();
    else await model.refresh(ids);
    redraw();
  };
  return {
    add: (entry: AuditEntry) => {
      pending.push(entry);
      if (scheduled) return;
      scheduled = true;
      running = running.then(apply).catch(fail);
    },
    idle: () => running,
  };
}

function guard(run: () => void, fail: (err: unknown) => void): void {
  try {
    run();
  } catch (err) {
    fail(err);
  }
}
