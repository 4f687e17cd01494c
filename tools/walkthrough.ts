import type { JsonObject } from './merge-patch.js';
import type { SessionRecord } from './record.js';
import { Sessions } from './sessions.js';
import { makeTempProject } from './store/project.js';
import { cleanup } from './trees/cleanup.js';

/** One step of the demo: the command it stands for, the session it acted on, what it did and its result. */
export interface DemoStep {
  step: number;
  command: string;
  session: string | null;
  did: string;
  result: JsonObject;
}

export interface DemoRun {
  project: string;
  store: string;
}

const MINUTE = 60_000;

type Step = (command: string, session: string | null, did: string, result: JsonObject) => void;

/**
 * A walkthrough of the lifecycle in a throw-away project. Every call that changes or asks the store is
 * one step handed to `log`, so what the demo prints is all it did.
 */
export async function runDemo(log: (step: DemoStep) => void, start: (run: DemoRun) => void): Promise<DemoRun> {
  const project = makeTempProject();
  const sessions = Sessions.open({ cwd: project, env: {} });
  const run = { project, store: sessions.store.dir };
  start(run);
  let n = 0;
  const step: Step = (command, session, did, result) => log({ step: ++n, command, session, did, result });
  const id = await pauseForApproval(sessions, step);
  await finish(sessions, id, step);
  const other = await sessions.create({ agentName: 'debugger', purpose: 'Flaky test' });
  const did = `created ${other.agent_id} for agent debugger, phase ${other.phase}; it never finishes`;
  step('create', other.agent_id, did, { phase: other.phase });
  await listAndClean(sessions, project, step);
  return run;
}

/** create, investigating, approval, and the resume decision now and once the window has passed. */
async function pauseForApproval(sessions: Sessions, step: Step): Promise<string> {
  const s = await sessions.create({
    agentName: 'code-reviewer',
    purpose: 'Review the payment refactor',
    metadata: { pr: 42 },
  });
  const id = s.agent_id;
  step('create', id, `created ${id} for agent code-reviewer, phase ${s.phase}`, {
    phase: s.phase,
    metadata: s.metadata,
  });
  const found = await sessions.update(id, { phase: 'investigating', metadata: { files: 12 } });
  const merged = `metadata merged: ${JSON.stringify(found.metadata)}`;
  step('update', id, `${s.phase} -> investigating (resumable); ${merged}`, {
    phase: found.phase,
    metadata: found.metadata,
  });
  const paused = await sessions.update(id, { phase: 'approval' });
  step('update', id, `investigating -> approval: paused for a human (resume_ready ${paused.resume_ready})`, {
    phase: paused.phase,
    resume_ready: paused.resume_ready,
  });
  const yes = await sessions.shouldResume(id);
  step('should-resume', id, `${yes.resume} (${yes.reason}): ${yes.detail}`, answer(yes));
  const later = await sessions.shouldResume(id, sessions.now() + 31 * MINUTE);
  step('should-resume', id, `${later.resume} (${later.reason}) when asked 31 min later: ${later.detail}`, {
    ...answer(later),
    asked_minutes_later: 31,
  });
  return id;
}

/** Approved: executing, completed, and no resume after that. */
async function finish(sessions: Sessions, id: string, step: Step): Promise<void> {
  const resumed = await sessions.update(id, { phase: 'executing' });
  step('update', id, 'approval -> executing: approved, the agent carries on', { phase: resumed.phase });
  const done = await sessions.finalize(id, 'completed', 'Approved and merged');
  const path = phasePath(done);
  step('finalize', id, `executing -> ${done.phase}; ${path.length - 1} phase changes recorded: ${path.join(' -> ')}`, {
    phase: done.phase,
    outcome: done.outcome ?? null,
    summary: done.summary ?? null,
    phases: path,
  });
  const after = await sessions.shouldResume(id);
  step('should-resume', id, `${after.resume} (${after.reason})`, answer(after));
}

/** list, then cleanup as it would run 25 hours later. */
async function listAndClean(sessions: Sessions, project: string, step: Step): Promise<void> {
  const { sessions: listed } = await sessions.list();
  const rows = listed.map((x) => ({ id: x.agent_id, phase: x.phase }));
  step('list', null, rows.map((r) => `${r.id} [${r.phase}]`).join(', '), { sessions: rows });
  const tomorrow = Sessions.open({ cwd: project, env: {}, now: () => Date.now() + 25 * 60 * MINUTE });
  const report = await cleanup(tomorrow);
  const kept = listed.map((x) => x.agent_id).filter((x) => !report.removed.includes(x));
  const purged = report.purged.map((p) => `${p.id} (${p.reason})`).join(', ') || 'none';
  step(
    'cleanup',
    null,
    `25 h later (default cutoff 24 h), of ${report.scanned} sessions: moved to the trash ${purged}; ` +
      `kept ${kept.join(', ') || 'none'} (not finished, not stuck long enough to be abandoned)` +
      report.abandoned.map((a) => `; abandoned ${a.id} (${a.reason})`).join(''),
    {
      purged: report.purged,
      kept,
      abandoned: report.abandoned,
      scanned: report.scanned,
      trash_entries: report.backups,
    },
  );
}

function answer(a: { resume: boolean; reason: string; detail: string }): JsonObject {
  return { resume: a.resume, reason: a.reason, detail: a.detail };
}

/** The phases the session went through, from its history. */
function phasePath(record: SessionRecord): string[] {
  const path: string[] = [];
  for (const h of record.history.filter((e) => e.from_phase !== e.to_phase)) {
    if (path.length === 0 && h.from_phase) path.push(h.from_phase);
    path.push(h.to_phase);
  }
  return path;
}

/** The text of a step, as `demo` prints it. */
export function formatStep(s: DemoStep): string {
  return `${String(s.step).padStart(2)}. ${s.command.padEnd(13)} -> ${s.did}`;
}
