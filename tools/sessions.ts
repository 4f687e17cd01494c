import { formatEntry } from './audit/entry.js';
import type { Settings } from './config.js';
import type { Actor, ListResult, SessionContext } from './session-context.js';
import { SessionError, toSessionError } from './errors.js';
import { assertValidId, generateId } from './ids.js';
import type { JsonObject } from './merge-patch.js';
import type { Outcome } from './phases.js';
import {
  applyFinalize,
  applyUpdate,
  newRecord,
  validateFinalize,
  validateUpdate,
  type UpdateRequest,
} from './policy/lifecycle.js';
import { decideResume, resumeRules, type ResumeDecision, type ResumeRules } from './policy/resume.js';
import { checkFilter, sessionSelection, type ListFilter } from './policy/selection.js';
import type { SessionRecord } from './record.js';
import { AuditLog } from './store/audit-log.js';
import { loadSettings, resolveStoreDir } from './store/project.js';
import { ChildrenIndex } from './store/children-index.js';
import { notFound, SessionStore } from './store/store.js';
import { checkOptions, type OptionKeys } from './options.js';

export interface SessionsOptions {
  /** The store directory; see SESSION_README.md for how it is found otherwise. */
  dir?: string;
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** The clock, in epoch milliseconds. */
  now?: () => number;
  settings?: Partial<Settings>;
  /** Who makes the changes, for the audit trail. */
  actor?: Actor;
}

export interface CreateInput {
  agentName: string;
  purpose?: string | null;
  metadata?: JsonObject;
  parent?: string | null;
  id?: string;
  /** Claude Code's ids (the hooks set it at creation). */
  claude?: JsonObject;
}

const OPEN_KEYS: OptionKeys<SessionsOptions> = {
  dir: true,
  cwd: true,
  env: true,
  now: true,
  settings: true,
  actor: true,
};
const CREATE_KEYS: OptionKeys<CreateInput> = {
  agentName: true,
  purpose: true,
  metadata: true,
  parent: true,
  id: true,
  claude: true,
};
const UPDATE_KEYS: OptionKeys<UpdateRequest> = { phase: true, metadata: true, error: true, event: true };

export interface ShouldResumeResult extends ResumeDecision {
  session: SessionRecord | null;
}

/**
 * One store opened with its settings: the lifecycle of single sessions (create, update, finalize,
 * get, shouldResume, list) as methods, and the context (store, settings, actor, clock, audit trail)
 * that the operations on trees and on the whole store take as their first argument: deleteSession,
 * restoreSession, tree, cleanup, exportSessions, importSessions, doctor, readAudit and the others
 * exported by tools/index.ts are functions, not methods.
 */
export class Sessions implements SessionContext {
  readonly store: SessionStore;
  readonly settings: Settings;
  readonly actor: Actor;
  readonly auditLog: AuditLog;
  readonly auditErrors: SessionError[] = [];
  private readonly clock: () => number;

  constructor(store: SessionStore, settings: Settings, clock: () => number = Date.now, actor: Actor = 'api') {
    this.store = store;
    this.settings = settings;
    this.clock = clock;
    this.actor = actor;
    const { auditMaxBytes, auditKeep, lockTimeoutMs } = settings;
    this.auditLog = new AuditLog(store.dir, { maxBytes: auditMaxBytes, keep: auditKeep, lockTimeoutMs });
  }

  static open(options: SessionsOptions = {}): Sessions {
    checkOptions(options, OPEN_KEYS, 'Sessions.open');
    const locate = { dir: options.dir, cwd: options.cwd ?? process.cwd(), env: options.env ?? process.env };
    const settings = loadSettings(locate, options.settings);
    const store = new SessionStore(resolveStoreDir(locate), { lockTimeoutMs: settings.lockTimeoutMs });
    return new Sessions(store, settings, options.now, options.actor);
  }

  now(): number {
    return this.clock();
  }

  /**
   * Appends one entry to the store's audit trail; every change to the store calls it. Never throws:
   * the change it records is already made, and failing it would invite a retry that repeats it.
   * Failures are kept in `auditErrors` (the last 20). Callers may record actions of their own; the
   * operations of this package take the context, whose `audit` takes only AUDIT_ACTIONS.
   */
  async audit(action: string, ids: string[], details: Record<string, unknown> = {}): Promise<void> {
    try {
      await this.auditLog.append(
        formatEntry({
          time: this.clock(),
          action,
          ids,
          actor: this.actor,
          pid: process.pid,
          details: this.auditDetails(details),
        }),
      );
    } catch (err) {
      this.auditErrors.push(toSessionError(err, 'writing the audit trail'));
      if (this.auditErrors.length > 20) this.auditErrors.shift();
    }
  }

