import { readAudit } from '../audit/read.js';
import { isSessionError, SessionError, toSessionError } from '../errors.js';
import { throwIfInterrupted } from '../safe-points.js';
import { generateId } from '../ids.js';
import { serializeRecord, type SessionRecord } from '../record.js';
import type { SessionContext } from '../session-context.js';
import { readBundleFile } from './bundle-file.js';
import { ChildrenIndex } from '../store/children-index.js';
import { ImportStaging, type ImportManifest } from '../store/import-stage.js';
import { LOCK_STALE_MS } from '../store/lock.js';
import { withSessionLocks, type SessionLocksCheck } from '../store/subtree-locks.js';
import { Trash } from '../store/trash.js';
import { isLive } from '../trees/restore.js';
import { parseBundleText, verifyBundle, type Bundle } from './bundle.js';

export type ImportSource = { file: string } | { text: string } | { bundle: unknown };

export interface ImportOptions {
  /** Give colliding sessions new ids (parent links inside the bundle follow). */
  rename?: boolean;
  /** Replace colliding sessions, keeping them in `.backups/import-<op>/`. */
  overwrite?: boolean;
  /** Aborting it stops the import while it stages (nothing imported, EINTERRUPTED); once committing, it finishes. */
  signal?: AbortSignal;
}

export interface ImportResult {
  imported: string[];
  /** Old id → new id, with `rename`. */
  renamed: Record<string, string>;
  /** Ids whose existing session was replaced, with `overwrite`. */
  replaced: string[];
  /** Where the replaced sessions were kept. */
  backup: string | null;
  /** Audit entries of the bundle added to this store's trail (ones already there are skipped). */
  audit_entries: number;
  /** Imported sessions whose parent is neither in the bundle nor in the store. */
  orphans: string[];
  /** Interrupted earlier imports this call rolled back or finished first. */
  recovered: string[];
}

/** Validates a bundle and imports all of its sessions, or none (see tools/store/import-stage.ts). */
export async function importSessions(
  sessions: SessionContext,
  source: ImportSource,
  options: ImportOptions = {},
): Promise<ImportResult> {
  if (options.rename && options.overwrite)
    throw new SessionError('EINVALID', '--rename and --overwrite cannot be used together');
  const raw =
    'bundle' in source
      ? source.bundle
      : parseBundleText('text' in source ? source.text : await readBundleFile(source.file));
  const { bundle, records: bundled } = verifyBundle(raw);
  const recovered = await recoverImports(sessions);
  const { store } = sessions;
  let plan: ImportPlan;
  try {
    plan = planImport(bundled, new Set(store.ids()), options, () => generateId(new Date(sessions.now())));
  } catch (err) {
    return refuseRepeat(sessions, bundle, err);
  }
  const ids = plan.records.map((r) => r.agent_id);
  const staging = new ImportStaging(store.dir);
  const op = ImportStaging.newOp(sessions.now());
  const audit = {
    op,
    checksum: bundle.checksum,
    renamed: plan.renamed,
    replaced: plan.replaced,
    backup: null as string | null,
  };
  const manifest: ImportManifest = { op, ids, replaced: plan.replaced, status: 'staged', pid: process.pid, audit };
  const timeoutMs = sessions.settings.lockTimeoutMs + ids.length * 10;
  let auditEntries = 0;
  await staging.withOpLock(op, sessions.settings.lockTimeoutMs, async () => {
    try {
      await staging.writeManifest(manifest);
      // All or nothing: an interrupt while staging imports none of it (0 of N); once committing, it finishes.
      for (const record of plan.records) {
        throwIfInterrupted(options.signal, 0, ids.length);
        await staging.stage(op, record.agent_id, serializeRecord(record));
      }
      throwIfInterrupted(options.signal, 0, ids.length);
      // The parents outside the bundle are locked too: none can go to the trash while this commits.
      const inBundle = new Set(ids);
      const parents = [
        ...new Set(
          plan.records.map((r) => r.parent_session_id).filter((p): p is string => p !== null && !inBundle.has(p)),
        ),
      ];
      await withSessionLocks(
        store.dir,
        [...ids, ...parents],
        timeoutMs,
        async (check) => {
          await refuseParentsInTrash(sessions, plan.records, parents);
          await commit(staging, manifest, plan.records, store.dir, check);
        },
        options.signal,
      );
    } catch (err) {
      if (manifest.status === 'staged') await staging.discard(op);
      throw err;
    }
    // Still under the import's lock, and the staging (manifest `done`) dropped only once the entry is
    // written: an importer killed before that has its entry written by the recovery that finishes it.
    audit.backup = await staging.keepBackup(op);
    auditEntries = await replayAudit(sessions, bundle);
    await sessions.audit('import', ids, audit);
    await staging.discard(op);
  });
  const known = new Set([...ids, ...store.ids()]);
  const orphans = plan.records.filter((r) => r.parent_session_id !== null && !known.has(r.parent_session_id));
  return {
    imported: ids,
    renamed: plan.renamed,
    replaced: plan.replaced,
    backup: audit.backup,
    audit_entries: auditEntries,
    orphans: orphans.map((r) => r.agent_id),
    recovered,
  };
}

