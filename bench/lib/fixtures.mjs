// Builds large stores fast: state.json files written directly, serialized by the store's own
// serializeRecord (from the build under test), so they are byte-for-byte what the store writes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const AGENTS = ['general-purpose', 'code-reviewer', 'test-runner', 'explorer', 'planner'];
const PATH_TO_FINAL = ['initializing', 'investigating', 'planning', 'approval', 'executing'];
const HOUR = 3_600_000;

/** The build's own record serializer. */
export async function loadSerializer(dist) {
  const { serializeRecord } = await import(pathToFileURL(path.join(dist, 'tools', 'record.js')).href);
  return serializeRecord;
}

/**
 * Writes `count` sessions into `dir` and returns their ids. Shape `flat`: all roots. Shape `trees`:
 * trees of depth 4 (levels 0-3) with `branching` children per node (or `branching[depth]`, e.g.
 * [9, 10, 10] for one tree of 1 + 9 + 90 + 900 = 1,000). `kind(i, depth)` may pick
 * {phase, ageHours}; by default a deterministic mix of phases and ages spread over three days.
 */
export function writeStore(serialize, dir, count, options = {}) {
  const ids = [];
  const events = options.audit ? [] : undefined;
  for (const op of planStore(serialize, dir, count, options, ids, events)) {
    for (const d of op.dirs) mkdirSync(d, { recursive: true });
    for (const [file, text] of op.files) writeFileSync(file, text);
  }
  if (events) writeAuditTrail(options.audit, dir, events);
  return ids;
}

/**
 * `writeStore` with many file writes in flight at once (`concurrency`): the same files, several times
 * faster on a disk shared with other work, where each write mostly waits. For stores of 100,000.
 */
