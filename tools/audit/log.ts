import type { Sessions } from '../sessions.js';
import { AuditLog } from '../store/audit-log.js';
import { formatEntry } from './entry.js';

const logs = new WeakMap<Sessions, AuditLog>();

/** The audit trail of a Sessions' store, with its settings. */
export function auditLogOf(sessions: Sessions): AuditLog {
  let log = logs.get(sessions);
  if (!log) {
    const { auditMaxBytes, auditKeep, lockTimeoutMs } = sessions.settings;
    log = new AuditLog(sessions.store.dir, { maxBytes: auditMaxBytes, keep: auditKeep, lockTimeoutMs });
    logs.set(sessions, log);
  }
  return log;
}

/** Appends the line(s) recording one change; `Sessions.audit` calls this. */
export async function appendAudit(
  sessions: Sessions,
  action: string,
  ids: string[],
  details: Record<string, unknown>,
): Promise<void> {
  const lines = formatEntry({ time: sessions.now(), action, ids, actor: sessions.actor, pid: process.pid, details });
  await auditLogOf(sessions).append(lines);
}
