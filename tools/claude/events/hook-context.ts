import { SessionError } from '../../errors.js';
import type { SessionRecord } from '../../record.js';
import type { AuditAction } from '../../session-context.js';
import type { Sessions } from '../../sessions.js';
import type { ClaudeIndex } from '../../store/claude-index.js';

/** What the event handlers work with; HookRun opens it on first use. */
export interface HookContext {
  sessions: Sessions;
  index: ClaudeIndex;
  /**
   * When this hook's process started (ms since the epoch): without the transcript's word, a
   * delegation whose hook started about when another one's deny was decided is a parallel one.
   */
  startedAt: number;
  /** The command that runs our CLI in the project (what the footer suggests); looked up on first use. */
  cliCommand: () => string;
}

/** Reads a record, treating a missing, corrupt or too-new one as absent (hooks fail open per session). */
export async function readOrNothing(ctx: HookContext, id: string): Promise<SessionRecord | undefined> {
  try {
    return await ctx.sessions.store.read(id);
  } catch (err) {
    if (err instanceof SessionError && ['ECORRUPT', 'EVERSION', 'EINVALID'].includes(err.code)) return undefined;
    throw err;
  }
}

/**
 * Applies `change` under the session's lock; a session removed meanwhile is `undefined`, not an error.
 * The audit line carries `details`, or else the change's result.
 */
export async function changeSession<T>(
  ctx: HookContext,
  id: string,
  action: AuditAction,
  change: (record: SessionRecord) => { record: SessionRecord; result: T },
  details?: Record<string, unknown>,
): Promise<T | undefined> {
  let result: T | undefined;
  try {
    // The audit line is written under the session's lock, so its order matches the order of the writes.
    await ctx.sessions.store.update(
      id,
      (record) => {
        const next = change(record);
        result = next.result;
        return next.record;
      },
      () => ctx.sessions.audit(action, [id], details ?? { result: result as unknown }),
    );
  } catch (err) {
    if (err instanceof SessionError && err.code === 'ENOTFOUND') return undefined;
    throw err;
  }
  return result;
}
