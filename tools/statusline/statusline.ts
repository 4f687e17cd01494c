// What Claude Code's status line shows for one conversation (the `statusLine` command's stdin): its
// sessions waiting for approval, paused or running, and the project's paused sessions of other
// conversations. Claude Code runs the command whenever its screen changes, so this reads what is
// already indexed, never the whole store: the conversation's index (`.claude-code/<id>.json`) and
// the records it names, and the paused sessions the last periodic sweep listed.
import { isValidId } from '../ids.js';
import { parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';
import { isFinalPhase, isResumablePhase } from '../phases.js';
import type { Settings } from '../config.js';
import { decideResume, resumeRules, type ResumeRules } from '../policy/resume.js';
import type { SessionRecord } from '../record.js';
import { ClaudeIndex } from '../store/claude-index.js';
import { loadSettings, locateStore, resolveStoreDir, storeExists } from '../store/project.js';
import { SessionStore } from '../store/store.js';
import { readSweepReport } from '../store/sweep-stamp.js';
import { parseTimestamp } from '../time.js';

/** A conversation's index names a few sessions; past this many, the newest spawns are read. */
export const MAX_CONVERSATION_RECORDS = 200;
/** The sweep lists at most 50 paused sessions; each is looked at again (a stat) to drop those resumed since. */
const MAX_ELSEWHERE_RECORDS = 50;
const STDIN_MAX_CHARS = 1024 * 1024;

/** The fields of the status line's input that say where we are. */
export interface StatusLineInput {
  /** Claude Code's session id: the conversation. */
  conversation: string;
  /** `workspace.project_dir`: where Claude Code was started. */
  projectDir: string | null;
  cwd: string | null;
}

export interface StatusCounts {
  /** Sessions of this conversation paused in `approval` that may still resume. */
  approval: number;
  /** Sessions of this conversation paused in another phase (`investigating`, `planning`) that may resume. */
  paused: number;
  /** Sessions of this conversation whose agent is at work. */
  running: number;
  /** Paused sessions of the project outside this conversation, as of the last periodic sweep. */
  elsewhere: number;
}

/** The input, or null when it is not the JSON object Claude Code sends (a status line says nothing then). */
export function parseStatusLineInput(text: string): StatusLineInput | null {
  if (text.length > STDIN_MAX_CHARS) return null;
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch {
    return null;
  }
  if (!isPlainObject(raw) || !isValidId(raw.session_id)) return null;
  const workspace = isPlainObject(raw.workspace) ? raw.workspace : {};
  const text_ = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  return { conversation: raw.session_id, projectDir: text_(workspace.project_dir), cwd: text_(raw.cwd) };
}

/**
 * The line for `input` (stdin's text), '' when there is nothing to say: no store, no session of this
 * conversation or project paused or running, or anything wrong (a status line never shows an error).
 */
export async function statusLineText(
  stdin: string,
  where: { env: Record<string, string | undefined>; cwd: string; dir?: string },
): Promise<string> {
  try {
    if (where.env.AGENT_SESSION_DISABLE === '1') return '';
    const input = parseStatusLineInput(stdin);
    if (!input) return '';
    // Claude Code sets CLAUDE_PROJECT_DIR for the command; the input says it too when it is run by hand.
    const env =
      where.env.CLAUDE_PROJECT_DIR || !input.projectDir
        ? where.env
        : { ...where.env, CLAUDE_PROJECT_DIR: input.projectDir };
    // `dir`: the CLI's --dir, a store named by hand.
    const locate = { dir: where.dir, cwd: input.cwd ?? where.cwd, env };
    if (!storeExists(locateStore(locate).dir)) return '';
    const counts = await statusCounts(openStore(locate), input.conversation);
    // The launcher keeps V8's code cache of a run that read the store, with or without a line to show
    // (scripts/launcher.cjs): most runs find nothing to say, and they too should start from the cache.
    (globalThis as Record<symbol, unknown>)[Symbol.for('agent-session.run-worth-caching')] = true;
    return formatStatusLine(counts);
  } catch {
    return '';
  }
}

/**
 * What the status line reads through: the store and the settings, as `Sessions` has them (which it
 * satisfies), opened without the rest of `Sessions`, so the bundle Claude Code runs at every redraw
 * stays small.
 */
export interface StatusLineContext {
  readonly store: SessionStore;
  readonly settings: Settings;
  readonly rules: ResumeRules;
  now(): number;
}

function openStore(locate: Parameters<typeof locateStore>[0]): StatusLineContext {
  const settings = loadSettings(locate);
  const store = new SessionStore(resolveStoreDir(locate), { lockTimeoutMs: settings.lockTimeoutMs });
  return { store, settings, rules: resumeRules(settings), now: () => Date.now() };
}

/** The counts for one conversation of `sessions`' store. */
export async function statusCounts(sessions: StatusLineContext, conversation: string): Promise<StatusCounts> {
  const index = new ClaudeIndex(sessions.store.dir, { lockTimeoutMs: sessions.settings.lockTimeoutMs });
  const data = await index.read(conversation);
  const spawns = Object.values(data.spawns).sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  const ids = new Set<string>();
  for (const spawn of spawns) if (isValidId(spawn.session)) ids.add(spawn.session);
  for (const agent of Object.values(data.agents)) if (isValidId(agent.session)) ids.add(agent.session);
  const counts: StatusCounts = { approval: 0, paused: 0, running: 0, elsewhere: 0 };
  const now = sessions.now();
  const rules = sessions.rules;
  for (const id of [...ids].slice(0, MAX_CONVERSATION_RECORDS)) {
    const record = await readOrNothing(sessions, id);
    if (!record || isFinalPhase(record.phase) || record.finalized_at || record.phase === 'initializing') continue;
    if (!isResumablePhase(record.phase)) counts.running += 1;
    else if (decideResume(record, now, rules).resume) counts[record.phase === 'approval' ? 'approval' : 'paused'] += 1;
  }
  counts.elsewhere = await pausedElsewhere(sessions, conversation, ids, now);
  return counts;
}

/**
 * The paused sessions of other conversations that the last sweep listed: one stat each, and a read of
 * those whose record changed since the sweep's scan (resumed, finished); the others count until
 * their resume window ends. Those counted but not listed are taken as the sweep counted them.
 */
async function pausedElsewhere(
  sessions: StatusLineContext,
  conversation: string,
  own: Set<string>,
  now: number,
): Promise<number> {
  const report = readSweepReport(sessions.store.dir);
  const paused = isPlainObject(report) && isPlainObject(report.paused) ? report.paused : undefined;
  const asOf = typeof paused?.as_of === 'string' ? parseTimestamp(paused.as_of) : undefined;
  if (!paused || asOf === undefined || !Array.isArray(paused.sessions)) return 0;
  let count = 0;
  for (const entry of paused.sessions.slice(0, MAX_ELSEWHERE_RECORDS)) {
    if (!isPlainObject(entry) || !isValidId(entry.id) || own.has(entry.id) || entry.conversation === conversation)
      continue;
    const modified = sessions.store.modifiedAt(entry.id);
    if (modified === undefined) continue;
    if (modified <= asOf) {
      const expires = typeof entry.expires_at === 'string' ? parseTimestamp(entry.expires_at) : undefined;
      if (expires !== undefined && now <= expires) count += 1;
      continue;
    }
    const record = await readOrNothing(sessions, entry.id);
    if (record && record.claude?.session_id !== conversation && decideResume(record, now, sessions.rules).resume)
      count += 1;
  }
  const total = typeof paused.total === 'number' && Number.isInteger(paused.total) ? paused.total : 0;
  return count + Math.max(0, total - paused.sessions.length);
}

/** `⏸ 2 waiting for approval · ▶ 1 running`; '' when every count is zero. */
export function formatStatusLine(counts: StatusCounts): string {
  const parts: string[] = [];
  if (counts.approval > 0) parts.push(`\u23f8 ${counts.approval} waiting for approval`);
  if (counts.paused > 0) parts.push(`\u23f8 ${counts.paused} paused`);
  if (counts.running > 0) parts.push(`\u25b6 ${counts.running} running`);
  if (counts.elsewhere > 0) parts.push(`${counts.elsewhere} paused in other conversations`);
  return parts.join(' \u00b7 ');
}

async function readOrNothing(sessions: StatusLineContext, id: string): Promise<SessionRecord | undefined> {
  try {
    return await sessions.store.read(id);
  } catch {
    return undefined;
  }
}