  /** Several entries in one append, made durable together (the batches of cleanup and delete). */
  async auditBatch(entries: { action: string; ids: string[]; details?: Record<string, unknown> }[]): Promise<void> {
    if (entries.length === 0) return;
    try {
      const time = this.clock();
      const lines = entries.flatMap((e) =>
        formatEntry({
          time,
          action: e.action,
          ids: e.ids,
          actor: this.actor,
          pid: process.pid,
          details: this.auditDetails(e.details ?? {}),
        }),
      );
      await this.auditLog.append(lines, true);
    } catch (err) {
      this.auditErrors.push(toSessionError(err, 'writing the audit trail'));
      if (this.auditErrors.length > 20) this.auditErrors.shift();
    }
  }

  /** The details every entry of this context carries; a context that adds its own (the MCP server's) overrides it. */
  protected auditDetails(details: Record<string, unknown>): Record<string, unknown> {
    return details;
  }

  get rules(): ResumeRules {
    return resumeRules(this.settings);
  }

  async create(input: CreateInput): Promise<SessionRecord> {
    checkOptions(input, CREATE_KEYS, 'create');
    const now = this.clock();
    const id = input.id ?? generateId(new Date(now));
    const record = newRecord({ ...input, id }, now);
    if (input.claude) record.claude = input.claude;
    const audited = () =>
      this.audit('create', [id], {
        agent_name: record.agent_name,
        parent: record.parent_session_id,
        purpose: record.purpose,
      });
    // The index marker goes before the record: a crash leaves a stale marker (ignored), never an unindexed child.
    const index = new ChildrenIndex(this.store.dir);
    const parent = record.parent_session_id;
    if (parent === null) {
      await index.add(null, id);
      return this.store.create(record, audited);
    }
    // Holding the parent's lock keeps a concurrent delete from orphaning the new child; a missing
    // parent fails here, before any marker is written. update() resolves to the parent's record.
    await this.store
      .update(parent, async (current) => {
        await index.add(parent, id);
        await this.store.create(record, audited);
        return current;
      })
      .catch((err) => {
        if (err instanceof SessionError && err.code === 'ENOTFOUND' && err.details.id === parent) {
          throw new SessionError('EINVALID', `parent session ${parent} does not exist`, { details: { id: parent } });
        }
        throw err;
      });
    return record;
  }

  async update(id: string, request: UpdateRequest): Promise<SessionRecord> {
    assertValidId(id);
    checkOptions(request, UPDATE_KEYS, 'update');
    validateUpdate(request);
    return this.store.update(
      id,
      (record) => applyUpdate(record, request, this.clock()),
      (next, previous) => this.audit('update', [id], updateDetails(request, previous, next)),
    );
  }

  async finalize(id: string, outcome: Outcome, summary?: string | null): Promise<SessionRecord> {
    assertValidId(id);
    validateFinalize(outcome, summary);
    return this.store.update(
      id,
      (record) => applyFinalize(record, outcome, summary, this.clock()).record,
      (next, previous) =>
        this.audit('finalize', [id], {
          outcome,
          summary: summary ?? null,
          from_phase: previous?.phase ?? null,
          duration_seconds: next.duration_seconds ?? null,
        }),
    );
  }

  /** The record, or ENOTFOUND. */
  async get(id: string): Promise<SessionRecord> {
    assertValidId(id);
    const record = await this.store.read(id);
    if (!record) throw notFound(id);
    return record;
  }

  async shouldResume(id: string, now: number = this.clock()): Promise<ShouldResumeResult> {
    assertValidId(id);
    let record: SessionRecord | undefined;
    try {
      record = await this.store.read(id);
    } catch (err) {
      if (err instanceof SessionError && (err.code === 'ECORRUPT' || err.code === 'EVERSION')) {
        return { resume: false, reason: 'corrupt', detail: err.message, session: null };
      }
      throw err;
    }
    return { ...decideResume(record, now, this.rules), session: record ?? null };
  }

  async list(filter: ListFilter = {}): Promise<ListResult> {
    checkFilter(filter);
    const selection = sessionSelection(filter, this.clock(), this.rules);
    const parent = filter.parent;
    let parentSeen = false;
    const problems = this.store.scanEach((record) => {
      if (record.agent_id === parent) parentSeen = true;
      selection.add(record);
    });
    // Like children(): a parent that is not in the store is ENOTFOUND, not an empty list (a typo would pass).
    if (parent !== undefined && !parentSeen && !problems.some((p) => p.id === parent)) throw notFound(parent);
    return { sessions: selection.result(), problems };
  }
}

/** What an update changed, for the audit trail: the phase move, the patch, the error. */
function updateDetails(
  request: UpdateRequest,
  previous: SessionRecord | undefined,
  next: SessionRecord,
): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  if (request.phase !== undefined) details.phase = { from: previous?.phase ?? null, to: next.phase };
  if (request.metadata !== undefined) details.metadata = request.metadata;
  if (request.error !== undefined) details.error = request.error;
  if (request.event !== undefined) details.event = request.event;
  return details;
}