/**
 * A collision with sessions an earlier import of this same bundle brought in (its `import` entry
 * names them) is the rerun of a finished import: say so, and copy the bundle's audit entries the
 * trail still lacks (an importer killed before copying them). Any other error passes unchanged.
 */
async function refuseRepeat(sessions: SessionContext, bundle: Bundle, err: unknown): Promise<never> {
  if (!isSessionError(err, 'EEXIST')) throw err;
  const colliding = (err.details.ids ?? []) as string[];
  const earlier = (await readAudit(sessions, { action: 'import' })).entries.filter(
    (e) => e.details?.checksum === bundle.checksum,
  );
  const covered = new Set(earlier.flatMap((e) => e.ids));
  if (earlier.length === 0 || !colliding.every((id) => covered.has(id))) throw err;
  const copied = await replayAudit(sessions, bundle);
  const when = earlier[earlier.length - 1]!.time;
  const replayed = copied > 0 ? ` (${copied} missing audit entries of the bundle copied)` : '';
  throw new SessionError(
    'EEXIST',
    `this bundle was already imported (${when}); its ${colliding.length} session(s) are in the store, ` +
      `nothing changed${replayed}; use --rename or --overwrite to import it again`,
    {
      details: { ids: colliding, already_imported: when, audit_entries: copied },
    },
  );
}

interface ImportPlan {
  records: SessionRecord[];
  renamed: Record<string, string>;
  replaced: string[];
}

/** Decides ids: collisions refused, renamed (links inside the bundle rewritten) or replaced. */
function planImport(
  records: SessionRecord[],
  existing: Set<string>,
  options: ImportOptions,
  newId: () => string,
): ImportPlan {
  const collisions = records.map((r) => r.agent_id).filter((id) => existing.has(id));
  if (collisions.length > 0 && !options.rename && !options.overwrite) {
    throw new SessionError(
      'EEXIST',
      `${collisions.length} session(s) of the bundle already exist (${collisions.slice(0, 5).join(', ')}); ` +
        'use --rename or --overwrite',
      {
        details: { ids: collisions },
      },
    );
  }
  if (!options.rename) return { records, renamed: {}, replaced: options.overwrite ? collisions : [] };
  const taken = new Set([...existing, ...records.map((r) => r.agent_id)]);
  const renamed: Record<string, string> = {};
  for (const id of collisions) {
    let fresh = newId();
    while (taken.has(fresh)) fresh = newId();
    taken.add(fresh);
    renamed[id] = fresh;
  }
  const rewrite = (id: string | null) => (id === null ? null : (renamed[id] ?? id));
  return {
    records: records.map((r) => ({
      ...r,
      agent_id: rewrite(r.agent_id)!,
      parent_session_id: rewrite(r.parent_session_id),
    })),
    renamed,
    replaced: [],
  };
}

/** Under the locks of every id: set aside replaced sessions, index, place; roll back on any failure. */
async function commit(
  staging: ImportStaging,
  manifest: ImportManifest,
  records: SessionRecord[],
  storeDir: string,
  check: SessionLocksCheck,
): Promise<void> {
  const taken = manifest.ids.filter((id) => staging.isLive(id) && !manifest.replaced.includes(id));
  if (taken.length > 0)
    throw new SessionError('EEXIST', `session(s) created while importing: ${taken.join(', ')}`, {
      details: { ids: taken },
    });
  check();
  manifest.status = 'committing';
  await staging.writeManifest(manifest);
  const index = new ChildrenIndex(storeDir);
  try {
    for (const id of manifest.replaced) {
      if (!staging.isLive(id)) continue;
      check(id);
      await staging.setAside(manifest.op, id);
    }
    for (const record of records) {
      // Index markers go before the record they describe (see tools/store/children-index.ts).
      await index.add(record.parent_session_id, record.agent_id);
      check(record.agent_id);
      await staging.place(manifest.op, record.agent_id);
    }
  } catch (err) {
    await rollBack(staging, manifest);
    throw err;
  }
  manifest.status = 'done';
  await staging.writeManifest(manifest);
}

