import * as z from 'zod';
import { readAudit } from '../audit/read.js';
import { SessionError } from '../errors.js';
import { assertValidId, isValidId } from '../ids.js';
import { OUTCOMES, PHASES } from '../phases.js';
import { claudeFields } from '../policy/paused.js';
import type { SessionRecord } from '../record.js';
import { ClaudeIndex } from '../store/claude-index.js';
import { cleanup, type CleanupReport } from '../trees/cleanup.js';
import { deleteSession, type DeleteResult } from '../trees/delete.js';
import { children } from '../trees/hierarchy.js';
import { listTrash, restoreSession } from '../trees/restore.js';
import type { McpSessions } from './context.js';
import { digest, type Tokens } from './token.js';

/** What a tool call runs with. */
export interface ToolCall {
  sessions: McpSessions;
  tokens: Tokens;
  /** Aborted when the client cancels the call. */
  signal: AbortSignal;
  /** Reports progress to the client when it asked for it (a no-op otherwise). */
  progress: (done: number, total: number) => void;
  /**
   * Asks the person a yes/no question through the client (MCP elicitation): `unsupported` when the
   * client cannot, `cancel` when nobody answered (Claude Code in `-p` mode cancels at once).
   */
  confirm: (message: string) => Promise<'accept' | 'decline' | 'cancel' | 'unsupported'>;
}

export interface ToolDef {
  name: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  readOnly: boolean;
  destructive: boolean;
  run(args: never, call: ToolCall): Promise<Record<string, unknown>>;
}

/** A cutoff further back than this (about 114 years) is no date at all. */
const MAX_HOURS = 1_000_000;

/**
 * What one call may write into a record: every get_session and update_session answer carries the record
 * whole into the model's context, so an error, a summary or a metadata patch stays a note, not a file.
 */
const MAX_TEXT = 10_000;
const MAX_METADATA = 100_000;

/** Lists are cut to this many rows in a result; the counts stay whole. */
const MAX_ROWS = 100;

const id = z.string().describe('session id or Claude Code agent id');
// What the default "conversation" means is in the server's instructions, once.
const scope = z.enum(['conversation', 'project']).optional();
const row = z.looseObject({});
const rows = z.array(row);
const nullableText = z.string().nullable();

function define<I extends z.ZodObject, O extends z.ZodObject>(def: {
  name: string;
  description: string;
  input: I;
  output: O;
  readOnly: boolean;
  destructive?: boolean;
  run(args: z.output<I>, call: ToolCall): Promise<z.input<O>>;
}): ToolDef {
  return { destructive: false, ...def } as unknown as ToolDef;
}

/** The session an argument names: a session id, or the agent id of an agent bound to one. */
function sessionRef(sessions: McpSessions, ref: string): string {
  assertValidId(ref);
  if (sessions.store.has(ref)) return ref;
  const index = new ClaudeIndex(sessions.store.dir, { lockTimeoutMs: sessions.settings.lockTimeoutMs });
  return index.agentSession(ref) ?? ref;
}

function conversationOf(record: SessionRecord | undefined | null): string | null {
  return record ? (claudeFields(record)?.session_id ?? null) : null;
}

/** The scope a call works in: "project" outside Claude Code (no conversation to scope to). */
function scopeOf(sessions: McpSessions, asked: 'conversation' | 'project' | undefined) {
  return asked ?? (sessions.conversation === null ? 'project' : 'conversation');
}

/** EREFUSED when a change reaches sessions outside the calling conversation without `scope: "project"`. */
function checkScope(
  sessions: McpSessions,
  asked: 'conversation' | 'project' | undefined,
  records: { id: string; record: SessionRecord | null | undefined }[],
) {
  if (scopeOf(sessions, asked) === 'project') return;
  const outside = records.filter((r) => conversationOf(r.record) !== sessions.conversation).map((r) => r.id);
  if (outside.length === 0) return;
  throw new SessionError(
    'EREFUSED',
    `${outside.length} of these session(s) belong to another Claude Code conversation (or none): ` +
      `${outside.slice(0, 5).join(', ')}${outside.length > 5 ? ', ...' : ''}; pass scope "project" to change them`,
    { details: { reason: 'other_conversation', blocked: outside.slice(0, MAX_ROWS) } },
  );
}

function brief(r: SessionRecord) {
  return {
    id: r.agent_id,
    agent_name: r.agent_name,
    phase: r.phase,
    last_updated: r.last_updated,
    conversation: conversationOf(r),
  };
}

