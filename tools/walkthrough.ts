import { Sessions } from './sessions.js';
import { makeTempProject } from './store/project.js';
import { cleanup } from './trees/cleanup.js';

/** A walkthrough of the lifecycle in a throw-away project; `log` receives each step. */
export async function runDemo(log: (line: string) => void): Promise<string> {
  const project = makeTempProject();
  const sessions = Sessions.open({ cwd: project, env: {} });
  log(`Project: ${project}`);
  log(`Store:   ${sessions.store.dir}`);

  const s = await sessions.create({
    agentName: 'code-reviewer',
    purpose: 'Review the payment refactor',
    metadata: { pr: 42 },
  });
  log(`1. create       -> ${s.agent_id} (phase ${s.phase})`);
  await sessions.update(s.agent_id, { phase: 'investigating', metadata: { files: 12 } });
  log('2. update       -> investigating (resumable, metadata merged)');
  const paused = await sessions.update(s.agent_id, { phase: 'approval' });
  log(`3. update       -> approval: paused for a human (resume_ready ${paused.resume_ready})`);
  const yes = await sessions.shouldResume(s.agent_id);
  log(`4. should-resume-> ${yes.resume} (${yes.reason}): ${yes.detail}`);
  const later = await sessions.shouldResume(s.agent_id, sessions.now() + 31 * 60_000);
  log(`   ...31 min later -> ${later.resume} (${later.reason})`);
  await sessions.update(s.agent_id, { phase: 'executing' });
  const done = await sessions.finalize(s.agent_id, 'completed', 'Approved and merged');
  log(`5. finalize     -> ${done.phase}, ${done.history.length} phase changes recorded`);
  const after = await sessions.shouldResume(s.agent_id);
  log(`6. should-resume-> ${after.resume} (${after.reason})`);
  const other = await sessions.create({ agentName: 'debugger', purpose: 'Flaky test' });
  const { sessions: listed } = await sessions.list();
  log(`7. list         -> ${listed.map((x) => `${x.agent_id} [${x.phase}]`).join(', ')}`);
  const tomorrow = Sessions.open({ cwd: project, env: {}, now: () => Date.now() + 25 * 3_600_000 });
  const report = await cleanup(tomorrow);
  log(`8. cleanup      -> 25 h later, removed ${report.removed.length} of ${report.scanned} (default cutoff 24 h)`);
  log(
    `Done. Finished sessions past the cutoff went to the trash (${report.backups.length} ` +
      `entr${report.backups.length === 1 ? 'y' : 'ies'}); ${other.agent_id} never finished, ` +
      `so it stays until it is stuck long enough to be abandoned. The project stays at ${project}.`,
  );
  return project;
}
