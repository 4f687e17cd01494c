import { scanAudit } from '../audit/read.js';
import { isSessionError, SessionError } from '../errors.js';
import { throwIfInterrupted } from '../safe-points.js';
import type { SessionContext } from '../session-context.js';
import { ImportStaging } from '../store/import-stage.js';
import { storeExists } from '../store/project.js';
import { Trash } from '../store/trash.js';
import { recoverImports } from '../transfer/import.js';
import type { ParentLink } from '../trees/index-health.js';
import { recoverTrash } from '../trees/recover.js';
import { checkHookFailures } from './hook-failures.js';
import { checkLayout, guarded } from './layout.js';
import {
  checkIndex,
  checkParents,
  checkRecords,
  checkStrays,
  type DoctorFinding,
  type Found,
  type StoreSnapshot,
} from './checks.js';
import { checkOptions, type OptionKeys } from '../options.js';

export type { DoctorFinding } from './checks.js';

export interface DoctorOptions {
  repair?: boolean;
  /** Aborting it stops the repairs between two (EINTERRUPTED); the ones made are audited. */
  signal?: AbortSignal;
  /**
   * A problem with the settings (an invalid config file or environment variable), found by the caller
   * that then opened the store with the defaults: reported as an error finding, not thrown.
   */
  configProblem?: { file: string; message: string };
  /** Called now and then while the sessions are checked: `done` of `total` sessions (a progress bar). */
  onProgress?: (done: number, total: number) => void;
}

export interface DoctorReport {
  /** No errors left (after the repairs, with `repair`). Warnings do not count. */
  healthy: boolean;
  /** The store checked; `exists` false: there is none (the only finding then is that, and a config problem). */
  store: { dir: string; exists: boolean };
  checked: { sessions: number; audit_entries: number; trash_entries: number };
  /** What the check found (before any repair). */
  findings: DoctorFinding[];
  /** With `repair`: one line per repair made, or why it failed. */
  repairs: string[];
  /** With `repair`: errors a second check still finds. */
  remaining: DoctorFinding[];
}

/** Checks the whole store; with `repair`, fixes what can be fixed without losing data, then checks again. */
const DOCTOR_KEYS: OptionKeys<DoctorOptions> = { repair: true, signal: true, configProblem: true, onProgress: true };