const listSessions = define({
  name: 'list_sessions',
  description:
    "List agent sessions, newest first, with status and resume verdict. Default: this conversation's only " +
    '(`others` counts the rest).',
  input: z.strictObject({
    scope,
    phase: z.enum(PHASES).optional(),
    agent_name: z.string().min(1).optional(),
    paused: z.boolean().optional(),
    active_only: z.boolean().optional().describe('only sessions that would resume now'),
    parent: z.string().optional().describe('only the children of this session'),
    limit: z.int().min(1).max(MAX_ROWS).optional().describe('default 20'),
    offset: z.int().min(0).optional(),
  }),
  output: z.object({
    scope: z.enum(['conversation', 'project']),
    conversation: nullableText,
    total: z.int(),
    others: z.int().describe('sessions of the project outside the scope'),
    next_offset: z.int().nullable(),
    sessions: rows,
    problems: rows.describe('unreadable records, left out'),
  }),
  readOnly: true,
  async run(args, { sessions }) {
    const where = scopeOf(sessions, args.scope);
    const { sessions: all, problems } = await sessions.list({
      phase: args.phase,
      agentName: args.agent_name,
      paused: args.paused,
      activeOnly: args.active_only,
      parent: args.parent,
    });
    const inScope =
      where === 'project' ? all : all.filter((s) => (s.claude?.session_id ?? null) === sessions.conversation);
    const offset = args.offset ?? 0;
    const limit = args.limit ?? 20;
    const page = inScope.slice(offset, offset + limit);
    return {
      scope: where,
      conversation: sessions.conversation,
      total: inScope.length,
      others: all.length - inScope.length,
      next_offset: offset + limit < inScope.length ? offset + limit : null,
      sessions: page.map((s) => ({
        id: s.agent_id,
        agent_name: s.agent_name,
        purpose: s.purpose,
        phase: s.phase,
        status: s.status,
        resume: { resume: s.resume.resume, reason: s.resume.reason },
        error_count: s.error_count,
        parent: s.parent_session_id,
        last_updated: s.last_updated,
        conversation: s.claude?.session_id ?? null,
        claude_agent_id: s.claude?.agent_id ?? null,
      })),
      // Whose they are cannot be read, so they show in every scope.
      problems: problems.slice(0, MAX_ROWS).map((p) => ({ id: p.id, code: p.code, message: p.message })),
    };
  },
});

const getSession = define({
  name: 'get_session',
  description: 'One session: record, children, resume verdict and reason, last audit entries.',
  input: z.strictObject({ id, audit: z.int().min(0).max(50).optional().describe('audit entries (default 10)') }),
  output: z.object({
    session: row,
    conversation: nullableText,
    resume: z.object({ resume: z.boolean(), reason: z.string(), detail: z.string() }),
    children: rows,
    audit: rows,
  }),
  readOnly: true,
  async run(args, { sessions }) {
    const target = sessionRef(sessions, args.id);
    const record = await sessions.get(target);
    const { resume, reason, detail } = await sessions.shouldResume(target);
    const kids = await children(sessions, target);
    const wanted = args.audit ?? 10;
    const trail = wanted === 0 ? [] : (await readAudit(sessions, { session: target })).entries.slice(-wanted);
    return {
      session: record as unknown as Record<string, unknown>,
      conversation: conversationOf(record),
      resume: { resume, reason, detail },
      children: kids.slice(0, MAX_ROWS).map((c) => ({
        id: c.agent_id,
        agent_name: c.agent_name,
        phase: c.phase,
        last_updated: c.last_updated,
      })),
      audit: trail.map((e) => ({ time: e.time, action: e.action, actor: e.actor, details: e.details })),
    };
  },
});

const updateSession = define({
  name: 'update_session',
  description: "Set a session's phase, record an error (counts against its error budget), or merge metadata.",
  input: z.strictObject({
    id,
    phase: z.enum(PHASES).optional(),
    error: z.string().min(1).max(MAX_TEXT).optional().describe('an error to record'),
    metadata: z
      .record(z.string(), z.unknown())
      .refine((patch) => JSON.stringify(patch).length <= MAX_METADATA, `at most ${MAX_METADATA} characters as JSON`)
      .optional()
      .describe('JSON merge patch for the metadata'),
    scope,
  }),
  output: z.object({ session: row }),
  readOnly: false,
  async run(args, { sessions }) {
    if (args.phase === undefined && args.error === undefined && args.metadata === undefined)
      throw new SessionError('EINVALID', 'nothing to update: give phase, error or metadata');
    const target = sessionRef(sessions, args.id);
    checkScope(sessions, args.scope, [{ id: target, record: await sessions.get(target) }]);
    const session = await sessions.update(target, {
      phase: args.phase,
      error: args.error,
      metadata: args.metadata as never,
    });
    return { session: session as unknown as Record<string, unknown> };
  },
});