export async function writeStoreAsync(serialize, dir, count, options = {}, concurrency = 48) {
  const ids = [];
  const events = options.audit ? [] : undefined;
  const plan = planStore(serialize, dir, count, options, ids, events);
  const worker = async () => {
    // One generator shared by every worker: each takes the next session's writes.
    for (const op of plan) {
      for (const d of op.dirs) await mkdir(d, { recursive: true });
      await Promise.all(op.files.map(([file, text]) => writeFile(file, text)));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (events) writeAuditTrail(options.audit, dir, events);
  return ids;
}

/**
 * The writes of each session, in pre-order, each directory made before anything goes in it: the
 * session's directory and its files (with `index`, its children-index directory, when it gets children,
 * is made at once). Pushes each id to `ids` as it goes.
 *
 * With `index`, the children index as the store keeps it (tools/store/children-index.ts): an empty
 * file .index/children/<parent>/<child> per link and .index/ids/<id> per indexed session. The bench
 * checks the result with the library's checkIndex and rebuilds it through the library if the layout
 * has changed.
 */
function* planStore(
  serialize,
  dir,
  count,
  { now = Date.now(), shape = 'flat', branching = 3, kind = defaultKind, prefix = 's', index = false } = {},
  ids,
  events,
) {
  mkdirSync(dir, { recursive: true });
  if (index) mkdirSync(path.join(dir, '.index', 'ids'), { recursive: true });
  if (index) mkdirSync(path.join(dir, '.index', 'children'), { recursive: true });
  const fanOutOf = (depth) => (Array.isArray(branching) ? (branching[depth] ?? 0) : depth < 3 ? branching : 0);
  while (ids.length < count) {
    // [parent, depth] still to write, the next on top: children pushed last first.
    const pending = [[null, 0]];
    while (pending.length > 0 && ids.length < count) {
      const [parent, depth] = pending.pop();
      const i = ids.length;
      const { phase, ageHours } = kind(i, depth);
      const record = makeRecord({ i, prefix, parent, phase, updated: now - ageHours * HOUR });
      const id = record.agent_id;
      ids.push(id);
      const fanOut = shape === 'trees' ? Math.min(fanOutOf(depth), count - ids.length) : 0;
      const dirs = [path.join(dir, id)];
      const files = [[path.join(dir, id, 'state.json'), serialize(record)]];
      if (index) {
        // Made here, at once: a child's marker may be written before this session's other writes end.
        if (fanOut > 0) mkdirSync(path.join(dir, '.index', 'children', id));
        if (parent) files.push([path.join(dir, '.index', 'children', parent, id), '']);
        files.push([path.join(dir, '.index', 'ids', id), '']);
      }
      if (events) auditEvents(record, i, events);
      yield { dirs, files };
      for (let c = fanOut - 1; c >= 0; c--) pending.push([id, depth + 1]);
    }
  }
}

/** The build's own audit line writer (tools/audit/entry.ts), for `writeStore(..., { audit })`. */
export async function loadAuditFormatter(dist) {
  const { formatEntry } = await import(pathToFileURL(path.join(dist, 'tools', 'audit', 'entry.js')).href);
  return formatEntry;
}

/** What the store's default settings keep of the trail: audit.jsonl and 5 rotated files of 5 MiB at most. */
const AUDIT_MAX_BYTES = 5 * 1024 * 1024;
const AUDIT_KEEP = 5;

/** The audit entries a session's life wrote (create, each phase change, finalize), as the library words them. */
function auditEvents(record, i, events) {
  const id = record.agent_id;
  const actor = i % 4 === 0 ? 'cli' : 'hook';
  const pid = 10_000 + (hash(i) % 50_000);
  const base = { ids: [id], actor, pid };
  events.push({
    ...base,
    time: Date.parse(record.created_at),
    action: 'create',
    details: { agent_name: record.agent_name, parent: record.parent_session_id, purpose: record.purpose },
  });
  for (const step of record.history) {
    const time = Date.parse(step.timestamp);
    if (step.event === 'finalized') {
      const details = {
        outcome: record.outcome,
        summary: record.summary,
        from_phase: step.from_phase,
        duration_seconds: record.duration_seconds,
      };
      events.push({ ...base, time, action: 'finalize', details });
    } else {
      events.push({
        ...base,
        time,
        action: 'update',
        details: { phase: { from: step.from_phase, to: step.to_phase } },
      });
    }
  }
}

/**
 * The trail as a store with the default settings has it: the newest entries that fit in audit.jsonl and
 * its rotated files (audit.1.jsonl newest … audit.5.jsonl oldest), each rotated at 5 MiB, in time order.
 */
function writeAuditTrail(formatEntry, dir, events) {
  events.sort((a, b) => b.time - a.time);
  const files = [[]];
  let size = 0;
  for (const event of events) {
    const line = formatEntry(event).join('');
    if (size + line.length > AUDIT_MAX_BYTES) {
      if (files.length > AUDIT_KEEP) break;
      files.push([]);
      size = 0;
    }
    files.at(-1).push(line);
    size += line.length;
  }
  files.forEach((lines, k) => {
    const name = k === 0 ? 'audit.jsonl' : `audit.${k}.jsonl`;
    writeFileSync(path.join(dir, name), lines.reverse().join(''));
  });
}

/** Two thirds older than a day (cleanup material); a mix of final, paused and running phases. */
export function defaultKind(i) {
  const r = hash(i);
  const phase =
    r % 20 < 12
      ? 'completed'
      : r % 20 < 14
        ? 'failed'
        : r % 20 < 17
          ? 'approval'
          : r % 20 < 19
            ? 'investigating'
            : 'executing';
  // Millisecond-distinct ages, as real stores have: ties in last_updated are rare.
  return { phase, ageHours: ((r >>> 4) % 72_000_000) / 1_000_000 };
}

function makeRecord({ i, prefix, parent, phase, updated }) {
  const created = updated - (5 + (hash(i) % 55)) * 60_000;
  const stamp = new Date(created).toISOString();
  const day = stamp.slice(0, 10).replaceAll('-', '');
  const id = `agent-${day}-${stamp.slice(11, 19).replaceAll(':', '')}-${prefix}${i.toString(16).padStart(7, '0')}`;
  const final = phase === 'completed' || phase === 'failed' || phase === 'abandoned';
  const steps = final
    ? PATH_TO_FINAL.slice(0, 2 + (hash(i) % 4))
    : PATH_TO_FINAL.slice(0, PATH_TO_FINAL.indexOf(phase) + 1);
  if (final) steps.push(phase);
  const span = updated - created;
  const history = steps.slice(1).map((to, k) => ({
    from_phase: steps[k],
    to_phase: to,
    timestamp: new Date(created + Math.round((span * (k + 1)) / (steps.length - 1))).toISOString(),
    ...(final && k === steps.length - 2 ? { event: 'finalized' } : {}),
  }));
  const errors = hash(i) % 5 === 0 ? 1 : 0;
  const record = {
    schema_version: 1,
    agent_id: id,
    agent_name: AGENTS[i % AGENTS.length],
    purpose: `Investigate and fix issue #${1000 + (i % 9000)} in module ${['store', 'cli', 'hooks', 'policy'][i % 4]}`,
    created_at: stamp,
    last_updated: new Date(updated).toISOString(),
    phase,
    metadata: {
      task_id: `T-${i}`,
      files: [`src/module-${i % 97}.ts`, `tests/module-${i % 97}.test.ts`],
      notes: 'Reproduced locally; the failure depends on the order of the cache warm-up.',
      attempt: 1 + (i % 3),
    },
    resume_ready: ['approval', 'investigating', 'planning'].includes(phase),
    history,
    error_count: errors,
    last_error: errors
      ? { message: 'command exited with status 1', timestamp: new Date(created + span / 2).toISOString() }
      : null,
    parent_session_id: parent,
  };
  if (final) {
    Object.assign(record, {
      finalized_at: record.last_updated,
      outcome: phase,
      summary: `Done: the fix for issue #${1000 + (i % 9000)} is in place and its tests pass.`,
      duration_seconds: Math.round(span / 10) / 100,
    });
  }
  return record;
}

/** A cheap deterministic integer hash, so stores are identical from run to run. */
function hash(i) {
  let x = (i + 0x9e3779b9) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b);
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b);
  return (x ^ (x >>> 16)) >>> 0;
}
