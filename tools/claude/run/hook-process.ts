import { SessionError } from '../../errors.js';
import { Sessions } from '../../sessions.js';
import { ClaudeIndex } from '../../store/claude-index.js';
import { appendHookLog } from '../../store/hook-log.js';
import { recordHookRun } from '../../store/hook-runs.js';
import { resolveStoreDir } from '../../store/project.js';
import { formatTimestamp } from '../../time.js';
import type { HookContext } from '../events/hook-context.js';
import { ownCliCommandFrom } from '../own-cli.js';

/** One hook process: where its store is, what it logs, and (lazily) the sessions it works on. */
export class HookRun {
  readonly name: string;
  readonly debug: boolean;
  /** Claude Code sets CLAUDECODE=1 for hook processes; orchestrators calling us directly usually do not. */
  readonly underClaude: boolean;
  readonly diagnostics: string[] = [];
  event = '-';
  /** The last problem the run failed open on, for its last-run record. */
  failure: { code: string; message: string } | undefined;
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
      let command: string | undefined;
      const cliCommand = () => (command ??= ownCliCommandFrom(this.cwd, this.env));
      this.opened = { sessions, index, startedAt: Date.now() - process.uptime() * 1000, cliCommand };
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
    this.failure = { code, message: message.slice(0, 500) };
    const store = this.storeDir();
    const logged = store !== undefined && (await appendHookLog(store, line.slice(0, 2000)));
    this.note(`failing open: ${code}: ${message}${logged ? '' : ' (the hook log could not be written)'}`);
    if (this.debug && err instanceof Error && err.stack) this.diagnostics.push(err.stack);
  }

  /** Records this run as its event's last one (`status` shows it): one small write in place, never throws. */
  finished(outcome: string | undefined): void {
    const now = Date.now();
    const store = this.storeDir();
    if (store === undefined) return;
    recordHookRun(store, {
      event: this.event === '-' ? 'unknown' : this.event,
      hook: this.name,
      time: formatTimestamp(now),
      outcome: this.failure || outcome === undefined ? 'failed' : outcome,
      ...(this.failure ?? {}),
      // From the start of the process: what the run cost Claude Code.
      duration_ms: Math.round(process.uptime() * 1000),
      pid: process.pid,
    });
  }

  /** Undefined when there is no store to write to (CLAUDE_PROJECT_DIR naming no directory). */
  private storeDir(): string | undefined {
    try {
      return this.opened?.sessions.store.dir ?? resolveStoreDir({ cwd: this.cwd, env: this.env });
    } catch {
      return undefined;
    }
  }
}