const finalizeSession = define({
  name: 'finalize_session',
  description: 'Finalize a session with an outcome; it is then final and never resumed.',
  input: z.strictObject({ id, outcome: z.enum(OUTCOMES), summary: z.string().max(MAX_TEXT).optional(), scope }),
  output: z.object({ session: row }),
  readOnly: false,
  async run(args, { sessions }) {
    const target = sessionRef(sessions, args.id);
    checkScope(sessions, args.scope, [{ id: target, record: await sessions.get(target) }]);
    const session = await sessions.finalize(target, args.outcome, args.summary);
    return { session: session as unknown as Record<string, unknown> };
  },
});

const deleteOutput = z.object({
  stage: z.enum(['preview', 'blocked', 'declined', 'deleted']),
  id: z.string(),
  total: z.int(),
  counts_by_depth: z.record(z.string(), z.int()),
  bytes: z.int(),
  sessions: rows,
  blocked: rows,
  confirm_token: nullableText,
  expires_at: nullableText,
  trash_entry: nullableText,
  warnings: z.array(z.string()),
});

function deleteQuestion(preview: DeleteResult, options: { force: boolean; backup: boolean }): string {
  const ids = preview.removed.slice(0, 10).map((s) => `${s.id} (${s.agent_name ?? '?'}, ${s.phase ?? '?'})`);
  const more = preview.total > ids.length ? `, and ${preview.total - ids.length} more` : '';
  // What the person agrees to, said plainly: the running sessions a force takes, whether anything can undo it.
  const forced = options.force ? preview.warnings.filter((w) => /running/.test(w)).map((w) => ` (${w})`) : [];
  const after = options.backup
    ? 'They go to the trash (restore_session brings them back).'
    : 'They are destroyed: no backup, nothing can bring them back.';
  return `Delete ${preview.total} agent session(s): ${ids.join(', ')}${more}${forced.join('')}? ${after}`;
}

function cleanupQuestion(preview: CleanupReport, options: { backup: boolean }): string {
  const counts = [
    `purge ${preview.purged.length} finished session(s)`,
    `abandon ${preview.abandoned.length} stuck one(s)`,
    `quarantine ${preview.quarantined.length} corrupt one(s)`,
  ];
  const after = options.backup
    ? 'Purged sessions go to the trash (restore_session brings them back).'
    : 'Purged sessions are destroyed: no backup, nothing can bring them back.';
  return `Clean up older than the cutoff ${preview.cutoff}: ${counts.join(', ')}? ${after}`;
}

/** What a delete token binds: the subtree's ids, phases, last updates and the delete's options. */
function deleteSubject(result: DeleteResult, options: object): string {
  const state = result.removed.map((s) => [s.id, s.parent, s.phase, s.last_updated]);
  return `delete\n${result.id}\n${digest([options, state, result.blocked, result.work.map((w) => w.dir)])}`;
}

