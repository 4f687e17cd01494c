// SessionStart: tell the main agent which paused sessions a delegation could pick up
// (tools/policy/paused-summary.ts), through the hook's additional context.
import { pausedSummary } from '../../policy/paused-summary.js';
import type { ConversationStart } from '../payload.js';
import type { HookContext } from './hook-context.js';

/**
 * A conversation starts with a bounded look at the store: one readdir and one stat per session, then
 * the records of every session written within the longest resume window (a paused session older than
 * that cannot resume), at most RESUMABLE_CAP of them, and at least the RECENT_SESSIONS written last
 * (expired ones are listed too).
 */
export const RECENT_SESSIONS = 100;
export const RESUMABLE_CAP = 2000;

export type SessionStartResult = { kind: 'context'; text: string } | { kind: 'ignored'; why: string };

export function onSessionStart(ctx: HookContext, e: ConversationStart): SessionStartResult {
  const { sessions } = ctx;
  if (!sessions.settings.sessionStartContext) return { kind: 'ignored', why: 'session_start_context is off' };
  const { resumeWindowMs, phaseWindowsMs = {}, clockSkewMs } = sessions.rules;
  const longest = Math.max(resumeWindowMs, ...Object.values(phaseWindowsMs));
  const records = sessions.store.recent(RECENT_SESSIONS, sessions.now() - longest - clockSkewMs, RESUMABLE_CAP);
  const text = pausedSummary(records, e.claudeSession, sessions.now(), sessions.rules, ctx.cliCommand());
  return text === null ? { kind: 'ignored', why: 'no paused session' } : { kind: 'context', text };
}
