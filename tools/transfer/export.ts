import { readAudit } from '../audit/read.js';
import { SessionError } from '../errors.js';
import { throwIfInterrupted } from '../safe-points.js';
import { assertValidId } from '../ids.js';
import type { SessionRecord } from '../record.js';
import type { SessionContext } from '../session-context.js';
import { writeBundleFile } from './bundle-file.js';
import type { StoreProblem } from '../store/store.js';
import { subtreeNodes } from '../trees/hierarchy.js';
import { makeBundle, type Bundle } from './bundle.js';

export interface ExportOptions {
  /** Export this session and all its descendants. */
  id?: string;
  /** Export the whole store. */
  all?: boolean;
  /** Also write the bundle to this file (atomically). */
  file?: string;
  /** Aborting it stops the export before it writes anything (EINTERRUPTED). */
  signal?: AbortSignal;
}

export interface ExportResult {
  bundle: Bundle;
  file: string | null;
  sessions: number;
  audit_entries: number;
  /** Records that could not be read and were left out (only with `all`). */
  problems: StoreProblem[];
}

/** A portable bundle of a session and its descendants (or of the store): records and their audit entries. */
export async function exportSessions(sessions: SessionContext, options: ExportOptions): Promise<ExportResult> {
  if (Boolean(options.all) === (options.id !== undefined))
    throw new SessionError('EINVALID', 'export needs a session id or --all (not both)');
  let chosen: SessionRecord[];
  let roots: string[];
  let problems: StoreProblem[] = [];
  if (options.id !== undefined) {
    assertValidId(options.id);
    // The hierarchy's index finds the subtree without reading the whole store.
    const nodes = await subtreeNodes(sessions, options.id);
    const unreadable = nodes.find((n) => n.record === null);
    // Reading it again throws its own ECORRUPT or EVERSION: a bundle never leaves part of a tree out.
    if (unreadable) await sessions.store.read(unreadable.id);
    chosen = nodes.map((n) => n.record!);
    roots = [options.id];
  } else {
    const scan = sessions.store.scan();
    const records = scan.records;
    problems = scan.problems;
    const ids = new Set(records.map((r) => r.agent_id));
    roots = records
      .filter((r) => r.parent_session_id === null || !ids.has(r.parent_session_id))
      .map((r) => r.agent_id)
      .sort();
    chosen = roots.flatMap((root) => subtree(records, root));
    // Sessions caught in a parent-link cycle have no root above them: export them as they are.
    const reached = new Set(chosen.map((r) => r.agent_id));
    chosen.push(...records.filter((r) => !reached.has(r.agent_id)));
  }
  throwIfInterrupted(options.signal, 0, chosen.length);
  const wanted = new Set(chosen.map((r) => r.agent_id));
  const { entries } = await readAudit(sessions);
  const audit = entries.filter((e) => e.ids.some((id) => wanted.has(id)));
  const bundle = makeBundle({ exported_at: new Date(sessions.now()).toISOString(), roots, sessions: chosen, audit });
  throwIfInterrupted(options.signal, 0, chosen.length);
  if (options.file !== undefined) await writeBundleFile(options.file, `${JSON.stringify(bundle, null, 2)}\n`);
  return { bundle, file: options.file ?? null, sessions: chosen.length, audit_entries: audit.length, problems };
}

/** `root` and its descendants from a full scan (for `--all`), depth first, parents before children. */
export function subtree(records: SessionRecord[], root: string): SessionRecord[] {
  const byId = new Map(records.map((r) => [r.agent_id, r]));
  const children = new Map<string, SessionRecord[]>();
  for (const r of records) {
    if (r.parent_session_id === null) continue;
    const list = children.get(r.parent_session_id) ?? [];
    list.push(r);
    children.set(r.parent_session_id, list);
  }
  const out: SessionRecord[] = [];
  const seen = new Set<string>();
  const stack = byId.has(root) ? [byId.get(root)!] : [];
  while (stack.length > 0) {
    const r = stack.pop()!;
    // A parent-link cycle (a hand-edited store) must not loop forever.
    if (seen.has(r.agent_id)) continue;
    seen.add(r.agent_id);
    out.push(r);
    const kids = (children.get(r.agent_id) ?? []).sort((a, b) => b.agent_id.localeCompare(a.agent_id));
    stack.push(...kids);
  }
  return out;
}
