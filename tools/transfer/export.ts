import { readAudit } from '../audit/read.js';
import { SessionError } from '../errors.js';
import { assertValidId } from '../ids.js';
import type { SessionRecord } from '../record.js';
import type { Sessions } from '../sessions.js';
import { writeBundleFile } from '../store/bundle-file.js';
import type { StoreProblem } from '../store/store.js';
import { makeBundle, type Bundle } from './bundle.js';

export interface ExportOptions {
  /** Export this session and all its descendants. */
  id?: string;
  /** Export the whole store. */
  all?: boolean;
  /** Also write the bundle to this file (atomically). */
  file?: string;
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
export async function exportSessions(sessions: Sessions, options: ExportOptions): Promise<ExportResult> {
  if (Boolean(options.all) === (options.id !== undefined)) throw new SessionError('EINVALID', 'export needs a session id or --all (not both)');
  const { records, problems } = sessions.store.scan();
  let chosen: SessionRecord[];
  let roots: string[];
  if (options.id !== undefined) {
    assertValidId(options.id);
    const problem = problems.find((p) => p.id === options.id);
    if (problem) throw new SessionError(problem.code === 'EVERSION' ? 'EVERSION' : 'ECORRUPT', problem.message, { details: { id: options.id } });
    chosen = subtree(records, options.id);
    if (chosen.length === 0) throw new SessionError('ENOTFOUND', `no session ${options.id}`, { details: { id: options.id } });
    roots = [options.id];
  } else {
    const ids = new Set(records.map((r) => r.agent_id));
    roots = records.filter((r) => r.parent_session_id === null || !ids.has(r.parent_session_id)).map((r) => r.agent_id).sort();
    chosen = roots.flatMap((root) => subtree(records, root));
  }
  const wanted = new Set(chosen.map((r) => r.agent_id));
  const { entries } = await readAudit(sessions);
  const audit = entries.filter((e) => e.ids.some((id) => wanted.has(id)));
  const bundle = makeBundle({ exported_at: new Date(sessions.now()).toISOString(), roots, sessions: chosen, audit });
  if (options.file !== undefined) await writeBundleFile(options.file, `${JSON.stringify(bundle, null, 2)}\n`);
  return { bundle, file: options.file ?? null, sessions: chosen.length, audit_entries: audit.length, problems: options.all ? problems : [] };
}

/** `root` and its descendants, depth first, parents before children; empty when `root` is absent. */
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
