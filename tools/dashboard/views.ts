import { readAudit } from '../audit/read.js';
import { historyLine } from '../cli/history-line.js';
import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import { claudeFields, lastMessage, nextStep, sessionStatus } from '../policy/paused.js';
import { decideResume } from '../policy/resume.js';
import type { SessionContext } from '../session-context.js';
import { computeStats, sessionTokenSums } from '../stats/stats.js';
import { notFound } from '../store/store.js';
import { deleteSession } from '../trees/delete.js';
import { listTrash, restoreSession } from '../trees/restore.js';
import type { SessionIndex } from './session-index.js';
import { statsCards } from './stats-cards.js';

/** The most rows one request returns: the page asks for what it shows. */
export const PAGE_LIMIT = 200;
/** Audit entries a detail shows (the newest). */
const AUDIT_LIMIT = 50;
const DAY_MS = 86_400_000;

/** The JSON answers of the page's requests, over one store and its in-memory tree. */
export class Views {
  constructor(
    readonly sessions: SessionContext,
    readonly index: SessionIndex,
  ) {}

  roots(offset: number, limit: number) {
    return this.index.roots(offset, limit);
  }

  children(id: string, offset: number, limit: number) {
    assertValidId(id);
    return this.index.children(id, offset, limit);
  }

  /** The rows of the named sessions (those gone listed apart): what the page re-fetches after an event. */
  rows(ids: string[]) {
    const rows = [];
    const gone = [];
    for (const id of ids) {
      const row = this.index.row(id);
      if (row) rows.push(row);
      else gone.push(id);
    }
    return { rows, gone };
  }

  /** Paused sessions, approval first: what each waits for and what to do next, in `show`'s words. */
  async waiting(limit: number) {
    const { total, ids } = this.index.waiting(limit);
    const now = this.sessions.now();
    const sessions = [];
    for (const id of ids) {
      const record = await this.sessions.store.read(id).catch(() => undefined);
      if (!record) continue;
      const decision = decideResume(record, now, this.sessions.rules);
      sessions.push({
        ...this.index.row(id),
        status: sessionStatus(record, decision),
        waits_for: lastMessage(record),
        next_step: nextStep(record, decision),
      });
    }
    return { total, sessions };
  }

  async detail(id: string) {
    assertValidId(id);
    const record = await this.sessions.store.read(id);
    if (!record) throw notFound(id);
    const now = this.sessions.now();
    const decision = decideResume(record, now, this.sessions.rules);
    const audit = await readAudit(this.sessions, { session: id });
    return {
      record,
      status: sessionStatus(record, decision),
      resume: { ...decision, next_step: nextStep(record, decision) },
      claude: claudeFields(record),
      last_message: lastMessage(record),
      timeline: record.history.map((h) => ({ timestamp: h.timestamp, text: historyLine(h) })),
      children: this.index.children(id, 0, PAGE_LIMIT),
      audit: { total: audit.entries.length, entries: audit.entries.slice(-AUDIT_LIMIT).reverse() },
      tokens: await sessionTokenSums(this.sessions, id),
    };
  }

  async stats() {
    const now = this.sessions.now();
    const [day, week] = await Promise.all([
      computeStats(this.sessions, { since: new Date(now - DAY_MS) }),
      computeStats(this.sessions, { since: new Date(now - 7 * DAY_MS) }),
    ]);
    return { day: statsCards(day), week: statsCards(week) };
  }

  trash() {
    return listTrash(this.sessions);
  }

  /** `delete --dry-run`: the subtree, what blocks it, the bytes. */
  previewDelete(id: string) {
    return deleteSession(this.sessions, checkedId(id), { dryRun: true });
  }

  async delete(id: string) {
    const result = await deleteSession(this.sessions, checkedId(id));
    await this.index.refresh(result.removed.map((s) => s.id));
    return result;
  }

  async restore(target: string) {
    if (typeof target !== 'string' || target === '') throw new SessionError('EINVALID', 'restore needs a target');
    const result = await restoreSession(this.sessions, target);
    await this.index.refresh(result.restored.map((s) => s.id));
    return result;
  }
}

function checkedId(id: unknown): string {
  if (typeof id !== 'string') throw new SessionError('EINVALID', 'a session id is needed');
  assertValidId(id);
  return id;
}
