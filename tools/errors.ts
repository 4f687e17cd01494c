/** Stable error codes. Tests and callers branch on `code`, never on message text. */
export type ErrorCode =
  | 'EINVALID' // bad input: id, phase, outcome, JSON, option
  | 'ENOTFOUND' // no such session
  | 'EEXIST' // id already taken
  | 'EFINAL' // the session is final; the change is refused
  | 'EREFUSED' // a guard refused the operation (running sessions, unsaved work, children); details.blocked says why
  | 'ECORRUPT' // a record that cannot be parsed or fails the schema
  | 'EVERSION' // a record written by a newer agent-session
  | 'ELOCKED' // the lock could not be taken in time
  | 'EINTERRUPTED' // stopped at a safe point by SIGINT/SIGTERM (an aborted signal); details: {done, total}
  | 'EIO'; // any other file-system failure

export class SessionError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, { cause: options.cause });
    this.name = 'SessionError';
    this.code = code;
    this.details = options.details ?? {};
  }
}

export function isSessionError(err: unknown, code?: ErrorCode): err is SessionError {
  return err instanceof SessionError && (code === undefined || err.code === code);
}

/** Wraps a file-system failure, keeping a SessionError as it is. */
export function toSessionError(err: unknown, doing: string): SessionError {
  if (err instanceof SessionError) return err;
  const sys = err as NodeJS.ErrnoException;
  if (sys?.code === 'ENOSPC') return new SessionError('EIO', `${doing}: no space left on device`, { cause: err });
  // Node's messages mostly start with their code already ("EISDIR: illegal operation…").
  const reason = sys?.code
    ? sys.message?.startsWith(`${sys.code}:`)
      ? sys.message
      : `${sys.code} ${sys.message}`
    : String(err);
  return new SessionError('EIO', `${doing}: ${reason}`, { cause: err });
}

/** The one place user-facing wording starts: `agent-session: <message>`. */
export const PROGRAM = 'agent-session';

export function formatError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // One line whatever the input quoted in the message held (bad JSON, an unknown argument).
  return `${PROGRAM}: ${escapeControls(message)}`;
}

/** Control characters (line breaks, tabs, escapes) as their JSON escapes, so text stays on its line. */
export function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}
