import type { Settings } from './config.js';
import type { SessionError } from './errors.js';
import type { ResumeRules } from './policy/resume.js';
import type { ListedSession } from './policy/selection.js';
import type { AuditLog } from './store/audit-log.js';
import type { SessionStore, StoreProblem } from './store/store.js';

/**
 * Every action agent-session records in the audit trail (SESSION_README.md, "Audit trail"): what
 * `audit --action` accepts besides the actions a library caller recorded itself. The context's
 * `audit()` takes only these, so an operation cannot record an action that is not listed here.
 */
export const AUDIT_ACTIONS = [
  'create',
  'update',
  'finalize',
  'delete',
  'restore',
  'cleanup',
  'abandon',
  'quarantine',
  'recover',
  'import',
  'import-recover',
  'doctor-repair',
  'audit-repair',
  'hook.attach',
  'hook.resume_decision',
  'hook.passed_over',
  'hook.bind',
  'hook.start',
  'hook.stop',
  'sweep.abandon',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who makes the changes, for the audit trail. */
export type Actor = 'cli' | 'hook' | 'api' | 'mcp' | 'dashboard';

/**
 * What the operations on trees, transfers, the audit trail and the doctor run in: one store, its
 * settings, who acts, the clock, and the audit trail. `Sessions` implements it; the operations take
 * it as their first argument and never reach for anything above it.
 */
export interface SessionContext {
  readonly store: SessionStore;
  readonly settings: Settings;
  /** The resume settings, as the resume rule takes them. */
  readonly rules: ResumeRules;
  readonly actor: Actor;
  /** The clock, in epoch milliseconds. */
  now(): number;
  /** The store's audit trail file (`audit.jsonl` and its rotations), with the settings' limits. */
  readonly auditLog: AuditLog;
  /** Appends one entry to the audit trail; never throws (a failure lands in `auditErrors`). */
  audit(action: AuditAction, ids: string[], details?: Record<string, unknown>): Promise<void>;
  /**
   * Appends several entries in one write and fsyncs them (a bulk command's batch, recorded before the
   * batch is marked done); never throws, like `audit`.
   */
  auditBatch(entries: { action: AuditAction; ids: string[]; details?: Record<string, unknown> }[]): Promise<void>;
  /** The latest failures to write the audit trail. */
  readonly auditErrors: SessionError[];
}

/** A listing of the store: the sessions selected, and the records that could not be read. */
export interface ListResult {
  sessions: ListedSession[];
  problems: StoreProblem[];
}