export async function doctor(sessions: SessionContext, options: DoctorOptions = {}): Promise<DoctorReport> {
  checkOptions(options, DOCTOR_KEYS, 'doctor');
  const config: DoctorFinding[] = options.configProblem
    ? [{ check: 'config', severity: 'error', subject: options.configProblem.file, ...configText(options) }]
    : [];
  if (!storeExists(sessions.store.dir)) return missingStore(sessions.store.dir, config, options);
  const first = await examine(sessions, options.onProgress);
  const findings = [...config, ...first.found.map(strip)];
  const store = { dir: sessions.store.dir, exists: true };
  if (!options.repair)
    return { healthy: !findings.some(isError), store, checked: first.checked, findings, repairs: [], remaining: [] };
  const repairs: string[] = [];
  const fixes = first.found.filter((f) => f.fix);
  const audited = () =>
    repairs.length > 0
      ? sessions.audit('doctor-repair', [], { repairs: repairs.slice(0, 20), count: repairs.length })
      : undefined;
  for (const finding of fixes) {
    if (options.signal?.aborted) {
      await audited();
      throwIfInterrupted(options.signal, repairs.length, fixes.length);
    }
    try {
      repairs.push(await finding.fix!());
    } catch (err) {
      repairs.push(`could not repair ${finding.subject}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  await audited();
  const remaining = [...config, ...(await examine(sessions)).found.map(strip).filter(isError)];
  return { healthy: remaining.length === 0, store, checked: first.checked, findings, repairs, remaining };
}

function configText({ configProblem }: DoctorOptions): { message: string; repair: null } {
  const message = withoutFile(configProblem!.message, configProblem!.file);
  return { message: `${message} (the hooks fail open on it; checked with the defaults)`, repair: null };
}

/** The settings' message without the config file's name: the finding's subject names it already. */
function withoutFile(message: string, file: string): string {
  return message
    .replace(` in ${file}`, '')
    .replace(`names no file: ${file}`, 'names no file')
    .replace(`config file ${file} `, 'it ')
    .replace(`config file ${file}:`, 'it:')
    .replace(`${file} must`, 'it must');
}

/**
 * No store: nothing recorded here yet, or the wrong directory. An error for a check (the question was
 * "is this store healthy?"); with `repair`, which cron jobs run on fresh projects too, a warning.
 */
function missingStore(dir: string, config: DoctorFinding[], options: DoctorOptions): DoctorReport {
  const finding: DoctorFinding = {
    check: 'store',
    severity: options.repair ? 'warning' : 'error',
    subject: dir,
    message: 'the store does not exist: no sessions have been recorded here yet',
    repair: null,
  };
  const findings = [...config, finding];
  const errors = findings.filter(isError);
  return {
    healthy: errors.length === 0,
    store: { dir, exists: false },
    checked: { sessions: 0, audit_entries: 0, trash_entries: 0 },
    findings,
    repairs: [],
    remaining: options.repair ? errors : [],
  };
}

async function examine(
  sessions: SessionContext,
  progress?: DoctorOptions['onProgress'],
): Promise<{ found: Found[]; checked: DoctorReport['checked'] }> {
  const dirs = sessions.store.ids();
  // Each session is read twice (its record, then its directory's names): the bar counts half a session for each.
  const total = dirs.length;
  let read = 0;
  // Only the parent links are kept: the checks need no more of a record, and a large store's records
  // do not fit in memory at once.
  const records: ParentLink[] = [];
  const problems = sessions.store.scanEach((r) => {
    records.push({ agent_id: r.agent_id, parent_session_id: r.parent_session_id });
    if (++read % 256 === 0) progress?.(read >> 1, total);
  }, dirs);
  const snap: StoreSnapshot = { records, problems, dirs };
  const dir = sessions.store.dir;
  const imports = await guarded('import', dir, [], () => checkImports(sessions));
  const trash = await guarded('trash', dir, { found: [], entries: 0, held: new Map<string, string>() }, () =>
    checkTrash(sessions),
  );
  const audit = await guarded('audit', dir, { found: [], entries: 0 }, () => checkAudit(sessions));
  // Audit first: its repair ends a torn last line before other repairs append their entries.
  const found = [
    ...audit.found,
    ...audit.value.found,
    ...checkLayout(dir),
    ...imports.found,
    ...imports.value,
    ...trash.found,
    ...trash.value.found,
    ...checkRecords(sessions, snap),
    ...checkParents(snap, trash.value.held),
    ...(await checkIndex(sessions, snap)),
    ...checkStrays(sessions, snap, (listed) => progress?.((total + listed) >> 1, total)),
    ...checkHookFailures(dir, sessions.now()),
  ];
  progress?.(total, total);
  return {
    found,
    checked: {
      sessions: records.length + problems.length,
      audit_entries: audit.value.entries,
      trash_entries: trash.value.entries,
    },
  };
}

function strip({ fix: _fix, ...finding }: Found): DoctorFinding {
  return finding;
}

function isError(finding: DoctorFinding): boolean {
  return finding.severity === 'error';
}

/** Interrupted imports (tools/store/import-stage.ts); repaired by rolling them back. */
async function checkImports(sessions: SessionContext): Promise<Found[]> {
  const staging = new ImportStaging(sessions.store.dir);
  const found: Found[] = [];
  for (const op of await staging.ops()) {
    if (await staging.isRunning(op)) continue;
    const unreadable = await staging.readManifest(op).then(
      () => null,
      (err: Error) => err.message,
    );
    if (unreadable !== null) {
      // Never rolled back blind: its replaced/ may hold the only copy of sessions it replaced.
      found.push({
        check: 'import',
        severity: 'error',
        subject: staging.opPath(op),
        message: `an interrupted import left as it is: ${unreadable}; its replaced/ holds the sessions it replaced`,
        repair: null,
      });
      continue;
    }
    // recoverImports handles every interrupted import at once: the first finding carries the fix.
    const fix = async () =>
      `recovered import(s) ${(await recoverImports(sessions)).join(', ') || 'none (already done)'}`;
    found.push({
      check: 'import',
      severity: 'error',
      subject: staging.opPath(op),
      message: 'an import that was interrupted',
      repair: 'roll it back (or finish it if it had committed)',
      ...(found.some((f) => f.fix) ? {} : { fix }),
    });
  }
  return found;
}

/**
 * Trash entries (tools/store/trash.ts). An entry that is not complete hides its sessions: an
 * interrupted one is repaired by recovery (moved back, or kept restorable); one whose process still
 * runs is reported too. A complete entry must hold every session. Also returns which entry holds
 * each session, for the parent check.
 */
async function checkTrash(
  sessions: SessionContext,
): Promise<{ found: Found[]; entries: number; held: Map<string, string> }> {
  const trash = new Trash(sessions.store.dir);
  const entries = await trash.entries();
  const found: Found[] = [];
  const held = new Map<string, string>();
  // recoverTrash repairs every interrupted entry at once: the first finding carries the fix.
  const recover = async () => {
    const done = (await recoverTrash(sessions)).map((r) => `${r.entry} ${r.action}`).join(', ');
    return `recovered trash: ${done || 'nothing left to do'}`;
  };
  const withFix = () => (found.some((f) => f.check === 'trash' && f.fix) ? {} : { fix: recover });
  for (const entry of entries) {
    const subject = `.trash/${entry}`;
    const manifest = await trash
      .read(entry)
      .catch((err: unknown) => (isSessionError(err) ? err : new SessionError('EIO', String(err))));
    const present = await trash.present(entry);
    for (const id of present) held.set(id, entry);
    if (manifest instanceof SessionError) {
      found.push({ check: 'trash', severity: 'error', subject, message: manifest.message, repair: null });
    } else if (manifest === undefined) {
      const message =
        present.length === 0
          ? 'an empty trash entry without a manifest (a delete that never started)'
          : `a trash entry without a manifest, holding ${present.join(', ')}`;
      const repair = present.length === 0 ? 'remove it (once the process that made it is gone)' : null;
      found.push({ check: 'trash', severity: 'error', subject, message, repair, ...(repair ? withFix() : {}) });
    } else if (manifest.status === 'complete' || manifest.status === 'restored') {
      const missing =
        manifest.status === 'complete' ? manifest.sessions.map((s) => s.id).filter((id) => !present.includes(id)) : [];
      if (missing.length > 0)
        found.push({
          check: 'trash',
          severity: 'error',
          subject,
          message: `sessions missing from the entry: ${missing.join(', ')}`,
          repair: null,
        });
    } else {
      const what = manifest.status === 'restoring' ? 'a restore' : `a ${manifest.reason}`;
      // A restore of some subtrees of an entry hides only those; the others stay in the trash on purpose.
      const restoring = manifest.status === 'restoring' && manifest.restoring ? new Set(manifest.restoring) : undefined;
      const stuck = restoring ? present.filter((id) => restoring.has(id)) : present;
      const listed = stuck.length > 10 ? `${stuck.slice(0, 10).join(', ')}, …` : stuck.join(', ');
      const hidden = `${stuck.length} session(s) are hidden in it${stuck.length > 0 ? `: ${listed}` : ''}`;
      if (trash.interrupted(manifest)) {
        const repair = manifest.status === 'restoring' ? 'finish the restore' : 'move its sessions back into the store';
        found.push({
          check: 'trash',
          severity: 'error',
          subject,
          message: `${what} that was interrupted (status ${manifest.status}); ${hidden}`,
          repair,
          ...withFix(),
        });
      } else {
        // Recovery waits for the entry's lock: a process that died a moment ago is found out then.
        const repair = 'none while it runs; if its process died a moment ago, as for an interrupted one';
        found.push({
          check: 'trash',
          severity: 'error',
          subject,
          message: `${what} in progress (pid ${manifest.pid}); ${hidden} until it finishes`,
          repair,
          ...withFix(),
        });
      }
    }
  }
  return { found, entries: entries.length, held };
}

/** Bad audit lines; repaired by copying them to the quarantine and acknowledging them in the trail. */
function checkAudit(sessions: SessionContext): { found: Found[]; entries: number } {
  const scan = scanAudit(sessions, false);
  const log = sessions.auditLog;
  const bad = scan.bad.filter((b) => !b.acknowledged);
  const found: Found[] = bad.map(({ problem }) => ({
    check: 'audit',
    severity: 'error',
    subject: `${problem.file}:${problem.line}`,
    message: `a ${problem.reason === 'hash' ? 'changed' : problem.reason} audit line`,
    repair: 'copy it to the quarantine and acknowledge it',
  }));
  if (bad.length > 0) {
    found[0]!.fix = async () => {
      // A torn last line would swallow the next append: end it first.
      if (log.endsTorn()) log.appendRaw('\n');
      const file = await log.quarantineLines(
        bad.map((b) => b.raw),
        sessions.now(),
      );
      const digests = bad.map((b) => b.problem.digest);
      // 25 digests keep each acknowledging entry under the details size limit.
      for (let i = 0; i < digests.length; i += 25)
        await sessions.audit('audit-repair', [], { digests: digests.slice(i, i + 25), quarantine: file });
      return `copied ${bad.length} bad audit line(s) to ${file} and acknowledged them`;
    };
  }
  return { found, entries: scan.count };
}
