// SessionStart: tell the main agent which paused sessions a delegation could pick up
// (tools/policy/paused-summary.ts), through the hook's additional context.
import { pausedSummary } from '../../policy/paused-summary.js';
import type { ConversationStart } from '../payload.js';
import type { HookContext } from './hook-context.js';

/**
 * Only the records of the sessions written last are read (one readdir and one stat per session,
 * then at most this many records): a conversation starts with a bounded look at the store.
 */
export const RECENT_SESSIONS = 100;

export type SessionStartResult = { kind: 'context'; text: string } | { kind: 'ignored'; why: string };

export function onSessionStart(ctx: HookContext, e: ConversationStart): SessionStartResult {
  const { sessions } = ctx;
  if (!sessions.settings.sessionStartContext) return { kind: 'ignored', why: 'session_start_context is off' };
  const records = sessions.store.recent(RECENT_SESSIONS);
  const text = pausedSummary(records, e.claudeSession, sessions.now(), sessions.rules);
  return text === null ? { kind: 'ignored', why: 'no paused session' } : { kind: 'context', text };
}