/** Undoes a commit: placed sessions back to staging (children first), set-aside ones back in place. */
async function rollBack(staging: ImportStaging, manifest: ImportManifest): Promise<void> {
  for (const id of [...manifest.ids].reverse()) {
    if (!staging.isStaged(manifest.op, id) && staging.isLive(id)) await staging.unplace(manifest.op, id);
  }
  for (const id of manifest.replaced) {
    if (staging.isSetAside(manifest.op, id) && !staging.isLive(id)) await staging.putBack(manifest.op, id);
  }
  await staging.discard(manifest.op);
}

/**
 * Finishes imports whose process died: `done` ones keep their result, the others are rolled back
 * (nothing of them stays). Imports still running (their lock is held) are left alone.
 */
export async function recoverImports(sessions: SessionContext): Promise<string[]> {
  const staging = new ImportStaging(sessions.store.dir);
  const recovered: string[] = [];
  for (const op of await staging.ops()) {
    if (await staging.isRunning(op)) continue;
    try {
      // A dead importer's lock is taken over once stale (LOCK_STALE_MS): wait a little longer than that.
      await staging.withOpLock(op, LOCK_STALE_MS + 1000, async () => {
        const manifest = await staging.readManifest(op);
        if (manifest?.status === 'done') await finishDone(sessions, staging, manifest);
        else if (manifest?.status === 'committing') {
          await withSessionLocks(
            sessions.store.dir,
            manifest.ids,
            sessions.settings.lockTimeoutMs + manifest.ids.length * 10,
            () => rollBack(staging, manifest),
          );
        } else await staging.discard(op);
        recovered.push(op);
      });
    } catch (err) {
      if (!isSessionError(err, 'ELOCKED')) throw err;
    }
  }
  if (recovered.length > 0) await sessions.audit('import-recover', [], { ops: recovered });
  return recovered;
}

/** A committed import whose importer died: its backup kept and, unless the trail has it, its `import` entry written. */
async function finishDone(sessions: SessionContext, staging: ImportStaging, manifest: ImportManifest): Promise<void> {
  const backup = await staging.keepBackup(manifest.op);
  const written = (await readAudit(sessions, { action: 'import' })).entries.some((e) => e.details?.op === manifest.op);
  if (!written)
    await sessions.audit('import', manifest.ids, {
      ...manifest.audit,
      op: manifest.op,
      replaced: manifest.replaced,
      backup,
      recovered: true,
    });
  await staging.discard(manifest.op);
}

/**
 * Appends the bundle's audit entries (their original lines and hashes) that this trail lacks. Like
 * any audit append, a failure does not fail the import it follows (see `SessionContext.audit`).
 */
async function replayAudit(sessions: SessionContext, bundle: Bundle): Promise<number> {
  if (bundle.audit.length === 0) return 0;
  try {
    const have = new Set((await readAudit(sessions)).entries.map((e) => e.hash));
    const lines = bundle.audit.filter((e) => !have.has(e.hash)).map((e) => `${JSON.stringify(e)}\n`);
    if (lines.length > 0) await sessions.auditLog.append(lines);
    return lines.length;
  } catch (err) {
    sessions.auditErrors.push(toSessionError(err, "copying the bundle's audit entries"));
    return 0;
  }
}

/** A live session never has its parent in the trash: such a parent is restored first (EREFUSED). */
async function refuseParentsInTrash(
  sessions: SessionContext,
  records: SessionRecord[],
  parents: string[],
): Promise<void> {
  const trash = new Trash(sessions.store.dir);
  for (const parent of parents) {
    if (await isLive(sessions, parent)) continue;
    const holder = (await trash.holding(parent))[0];
    if (!holder) continue;
    const child = records.find((r) => r.parent_session_id === parent)?.agent_id;
    throw new SessionError(
      'EREFUSED',
      `cannot import ${child}: its parent ${parent} is in the trash (entry ${holder}); restore ${parent} first`,
      {
        details: {
          id: child,
          parent,
          entry: holder,
          blocked: [{ id: parent, reason: `in the trash entry ${holder}` }],
        },
      },
    );
  }
}
