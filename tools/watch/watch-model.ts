// What `watch` knows of the store: the sessions still open (whole records: whether a paused one would resume
// changes with the clock) and a few fields of each finished one. Read once in full at the start, then kept up
// to date from the audit trail: each entry names the sessions it changed, and only those are read again.
import type { AuditEntry } from '../audit/entry.js';
import { isFinalPhase, isResumablePhase, type Phase } from '../phases.js';
import { lastMessage, sessionStatus } from '../policy/paused.js';
import { decideResume } from '../policy/resume.js';
import type { SessionRecord } from '../record.js';
import type { SessionContext } from '../session-context.js';
import { parseTimestamp } from '../time.js';

/** An entry naming more sessions than this (a cleanup, an import) is cheaper to follow with one full read. */
const MAX_IDS_READ_ONE_BY_ONE = 500;
/** The finished sessions a snapshot carries, newest first: more than any screen shows. */
const FINISHED_KEPT = 100;

export interface OpenRow {
  id: string;
  agent: string;
  purpose: string | null;
  phase: Phase;
  /** 0 for a session whose parent is not open too. */
  depth: number;
  startedMs: number;
  /** For a paused session (a resumable phase): since when, what it waits for, why not now, what its agent asked. */
  readonly paused: { sinceMs: number; waitsFor: string; note: string | null; question: string | null } | null;
}

export interface FinishedRow {
  id: string;
  agent: string;
  purpose: string | null;
  outcome: string;
  finishedMs: number;
}

export interface WatchSnapshot {
  /** Depth-first: each root (newest first), then its open children (oldest first). */
  open: OpenRow[];
  /** Newest first. */
  finished: FinishedRow[];
  counts: { running: number; approval: number; paused: number; finishedToday: number };
}

export class WatchModel {
  /** The open sessions, with when each was created (parsed once: the tree is sorted by it at every change). */
  private readonly open = new Map<string, { record: SessionRecord; startedMs: number }>();
  private readonly finished = new Map<string, FinishedRow>();
  /** `finished` newest first, kept until the next change to it. */
  private finishedOrder: FinishedRow[] | undefined;

  constructor(private readonly ctx: SessionContext) {}

  /** Reads the whole store (at the start, and after a change too large to follow session by session). */
  loadAll(): void {
    this.open.clear();
    this.finished.clear();
    this.finishedOrder = undefined;
    this.ctx.store.scanEach((record) => this.put(record.agent_id, record));
  }

  /** The sessions the entries name, to read again; `all` when one of them changed too many to read one by one. */
  static changedBy(entries: AuditEntry[]): { all: boolean; ids: Set<string> } {
    const ids = new Set<string>();
    for (const entry of entries) {
      if (entry.part || entry.ids.length > MAX_IDS_READ_ONE_BY_ONE) return { all: true, ids };
      for (const id of entry.ids) ids.add(id);
    }
    return { all: ids.size > MAX_IDS_READ_ONE_BY_ONE, ids };
  }

  /** Reads these sessions again: a session gone (deleted) or unreadable leaves the view. */
  async refresh(ids: Iterable<string>): Promise<void> {
    for (const id of ids) {
      const record = await this.ctx.store.read(id).catch(() => undefined);
      this.put(id, record);
    }
  }

  snapshot(now: number): WatchSnapshot {
    const open = this.openRows(now);
    this.finishedOrder ??= [...this.finished.values()].sort((a, b) => b.finishedMs - a.finishedMs);
    const finished = this.finishedOrder;
    const today = startOfDay(now);
    return {
      open,
      finished: finished.slice(0, FINISHED_KEPT),
      counts: {
        running: open.filter((r) => !isResumablePhase(r.phase)).length,
        approval: open.filter((r) => r.phase === 'approval').length,
        paused: open.filter((r) => isResumablePhase(r.phase) && r.phase !== 'approval').length,
        finishedToday: finished.filter((r) => r.finishedMs >= today).length,
      },
    };
  }

  private put(id: string, record: SessionRecord | undefined): void {
    this.open.delete(id);
    if (this.finished.delete(id)) this.finishedOrder = undefined;
    if (!record) return;
    if (!isFinalPhase(record.phase) && !record.finalized_at)
      return void this.open.set(id, { record, startedMs: parseTimestamp(record.created_at) ?? 0 });
    this.finishedOrder = undefined;
    this.finished.set(id, {
      id,
      agent: record.agent_name,
      purpose: record.purpose,
      outcome: record.outcome ?? record.phase,
      finishedMs: parseTimestamp(record.finalized_at) ?? parseTimestamp(record.last_updated) ?? 0,
    });
  }

  private openRows(now: number): OpenRow[] {
    type Open = { record: SessionRecord; startedMs: number };
    const children = new Map<string | null, Open[]>();
    for (const entry of this.open.values()) {
      const parentId = entry.record.parent_session_id;
      const key = parentId !== null && this.open.has(parentId) ? parentId : null;
      const list = children.get(key);
      if (list) list.push(entry);
      else children.set(key, [entry]);
    }
    const byStart = (a: Open, b: Open) =>
      a.startedMs - b.startedMs ||
      (a.record.agent_id < b.record.agent_id ? -1 : a.record.agent_id > b.record.agent_id ? 1 : 0);
    const rows: OpenRow[] = [];
    // The newest tree on top, where a new delegation shows at once; children in the order they were started.
    const stack = (children.get(null) ?? []).sort(byStart).map((entry) => ({ entry, depth: 0 }));
    for (let next = stack.pop(); next; next = stack.pop()) {
      rows.push(this.row(next.entry, next.depth, now));
      const below = (children.get(next.entry.record.agent_id) ?? []).sort(byStart).reverse();
      for (const entry of below) stack.push({ entry, depth: next.depth + 1 });
    }
    return rows;
  }

  private row(
    { record: r, startedMs }: { record: SessionRecord; startedMs: number },
    depth: number,
    now: number,
  ): OpenRow {
    const base = {
      id: r.agent_id,
      agent: r.agent_name,
      purpose: r.purpose,
      phase: r.phase,
      depth,
      startedMs,
    };
    if (!isResumablePhase(r.phase)) return { ...base, paused: null };
    const ctx = this.ctx;
    let paused: OpenRow['paused'] | undefined;
    return {
      ...base,
      // Worked out for the rows on screen only: a store can hold thousands of paused sessions.
      get paused() {
        return (paused ??= pauseOf(r, now, ctx));
      },
    };
  }
}

/** What a paused session waits for, since when, why it would not resume now, and what its agent asked. */
function pauseOf(r: SessionRecord, now: number, ctx: SessionContext): OpenRow['paused'] {
  const status = sessionStatus(r, decideResume(r, now, ctx.rules));
  const said = lastMessage(r);
  return {
    sinceMs: parseTimestamp(r.last_updated) ?? now,
    waitsFor: r.phase === 'approval' ? 'approval' : 'a resume',
    note: status === 'paused, resumable now' ? null : status.replace('paused, ', ''),
    question: said ? (said[said.length - 1] ?? null) : null,
  };
}

/** Local midnight of the day `now` falls in: "finished today" as the person watching counts days. */
function startOfDay(now: number): number {
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return day.getTime();
}
