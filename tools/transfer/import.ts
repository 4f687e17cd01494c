import { readAudit } from '../audit/read.js';
import type { AuditEntry } from '../audit/entry.js';
import { isSessionError, SessionError, toSessionError } from '../errors.js';
import { breather, throwIfInterrupted } from '../safe-points.js';
import { generateId } from '../ids.js';
import { parseRecord, serializeRecord } from '../record.js';
import type { SessionContext } from '../session-context.js';
import { firstLine, forEachLine, readBundleFile } from './bundle-file.js';
import { ChildrenIndex } from '../store/children-index.js';
import { ImportStaging, type ImportManifest } from '../store/import-stage.js';
import { LOCK_STALE_MS } from '../store/lock.js';
import { withSessionLocks } from '../store/subtree-locks.js';
import { Trash } from '../store/trash.js';
import { isLive } from '../trees/restore.js';
import {
  BundleReader,
  isWholeBundle,
  parseBundleText,
  verifyBundleV1,
  type BundleItem,
  type BundleSummary,
} from './bundle.js';
import { checkOptions, type OptionKeys } from '../options.js';
import { faultPoint } from '../store/fault-points.js';

export type ImportSource = { file: string } | { text: string } | { bundle: unknown };

export interface ImportOptions {
  /** Give colliding sessions new ids (parent links inside the bundle follow). */
  rename?: boolean;
  /** Replace colliding sessions, keeping them in `.backups/import-<op>/`. */
  overwrite?: boolean;
  /** Aborting it stops the import while it stages (nothing imported, EINTERRUPTED); once committing, it finishes. */
  signal?: AbortSignal;
  /** Called as sessions are staged: `done` of `total` (the bundle's own count, known from its first line). */
  onProgress?: (done: number, total: number) => void;
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
  /** Interrupted earlier imports this call finished (or discarded, when they had not begun to commit) first. */
  recovered: string[];
}

/** A staged session: its id and parent link (the record itself is on disk, in the staging area). */
interface Staged {
  id: string;
  parent: string | null;
}

/** Sessions are staged, and made durable, this many at a time. */
const BATCH = 256;
/** Sessions are placed this many at a time, holding their locks (see `commit`). */
const LOCK_BATCH = 64;

/**
 * Validates a bundle and imports all of its sessions, or none (see tools/store/import-stage.ts). The
 * bundle is read once, as it is staged: nothing becomes live before the whole of it is read and its
 * checksum verified.
 */
const IMPORT_KEYS: OptionKeys<ImportOptions> = { rename: true, overwrite: true, signal: true, onProgress: true };

