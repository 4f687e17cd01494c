// Helpers for the session-tree tests: build trees with a chosen clock, snapshot a store byte for byte,
// and read what the trash holds.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadLibrary } from './run.mjs';

export const HOUR = 3_600_000;

/** Every file and directory under `dir` with a hash of each file's bytes (directories map to "dir"). */
export function snapshot(dir) {
  const out = {};
  const walk = (rel) => {
    const full = path.join(dir, rel);
    const info = lstatSync(full);
    if (info.isDirectory()) {
      if (rel) out[rel] = 'dir';
      for (const name of readdirSync(full).sort()) walk(path.join(rel, name));
    } else {
      out[rel] = createHash('sha256').update(readFileSync(full)).digest('hex');
    }
  };
  if (existsSync(dir)) walk('');
  return out;
}

/** Only the session directories (and their files), keyed by `<id>/<file>`. */
export function sessionFiles(dir) {
  return Object.fromEntries(
    Object.entries(snapshot(dir)).filter(
      ([rel]) => !rel.startsWith('.') && rel !== 'audit.jsonl' && !rel.startsWith('audit'),
    ),
  );
}

/**
 * Creates sessions from a spec through the library: [{id, parent?, phase?, outcome?, hoursAgo?}], in order
 * (parents first). `hoursAgo` backdates the session's clock; final ones are finalized at that time.
 */
export async function build(dir, spec, now = Date.now()) {
  const { Sessions } = await loadLibrary();
  for (const s of spec) {
    const at = now - (s.hoursAgo ?? 0) * HOUR;
    const sessions = Sessions.open({ dir, cwd: dir, env: {}, now: () => at });
    await sessions.create({ agentName: s.agent ?? 'worker', id: s.id, parent: s.parent ?? null, metadata: s.metadata });
    if (s.phase) await sessions.update(s.id, { phase: s.phase });
    if (s.outcome) await sessions.finalize(s.id, s.outcome, 'done');
  }
}

/** A tree of `depth` levels under `root`, `fanout` children each; returns the ids, root first. */
export function treeSpec(root, depth, fanout, extra = {}) {
  const spec = [{ id: root, ...extra }];
  let level = [root];
  for (let d = 1; d < depth; d++) {
    const next = [];
    for (const parent of level) {
      for (let i = 0; i < fanout; i++) {
        const id = `${parent}-${i}`;
        spec.push({ id, parent, ...extra });
        next.push(id);
      }
    }
    level = next;
  }
  return spec;
}

/** Ids of the sessions live in the store (directories with a state.json). */
export function liveIds(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => !n.startsWith('.') && existsSync(path.join(dir, n, 'state.json')))
    .sort();
}

/**
 * The trash entries with their manifest and the ids they hold. With `written`, only the entries whose
 * manifest is written (a kill can land between creating an entry and writing it); else such an entry throws.
 */
export function trashEntries(dir, { written = false } = {}) {
  const trash = path.join(dir, '.trash');
  if (!existsSync(trash)) return [];
  return readdirSync(trash)
    .sort()
    .filter((entry) => !written || existsSync(path.join(trash, entry, 'manifest.json')))
    .map((entry) => {
      const manifest = JSON.parse(readFileSync(path.join(trash, entry, 'manifest.json'), 'utf8'));
      const sessions = path.join(trash, entry, 'sessions');
      return { entry, manifest, held: existsSync(sessions) ? readdirSync(sessions).sort() : [] };
    });
}

export function record(dir, id) {
  return JSON.parse(readFileSync(path.join(dir, id, 'state.json'), 'utf8'));
}

/** Where the audit trail says each session is now: `live`, `trash` or `gone`, replayed in order. */
export function auditedPlaces(dir) {
  const places = new Map();
  const files = readdirSync(dir)
    .filter((f) => /^audit(\.\d+)?\.jsonl$/.test(f))
    .sort((a, b) => (b === 'audit.jsonl' ? -1 : a === 'audit.jsonl' ? 1 : b.localeCompare(a, 'en', { numeric: true })));
  for (const file of files) {
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n').filter(Boolean)) {
      const e = JSON.parse(line);
      const action = e.details?.entries?.[0]?.action;
      let place;
      if (e.action === 'create' || e.action === 'restore' || (e.action === 'recover' && action === 'rolled back'))
        place = 'live';
      else if (
        e.action === 'delete' ||
        (e.action === 'cleanup' && !e.details?.expired_trash) ||
        (e.action === 'recover' && action === 'kept in the trash')
      )
        place = 'trash';
      else if (e.action === 'cleanup' && e.details?.expired_trash) place = 'gone';
      if (place) for (const id of e.ids) places.set(id, place);
    }
  }
  return places;
}

/**
 * `count` finished root sessions `bulk-<i>`, last updated at `at` (ISO), written directly as the store
 * writes them: creating hundreds one by one through the library would dominate a test that needs a large store.
 */
export function writeFinished(dir, count, at) {
  for (let i = 0; i < count; i++) {
    const id = `bulk-${i}`;
    mkdirSync(path.join(dir, id), { recursive: true });
    const rec = {
      schema_version: 1,
      agent_id: id,
      agent_name: 'w',
      purpose: null,
      created_at: at,
      last_updated: at,
      phase: 'completed',
      metadata: {},
      resume_ready: false,
      history: [],
      error_count: 0,
      last_error: null,
      parent_session_id: null,
      finalized_at: at,
      outcome: 'completed',
    };
    writeFileSync(path.join(dir, id, 'state.json'), `${JSON.stringify(rec, null, 2)}\n`);
  }
}