const deleteTool = define({
  name: 'delete_session',
  description:
    'Delete a session and its descendants into the trash (restore_session undoes it). Without confirm_token: ' +
    'a preview and a token; with it: the delete, refused if the subtree changed. force needs reason.',
  input: z.strictObject({
    id,
    confirm_token: z.string().optional(),
    force: z.boolean().optional(),
    reason: z.string().min(1).max(500).optional().describe('why; recorded in the audit trail (force needs one)'),
    preserve_work: z.boolean().optional().describe("save owned work trees' unsaved git state in the backup"),
    backup: z.boolean().optional().describe('false destroys instead of moving to the trash'),
    scope,
  }),
  output: deleteOutput,
  readOnly: false,
  destructive: true,
  async run(args, { sessions, tokens, signal, confirm, progress }) {
    if (args.force && !args.reason) throw new SessionError('EINVALID', 'force needs a reason (for the audit trail)');
    const target = sessionRef(sessions, args.id);
    const options = {
      force: args.force ?? false,
      preserveWork: args.preserve_work ?? false,
      backup: args.backup ?? true,
    };
    const preview = await deleteSession(sessions, target, { ...options, dryRun: true, signal });
    const records = await Promise.all(
      preview.removed.map(async (s) => ({ id: s.id, record: await sessions.store.read(s.id).catch(() => null) })),
    );
    checkScope(sessions, args.scope, records);
    const subject = deleteSubject(preview, options);
    const now = sessions.now();
    const listed = (r: DeleteResult) =>
      r.removed.slice(0, MAX_ROWS).map((s) => ({
        id: s.id,
        depth: s.depth,
        agent_name: s.agent_name,
        phase: s.phase,
        age_seconds: s.last_updated ? Math.max(0, Math.round((now - Date.parse(s.last_updated)) / 1000)) : null,
      }));
    const base = {
      id: target,
      total: preview.total,
      counts_by_depth: preview.counts_by_depth,
      bytes: preview.bytes,
      blocked: preview.blocked.map((b) => ({ id: b.id, reason: b.reason })),
      warnings: preview.warnings.map(inToolWords),
    };
    const shown = { ...base, sessions: listed(preview), confirm_token: null, expires_at: null, trash_entry: null };
    const blocked = preview.blocked.length > 0;
    if (args.confirm_token === undefined && blocked) return { ...shown, stage: 'blocked' as const };
    let how = 'token';
    if (args.confirm_token === undefined) {
      // A person who can be asked answers instead of the token round trip; nobody to ask: the token.
      const answer = await confirm(deleteQuestion(preview, options));
      if (answer === 'decline') return { ...shown, stage: 'declined' as const };
      if (answer !== 'accept') {
        const token = tokens.issue(subject, now);
        return { ...shown, stage: 'preview' as const, confirm_token: token.token, expires_at: token.expires_at };
      }
      // The answer took time: what is deleted must still be what the person was shown.
      const again = await deleteSession(sessions, target, { ...options, dryRun: true, signal });
      if (deleteSubject(again, options) !== subject)
        throw new SessionError('EREFUSED', 'the subtree changed while the question was open; preview again', {
          details: { reason: 'stale_token' },
        });
      how = 'elicitation';
    }
    const spent = args.confirm_token === undefined ? null : tokens.spend(args.confirm_token, subject, now);
    const audited = { confirmed: how, ...(args.reason !== undefined ? { reason: args.reason } : {}) };
    const acting = sessions.withAudit(audited);
    const onProgress = ({ done, total }: { done: number; total: number }) => progress(done, total);
    const done = await deleteSession(acting, target, { ...options, signal, onProgress }).catch((err: unknown) => {
      spent?.release();
      throw err;
    });
    return {
      ...base,
      stage: 'deleted' as const,
      total: done.total,
      counts_by_depth: done.counts_by_depth,
      bytes: done.bytes,
      sessions: listed(done),
      confirm_token: null,
      expires_at: null,
      trash_entry: done.backup?.entry ?? null,
      warnings: done.warnings.map(inToolWords),
    };
  },
});

/** The library's warnings name the CLI's flags; a tool's caller knows them as arguments. */
function inToolWords(warning: string): string {
  return warning
    .replace('--force or --force-running', 'force')
    .replace(/--force-running|--force/g, 'force')
    .replace(/--preserve-work/g, 'preserve_work');
}

const listTrashTool = define({
  name: 'list_trash',
  description: 'Trash entries (deleted or purged subtrees), newest first, for restore_session.',
  input: z.strictObject({ limit: z.int().min(1).max(MAX_ROWS).optional().describe('default 20') }),
  output: z.object({ total: z.int(), entries: rows }),
  readOnly: true,
  async run(args, { sessions }) {
    const { entries } = await listTrash(sessions);
    const newest = entries.reverse().slice(0, args.limit ?? 20);
    return {
      total: entries.length,
      entries: newest.map((e) => ({
        entry: e.entry,
        root: e.root,
        reason: e.reason,
        actor: e.actor,
        deleted_at: e.deleted_at,
        expires_at: e.expires_at,
        sessions: e.sessions,
        restorable: e.restorable,
      })),
    };
  },
});

const restoreTool = define({
  name: 'restore_session',
  description: 'Put a deleted subtree back from the trash exactly as it was.',
  input: z.strictObject({ target: z.string().describe('trash entry name or session id') }),
  output: z.object({ entry: z.string(), restored: rows, warnings: z.array(z.string()) }),
  readOnly: false,
  async run(args, { sessions, signal, progress }) {
    // Names only: a path would reach outside the trash.
    if (!isValidId(args.target))
      throw new SessionError('EINVALID', `${JSON.stringify(args.target)} is neither a session id nor a trash entry`);
    const result = await restoreSession(sessions, args.target, {
      signal,
      onProgress: ({ done, total }) => progress(done, total),
    });
    return {
      entry: result.entry,
      restored: result.restored.slice(0, MAX_ROWS),
      warnings: result.warnings,
    };
  },
});