export async function importSessions(
  sessions: SessionContext,
  source: ImportSource,
  options: ImportOptions = {},
): Promise<ImportResult> {
  checkOptions(options, IMPORT_KEYS, 'importSessions');
  checkOptions(source, { file: true, text: true, bundle: true }, 'the source of importSessions');
  if (source === undefined || Object.keys(source).length !== 1)
    throw new SessionError('EINVALID', 'the source of importSessions is one of { file }, { text } or { bundle }');
  if (options.rename && options.overwrite)
    throw new SessionError('EINVALID', '--rename and --overwrite cannot be used together');
  const open = openBundle(source);
  // A file that is no bundle at all is refused before anything else happens.
  await open.check();
  const recovered = await recoverImports(sessions);
  const { store } = sessions;
  const existing = new Set(store.ids());
  const staging = new ImportStaging(store.dir);
  const op = ImportStaging.newOp(sessions.now());
  const audit = {
    op,
    checksum: '',
    renamed: {} as Record<string, string>,
    replaced: [] as string[],
    backup: null as string | null,
  };
  const manifest: ImportManifest = { op, ids: [], replaced: [], status: 'staged', pid: process.pid, audit };
  let auditEntries = 0;
  let staged: Staged[] = [];
  await staging.withOpLock(op, sessions.settings.lockTimeoutMs, async () => {
    try {
      await staging.writeManifest(manifest);
      const read = await stageBundle(staging, op, open, existing, options);
      audit.checksum = read.summary.checksum;
      if (read.collisions.length > 0 && !options.rename && !options.overwrite)
        await refuseRepeat(sessions, staging, op, read.summary, read.collisions);
      staged = read.staged;
      if (options.rename) {
        audit.renamed = renameCollisions(read.collisions, new Set([...existing, ...staged.map((s) => s.id)]), () =>
          generateId(new Date(sessions.now())),
        );
        await restageRenamed(staging, op, staged, audit.renamed);
      }
      if (options.overwrite) audit.replaced = read.collisions;
      manifest.ids = staged.map((s) => s.id);
      manifest.replaced = audit.replaced;
      await staging.writeManifest(manifest);
      throwIfInterrupted(options.signal, 0, staged.length);
      // Index markers go before the records they describe (see tools/store/children-index.ts). They
      // describe no live session until the commit, so they are written before any lock is taken.
      const index = new ChildrenIndex(store.dir);
      // Synchronous writes: a turn of the event loop now and then lets a Ctrl-C be seen here.
      const breathe = breather();
      for (let i = 0; i < staged.length; i += BATCH) {
        await breathe();
        throwIfInterrupted(options.signal, 0, staged.length);
        index.addMany(staged.slice(i, i + BATCH).map((s) => ({ parent: s.parent, child: s.id })));
      }
      // A first look without locks: what is refused is refused before anything moves (each batch looks
      // again under its locks, and a change meanwhile rolls the commit back).
      const inBundle = new Set(manifest.ids);
      const outside = (batch: Staged[]) => [
        ...new Set(batch.map((r) => r.parent).filter((p): p is string => p !== null && !inBundle.has(p))),
      ];
      await refuseParentsInTrash(sessions, staged, outside(staged));
      refuseTaken(staging, manifest);
      await breathe();
      throwIfInterrupted(options.signal, 0, staged.length);
      await commit(sessions, staging, manifest, placingOrder(staged), outside, options.signal);
      options.onProgress?.(staged.length, staged.length);
    } catch (err) {
      if (manifest.status === 'staged') await staging.discard(op);
      throw err;
    }
    // Still under the import's lock, and the staging (manifest `done`) dropped only once the entry is
    // written: an importer killed before that has its entry written by the recovery that finishes it.
    audit.backup = await staging.keepBackup(op);
    auditEntries = await replayAudit(sessions, staging, op);
    await sessions.audit('import', manifest.ids, audit);
    await staging.discard(op);
  });
  const known = new Set([...manifest.ids, ...store.ids()]);
  const orphans = staged.filter((r) => r.parent !== null && !known.has(r.parent));
  return {
    imported: manifest.ids,
    renamed: audit.renamed,
    replaced: audit.replaced,
    backup: audit.backup,
    audit_entries: auditEntries,
    orphans: orphans.map((r) => r.id),
    recovered,
  };
}

/** A bundle to read: `check` refuses what is no bundle at all; `read` hands over its items and verifies it. */
interface OpenBundle {
  check(): Promise<void>;
  read(onStart: (expected: number) => void, onItem: (item: BundleItem) => Promise<void>): Promise<BundleSummary>;
}

/**
 * A version 2 bundle (lines) is read as it is staged; a version 1 bundle (one JSON document, or a
 * library caller's parsed object) is parsed and verified whole first.
 */
function openBundle(source: ImportSource): OpenBundle {
  if ('bundle' in source) return wholeBundle(() => Promise.resolve(source.bundle));
  if ('text' in source) {
    const first = source.text.slice(0, Math.max(0, source.text.indexOf('\n')) || source.text.length);
    if (!isLineBundle(first)) return wholeBundle(async () => parseBundleText(source.text));
    const lines = source.text.split('\n');
    return lineBundle(async (onLine) => {
      for (const line of lines) await onLine(Buffer.from(line, 'utf8'));
    });
  }
  let line: string | undefined;
  const isLines = () => (line ??= firstLine(source.file)) !== undefined && isLineBundle(line);
  const whole = wholeBundle(async () => parseBundleText(await readBundleFile(source.file)));
  const lines = lineBundle((onLine) => forEachLine(source.file, onLine));
  return {
    check: async () => (isLines() ? lines.check() : whole.check()),
    read: (onStart, onItem) => (isLines() ? lines.read(onStart, onItem) : whole.read(onStart, onItem)),
  };
}

/** Whether a first line is a line-based bundle's header (anything else is read as one JSON document). */
function isLineBundle(first: string): boolean {
  try {
    const raw = JSON.parse(first) as unknown;
    return !isWholeBundle(raw) && typeof raw === 'object' && raw !== null && 'format_version' in raw;
  } catch {
    return false;
  }
}

function wholeBundle(load: () => Promise<unknown>): OpenBundle {
  let verified: ReturnType<typeof verifyBundleV1> | undefined;
  const check = async () => {
    verified ??= verifyBundleV1(await load());
  };
  return {
    check,
    read: async (onStart, onItem) => {
      await check();
      onStart(verified!.records.length);
      for (const record of verified!.records) await onItem({ session: record });
      for (const entry of verified!.audit) await onItem({ audit: entry });
      return verified!.summary;
    },
  };
}

