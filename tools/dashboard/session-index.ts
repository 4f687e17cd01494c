import { RESUMABLE_PHASES } from '../phases.js';
import { summarize, type SessionSummary } from '../policy/selection.js';
import type { SessionContext } from '../session-context.js';

/** A row of the page's tree: a session's summary and how many children it has. */
export interface TreeRowView extends SessionSummary {
  children: number;
}

export interface RowsPage {
  total: number;
  offset: number;
  rows: TreeRowView[];
}

/**
 * What the page's tree shows, for the whole store, in memory: each session's summary (what a row shows,
 * not the record) and its children. Read once at start, then kept current from the audit trail: `refresh`
 * re-reads only the sessions an entry names. The page gets pages of it, never the whole store.
 */
export class SessionIndex {
  private readonly byId = new Map<string, SessionSummary>();
  private readonly kids = new Map<string, Set<string>>();

  constructor(private readonly sessions: SessionContext) {}

  load(): void {
    this.byId.clear();
    this.kids.clear();
    this.sessions.store.scanEach((record) => this.put(summarize(record)));
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * Re-reads the named sessions; returns the ids whose rows changed, with the parents (old and new)
   * whose child counts did.
   */
  async refresh(ids: Iterable<string>): Promise<string[]> {
    const changed = new Set<string>();
    for (const id of ids) {
      const before = this.byId.get(id);
      const record = await this.sessions.store.read(id).catch(() => undefined);
      if (before) this.drop(before);
      if (record) this.put(summarize(record));
      changed.add(id);
      if (before?.parent_session_id) changed.add(before.parent_session_id);
      if (record?.parent_session_id) changed.add(record.parent_session_id);
    }
    return [...changed];
  }

  row(id: string): TreeRowView | undefined {
    const summary = this.byId.get(id);
    return summary && { ...summary, children: this.kids.get(id)?.size ?? 0 };
  }

  /** Sessions without a parent in the store (roots and orphans), newest first. */
  roots(offset: number, limit: number): RowsPage {
    const roots = [...this.byId.values()].filter((s) => !s.parent_session_id || !this.byId.has(s.parent_session_id));
    roots.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.agent_id.localeCompare(b.agent_id));
    return this.page(roots, offset, limit);
  }

  /** The children of `id`, oldest first (the order of `tree`). */
  children(id: string, offset: number, limit: number): RowsPage {
    const kids = [...(this.kids.get(id) ?? [])].map((k) => this.byId.get(k) as SessionSummary);
    kids.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.agent_id.localeCompare(b.agent_id));
    return this.page(kids, offset, limit);
  }

  /** Sessions paused for a person: approval first, then the other resumable phases; newest first in each. */
  waiting(limit: number): { total: number; ids: string[] } {
    const rank = (s: SessionSummary) => (s.phase === 'approval' ? 0 : 1);
    const paused = [...this.byId.values()].filter((s) => RESUMABLE_PHASES.includes(s.phase) && !s.outcome);
    paused.sort((a, b) => rank(a) - rank(b) || b.last_updated.localeCompare(a.last_updated));
    return { total: paused.length, ids: paused.slice(0, limit).map((s) => s.agent_id) };
  }

  private page(list: SessionSummary[], offset: number, limit: number): RowsPage {
    const rows = list.slice(offset, offset + limit).map((s) => this.row(s.agent_id) as TreeRowView);
    return { total: list.length, offset, rows };
  }

  private put(summary: SessionSummary): void {
    this.byId.set(summary.agent_id, summary);
    const parent = summary.parent_session_id;
    if (parent) this.kids.get(parent)?.add(summary.agent_id) ?? this.kids.set(parent, new Set([summary.agent_id]));
  }

  private drop(summary: SessionSummary): void {
    this.byId.delete(summary.agent_id);
    const parent = summary.parent_session_id;
    if (parent) this.kids.get(parent)?.delete(summary.agent_id);
  }
}