/** What a cleanup token binds: every session it would change, with its state, and the options. */
async function cleanupSubject(sessions: McpSessions, report: CleanupReport, options: object) {
  const ids = [...report.purged.map((p) => p.id), ...report.abandoned.map((a) => a.id)];
  const records = await Promise.all(
    ids.map(async (id) => ({ id, record: await sessions.store.read(id).catch(() => null) })),
  );
  const state = records.map((r) => [r.id, r.record?.phase ?? null, r.record?.last_updated ?? null]);
  const quarantined = report.quarantined.map((q) => q.id);
  return { records, subject: `cleanup\n${digest([options, state, quarantined])}` };
}

const cleanupTool = define({
  name: 'cleanup_sessions',
  description:
    'Purge finished sessions older than hours (to the trash), abandon stuck ones, quarantine corrupt ones. ' +
    'Without confirm_token: a preview and a token; with it: the cleanup, refused if the plan changed.',
  input: z.strictObject({
    hours: z.number().min(0).max(MAX_HOURS).optional().describe('age cutoff (default: the cleanup_hours setting, 24)'),
    confirm_token: z.string().optional(),
    backup: z.boolean().optional().describe('false destroys instead of moving to the trash'),
    scope,
  }),
  output: z.object({
    stage: z.enum(['preview', 'declined', 'done']),
    cutoff: z.string(),
    scanned: z.int(),
    purged: rows,
    abandoned: rows,
    quarantined: rows,
    skipped: rows,
    kept: z.int(),
    confirm_token: nullableText,
    expires_at: nullableText,
    trash_entries: z.array(z.string()),
  }),
  readOnly: false,
  destructive: true,
  async run(args, { sessions, tokens, signal, confirm, progress }) {
    const options = { hours: args.hours ?? null, backup: args.backup ?? true };
    const run = (dryRun: boolean, acting = sessions) =>
      cleanup(acting, {
        olderThanHours: args.hours,
        backup: options.backup,
        dryRun,
        signal,
        onProgress: ({ done, total }) => progress(done, total),
      });
    const preview = await run(true);
    const { records, subject } = await cleanupSubject(sessions, preview, options);
    const now = sessions.now();
    const shape = (r: CleanupReport, stage: 'preview' | 'done') => ({
      stage,
      cutoff: r.cutoff,
      scanned: r.scanned,
      purged: r.purged.slice(0, MAX_ROWS).map((p) => ({ id: p.id, root: p.root, reason: p.reason })),
      abandoned: r.abandoned.slice(0, MAX_ROWS),
      quarantined: r.quarantined.slice(0, MAX_ROWS).map((q) => ({ id: q.id, reason: q.reason })),
      skipped: r.skipped.slice(0, MAX_ROWS),
      kept: r.kept,
      trash_entries: r.backups,
    });
    let how = 'token';
    if (args.confirm_token === undefined) {
      // As for a delete: a person who can be asked answers instead of the token round trip.
      const changes = preview.purged.length + preview.abandoned.length + preview.quarantined.length;
      const answer = changes > 0 ? await confirm(cleanupQuestion(preview, options)) : 'unsupported';
      const none = { confirm_token: null, expires_at: null };
      if (answer === 'decline') return { ...shape(preview, 'preview'), stage: 'declined' as const, ...none };
      if (answer !== 'accept') {
        const token = tokens.issue(subject, now);
        return { ...shape(preview, 'preview'), confirm_token: token.token, expires_at: token.expires_at };
      }
      checkScope(sessions, args.scope, records);
      // The answer took time: what is cleaned must still be the plan the person was shown.
      if ((await cleanupSubject(sessions, await run(true), options)).subject !== subject)
        throw new SessionError('EREFUSED', 'the plan changed while the question was open; preview again', {
          details: { reason: 'stale_token' },
        });
      how = 'elicitation';
    }
    checkScope(sessions, args.scope, records);
    const spent = args.confirm_token === undefined ? null : tokens.spend(args.confirm_token, subject, now);
    const done = await run(false, sessions.withAudit({ confirmed: how })).catch((err: unknown) => {
      spent?.release();
      throw err;
    });
    return { ...shape(done, 'done'), confirm_token: null, expires_at: null };
  },
});

export const TOOLS: ToolDef[] = [
  listSessions,
  getSession,
  updateSession,
  finalizeSession,
  deleteTool,
  listTrashTool,
  restoreTool,
  cleanupTool,
];