function lineBundle(each: (onLine: (line: Buffer) => Promise<void>) => Promise<void>): OpenBundle {
  return {
    // The header is checked with the first line read; a version 2 bundle is verified as it is staged.
    check: async () => undefined,
    read: async (onStart, onItem) => {
      const reader = new BundleReader();
      let started = false;
      await each(async (line) => {
        const item = reader.line(line);
        if (!started && reader.exportedAt !== '') {
          started = true;
          onStart(reader.expected);
        }
        if (item) await onItem(item);
      });
      return reader.finish();
    },
  };
}

interface StagedBundle {
  summary: BundleSummary;
  staged: Staged[];
  /** Ids of the bundle that exist in the store. */
  collisions: string[];
}

/**
 * Reads the bundle into the staging area, in durable batches. A collision without --rename or
 * --overwrite stops the staging (the import is refused) but the bundle is still read to its end, so
 * that a changed bundle is reported as such and an already imported one can be recognised.
 */
async function stageBundle(
  staging: ImportStaging,
  op: string,
  bundle: OpenBundle,
  existing: Set<string>,
  options: ImportOptions,
): Promise<StagedBundle> {
  const staged: Staged[] = [];
  const collisions: string[] = [];
  let unsynced = 0;
  let auditLines: string[] = [];
  let expected = 0;
  const flush = async () => {
    throwIfInterrupted(options.signal, 0, Math.max(expected, staged.length));
    await staging.syncWritten(op);
    unsynced = 0;
    options.onProgress?.(staged.length, Math.max(expected, staged.length));
  };
  const summary = await bundle.read(
    (n) => (expected = n),
    async (item) => {
      if ('audit' in item) {
        auditLines.push(`${JSON.stringify(item.audit satisfies AuditEntry)}\n`);
        if (auditLines.length >= BATCH) {
          staging.stageAudit(op, auditLines);
          auditLines = [];
        }
        return;
      }
      const record = item.session;
      if (existing.has(record.agent_id)) collisions.push(record.agent_id);
      if (collisions.length > 0 && !options.rename && !options.overwrite) return;
      staged.push({ id: record.agent_id, parent: record.parent_session_id });
      // Written at once, synced by the batch: a record never outlives its line (memory stays flat).
      await staging.write(op, record.agent_id, serializeRecord(record));
      if (++unsynced >= BATCH) await flush();
    },
  );
  staging.stageAudit(op, auditLines);
  await flush();
  return { summary, staged, collisions };
}

/** New ids for the colliding sessions (`taken`: every id of the store and of the bundle). */
function renameCollisions(collisions: string[], taken: Set<string>, newId: () => string): Record<string, string> {
  const renamed: Record<string, string> = {};
  for (const id of collisions) {
    let fresh = newId();
    while (taken.has(fresh)) fresh = newId();
    taken.add(fresh);
    renamed[id] = fresh;
  }
  return renamed;
}

/** Stages again, under their new ids and parent links, the sessions `--rename` changes. */
async function restageRenamed(
  staging: ImportStaging,
  op: string,
  staged: Staged[],
  renamed: Record<string, string>,
): Promise<void> {
  const rewrite = (id: string | null) => (id === null ? null : (renamed[id] ?? id));
  let batch: { id: string; text: string }[] = [];
  for (const s of staged) {
    if (renamed[s.id] === undefined && (s.parent === null || renamed[s.parent] === undefined)) continue;
    const record = parseRecord(staging.readStaged(op, s.id), s.id);
    await staging.unstage(op, s.id);
    s.id = rewrite(s.id)!;
    s.parent = rewrite(s.parent);
    batch.push({ id: s.id, text: serializeRecord({ ...record, agent_id: s.id, parent_session_id: s.parent }) });
    if (batch.length >= BATCH) {
      await staging.stageBatch(op, batch);
      batch = [];
    }
  }
  await staging.stageBatch(op, batch);
}

/**
 * A collision with sessions an earlier import of this same bundle brought in (its `import` entry
 * names them) is the rerun of a finished import: say so, and copy the bundle's audit entries the
 * trail still lacks (an importer killed before copying them). Otherwise the collisions are refused.
 */
