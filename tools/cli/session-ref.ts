import { isValidId } from '../ids.js';
import type { Sessions } from '../sessions.js';
import { ClaudeIndex } from '../store/claude-index.js';

/**
 * The session a command argument names: a session id, or the Claude Code agent id of an agent bound
 * to a session (SubagentStart's `agent_id`, what `SendMessage` takes). One stat, then at most one
 * small file read (`.claude-code/agents/<agent id>`), never a scan. An id that names neither comes
 * back as given, so the command's own not-found error names what the user typed; a malformed one
 * also comes back as given, for the command's own validation error.
 */
export function resolveSessionRef(sessions: Sessions, ref: string): string {
  if (!isValidId(ref) || sessions.store.has(ref)) return ref;
  const index = new ClaudeIndex(sessions.store.dir, { lockTimeoutMs: sessions.settings.lockTimeoutMs });
  return index.agentSession(ref) ?? ref;
}
