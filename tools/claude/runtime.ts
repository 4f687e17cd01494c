import { SessionError } from '../errors.js';
import { JsonTooDeepError, parseJson as parseBounded } from '../json.js';
import { Sessions } from '../sessions.js';
import { ClaudeIndex } from '../store/claude-index.js';
import { appendHookLog } from '../store/hook-log.js';
import { toolUseMessagesSince, transcriptExists, transcriptMark } from '../store/transcript.js';
import { resolveStoreDir } from '../store/project.js';
import { readStdinSync, type StdinResult } from '../store/stdin.js';
import { formatTimestamp } from '../time.js';
import type { HookContext } from './context.js';

export { writeAllSync } from '../store/stdin.js';

export type { StdinResult };

/** Hook payloads are a few KiB; anything over 1 MiB is not one of them and is not parsed. */
export const STDIN_MAX_BYTES = 1024 * 1024;

/** Reads stdin to its end, giving up (without buffering more) once it passes `max` bytes. */
export async function readStdin(
  stream: () => AsyncIterable<Buffer | string>,
  max: number = STDIN_MAX_BYTES,
): Promise<StdinResult> {
  // `process.stdin` is only touched (and Node's stream machinery loaded) when plain reads cannot be used.
  const direct = readStdinSync(max);
  if (direct) return direct;
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream()) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    bytes += buffer.length;
    if (bytes > max) return { ok: false, bytes };
    chunks.push(buffer);
  }
  return { ok: true, text: Buffer.concat(chunks).toString('utf8') };
}

/**
 * Tells the launcher (scripts/launcher.cjs) that this run did a hook's real work (a delegation
 * recorded, an event applied). V8's code cache holds what the run that wrote it compiled, so the
 * launcher writes it only after such a run: a first run that merely ignored an event would otherwise
 * leave every later run compiling most of the library anew.
 */
export function markRunWorthCaching(): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for('agent-session.run-worth-caching')] = true;
}

export type JsonResult = { ok: true; value: unknown } | { ok: false; error: SessionError };

export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: parseBounded(text) };
  } catch (err) {
    // Deep nesting would overflow the stack later (writing the answer), outside any catch.
    if (err instanceof JsonTooDeepError)
      return { ok: false, error: new SessionError('EINVALID', `stdin is ${err.message}`, { cause: err }) };
    const what = text.trim() === '' ? 'stdin is empty' : `stdin is not valid JSON (${(err as Error).message})`;
    return { ok: false, error: new SessionError('EINVALID', what, { cause: err }) };
  }
}

/** One hook process: where its store is, what it logs, and (lazily) the sessions it works on. */
export class HookRun {
  readonly name: string;
  readonly debug: boolean;
  /** Claude Code sets CLAUDECODE=1 for hook processes; orchestrators calling us directly usually do not. */
  readonly underClaude: boolean;
  readonly diagnostics: string[] = [];
  event = '-';
  private readonly env: Record<string, string | undefined>;
  private readonly cwd: string;
  private opened: HookContext | undefined;

  constructor(name: string, env: Record<string, string | undefined>, cwd: string) {
    this.name = name;
    this.env = env;
    this.cwd = cwd;
    this.debug = env.AGENT_SESSION_DEBUG === '1';
    this.underClaude = env.CLAUDECODE === '1';
  }

  /** Opens the store and settings on first use (a bad config file throws here, and the hook fails open). */
  context(): HookContext {
    if (!this.opened) {
      const sessions = Sessions.open({ cwd: this.cwd, env: this.env, actor: 'hook' });
      const index = new ClaudeIndex(sessions.store.dir, { lockTimeoutMs: sessions.settings.lockTimeoutMs });
      // process.uptime() counts from the start of the process, before Claude Code's payload was read.
      this.opened = {
        sessions,
        index,
        transcriptExists,
        transcriptMark,
        toolUseMessagesSince,
        startedAt: Date.now() - process.uptime() * 1000,
      };
    }
    return this.opened;
  }

  note(line: string): void {
    if (this.debug) this.diagnostics.push(`agent-session ${this.name}: ${line}`);
  }

  /** Records a problem the hook is failing open on: one line in the store's hook log. */
  async problem(err: unknown): Promise<void> {
    const code = err instanceof SessionError ? err.code : 'EINTERNAL';
    const message = err instanceof Error ? err.message : String(err);
    const line = `${formatTimestamp(Date.now())} ${this.name} ${this.event} pid=${process.pid} ${code}: ${message}`;
    const logged = await appendHookLog(this.storeDir(), line.slice(0, 2000));
    this.note(`failing open: ${code}: ${message}${logged ? '' : ' (the hook log could not be written)'}`);
    if (this.debug && err instanceof Error && err.stack) this.diagnostics.push(err.stack);
  }

  storeDir(): string {
    return this.opened?.sessions.store.dir ?? resolveStoreDir({ cwd: this.cwd, env: this.env });
  }
}