async function refuseRepeat(
  sessions: SessionContext,
  staging: ImportStaging,
  op: string,
  bundle: BundleSummary,
  colliding: string[],
): Promise<never> {
  const earlier = (await readAudit(sessions, { action: 'import' })).entries.filter(
    (e) => e.details?.checksum === bundle.checksum,
  );
  const covered = new Set(earlier.flatMap((e) => e.ids));
  if (earlier.length === 0 || !colliding.every((id) => covered.has(id))) {
    throw new SessionError(
      'EEXIST',
      `${colliding.length} session(s) of the bundle already exist (${colliding.slice(0, 5).join(', ')}); ` +
        'use --rename or --overwrite',
      { details: { ids: colliding } },
    );
  }
  const copied = await replayAudit(sessions, staging, op);
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

/** How long a batch waits for its locks: the usual timeout, and a little more per lock. */
function lockWaitMs(sessions: SessionContext, ids: string[]): number {
  return sessions.settings.lockTimeoutMs + ids.length * 10;
}

/** Ids of the bundle that are live in the store (and not ones `--overwrite` replaces). */
function refuseTaken(staging: ImportStaging, manifest: ImportManifest, ids: string[] = manifest.ids): void {
  const replaced = new Set(manifest.replaced);
  const taken = ids.filter((id) => !replaced.has(id) && staging.isLive(id));
  if (taken.length > 0)
    throw new SessionError('EEXIST', `session(s) created while importing: ${taken.join(', ')}`, {
      details: { ids: taken },
    });
}

/**
 * The order sessions are placed in: deepest first, so a session goes live only once its children in
 * the bundle are: a session of the bundle that is live never has a parent of the bundle still to come
 * that another process could send to the trash meanwhile (a parent not yet live cannot be deleted).
 */
function placingOrder(staged: Staged[]): Staged[] {
  const parentOf = new Map(staged.map((s) => [s.id, s.parent]));
  const depth = new Map<string, number>();
  const depthOf = (id: string): number => {
    const path: string[] = [];
    let at: string | null | undefined = id;
    // A parent link that loops (a hand-made bundle) ends the walk: every id is visited once.
    while (at != null && parentOf.has(at) && !depth.has(at) && !path.includes(at)) {
      path.push(at);
      at = parentOf.get(at);
    }
    let d = at != null && depth.has(at) ? depth.get(at)! : -1;
    for (let i = path.length - 1; i >= 0; i--) depth.set(path[i]!, ++d);
    return depth.get(id)!;
  };
  return staged
    .map((s, i) => ({ s, i, d: depthOf(s.id) }))
    .sort((a, b) => b.d - a.d || a.i - b.i)
    .map((x) => x.s);
}

/**
 * Places the staged sessions, LOCK_BATCH at a time: each batch under the locks of its ids and of its
 * parents outside the bundle (none of which goes to the trash meanwhile), looked at again under them,
 * what `--overwrite` replaces set aside, each session renamed into place; then the locks are let go
 * of. Holding a bounded number of locks keeps the memory and each refresh pass small however large
 * the bundle. The store directory is synced once, after the last batch. On a failure every session
 * placed is moved back (each batch under its locks again) and the replaced ones put back.
 */
async function commit(
  sessions: SessionContext,
  staging: ImportStaging,
  manifest: ImportManifest,
  order: Staged[],
  outside: (batch: Staged[]) => string[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const replaced = new Set(manifest.replaced);
  // Said committing only once the manifest says so: a write that fails (a full disk) leaves an import
  // that never began to commit, which the caller discards.
  await faultPoint('import-committing');
  await staging.writeManifest({ ...manifest, status: 'committing' });
  manifest.status = 'committing';
  const done: Staged[][] = [];
  const breathe = breather();
  try {
    for (let i = 0; i < order.length; i += LOCK_BATCH) {
      const batch = order.slice(i, i + LOCK_BATCH);
      const parents = outside(batch);
      const ids = batch.map((s) => s.id);
      await withSessionLocks(
        sessions.store.dir,
        [...ids, ...parents],
        lockWaitMs(sessions, ids),
        async (check) => {
          await refuseParentsInTrash(sessions, batch, parents);
          for (const id of ids) check(id);
          refuseTaken(staging, manifest, ids);
          done.push(batch);
          for (const s of batch) {
            if (!replaced.has(s.id) || !staging.isLive(s.id)) continue;
            check(s.id);
            await staging.setAside(manifest.op, s.id);
          }
          for (const s of batch) {
            // The timers (the import's own lock) run at least every 100 ms of renames.
            await breathe();
            await faultPoint('import-place');
            check(s.id);
            staging.place(manifest.op, s.id);
          }
        },
        // Once committing, an import finishes: the signal only ends a wait for a lock, before the first batch.
        done.length === 0 ? signal : undefined,
      );
    }
    await staging.syncStore();
  } catch (err) {
    await rollBack(sessions, staging, manifest, done);
    throw err;
  }
  manifest.status = 'done';
  await staging.writeManifest(manifest);
  await faultPoint('import-done');
}

/**
 * Undoes a commit, the last batch first, each under its locks: placed sessions back to staging, set-aside
 * ones back in place. Nothing is known to be placed before its batch's locks were taken.
 */
async function rollBack(
  sessions: SessionContext,
  staging: ImportStaging,
  manifest: ImportManifest,
  done: Staged[][],
): Promise<void> {
  for (const batch of [...done].reverse()) {
    const ids = batch.map((s) => s.id);
    await withSessionLocks(sessions.store.dir, ids, lockWaitMs(sessions, ids), async () => {
      for (const id of [...ids].reverse()) {
        if (!staging.isStaged(manifest.op, id) && staging.isLive(id)) await staging.unplace(manifest.op, id);
      }
      for (const id of ids) {
        if (staging.isSetAside(manifest.op, id) && !staging.isLive(id)) await staging.putBack(manifest.op, id);
      }
    });
  }
  await staging.discard(manifest.op);
}

/**
 * Finishes a commit whose importer died, under the locks of its ids (LOCK_BATCH at a time): sets
 * aside what it replaces, places what is still staged, syncs the store directory, and marks it done.
 * Finishing, not undoing: the bundle was read and checked whole before the commit began, and once the
 * dead importer's locks went stale the sessions it had placed may have been written to (or got
 * children), which a rollback would throw away. An id live again meanwhile (another import of the
 * same bundle) keeps what is live; its staged copy is dropped with the staging.
 */
async function rollForward(sessions: SessionContext, staging: ImportStaging, manifest: ImportManifest): Promise<void> {
  const replaced = new Set(manifest.replaced);
  for (let i = 0; i < manifest.ids.length; i += LOCK_BATCH) {
    const ids = manifest.ids.slice(i, i + LOCK_BATCH);
    await withSessionLocks(sessions.store.dir, ids, lockWaitMs(sessions, ids), async () => {
      for (const id of ids) {
        if (
          replaced.has(id) &&
          staging.isStaged(manifest.op, id) &&
          staging.isLive(id) &&
          !staging.isSetAside(manifest.op, id)
        )
          await staging.setAside(manifest.op, id);
      }
      for (const id of ids) {
        if (staging.isStaged(manifest.op, id) && !staging.isLive(id)) staging.place(manifest.op, id);
      }
    });
  }
  await staging.syncStore();
  manifest.status = 'done';
  await staging.writeManifest(manifest);
}

/**
 * Finishes imports whose process died: a commit under way or done is finished (its `import` entry
 * written), an import that had not begun to commit is discarded (nothing of it is live). Imports
 * still running (their lock is held) are left alone, and so is one whose manifest cannot be read
 * (doctor reports it): its `replaced/` may hold the only copy of the sessions it replaced.
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
        if (manifest?.status === 'committing') {
          await rollForward(sessions, staging, manifest);
        }
        if (manifest?.status === 'done') await finishDone(sessions, staging, manifest);
        else await staging.discard(op);
        recovered.push(op);
      });
    } catch (err) {
      if (!isSessionError(err, 'ELOCKED') && !isSessionError(err, 'ECORRUPT')) throw err;
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
 * Appends the bundle's audit entries (their original lines and hashes, staged as the bundle was read)
 * that this trail lacks. Like any audit append, a failure does not fail the import it follows (see
 * `SessionContext.audit`).
 */
async function replayAudit(sessions: SessionContext, staging: ImportStaging, op: string): Promise<number> {
  try {
    if (!staging.hasStagedAudit(op)) return 0;
    const have = new Set((await readAudit(sessions)).entries.map((e) => e.hash));
    let copied = 0;
    await staging.forEachStagedAudit(op, async (lines) => {
      const fresh: string[] = [];
      for (const line of lines) {
        const hash = (JSON.parse(line) as AuditEntry).hash;
        if (have.has(hash)) continue;
        have.add(hash);
        fresh.push(`${line}\n`);
      }
      if (fresh.length > 0) await sessions.auditLog.append(fresh);
      copied += fresh.length;
    });
    return copied;
  } catch (err) {
    sessions.auditErrors.push(toSessionError(err, "copying the bundle's audit entries"));
    return 0;
  }
}

/** A live session never has its parent in the trash: such a parent is restored first (EREFUSED). */
async function refuseParentsInTrash(sessions: SessionContext, staged: Staged[], parents: string[]): Promise<void> {
  const trash = new Trash(sessions.store.dir);
  for (const parent of parents) {
    if (await isLive(sessions, parent)) continue;
    const holder = (await trash.holding(parent))[0];
    if (!holder) continue;
    const child = staged.find((r) => r.parent === parent)?.id;
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
