import { status, type StatusReport } from '../../status/status.js';
import type { Argv } from '../command-context.js';
import { EXIT } from '../exit-codes.js';
import { relativeTime, table } from '../format.js';
import { whyProject, whyStore } from '../store-origin.js';

export const command = 'status';
export const describe =
  'Is it working here? The project, store and config found, where the hooks are registered, their last runs';

export async function handler(argv: Argv<object>) {
  const { ctx } = argv;
  const now = ctx.io.now?.() ?? Date.now();
  const report = await status({ dir: argv.dir, cwd: ctx.io.cwd, env: ctx.io.env, now });
  // 0: working; 1: not (hooks broken, missing or registered twice, or a bad config), like doctor.
  ctx.exitCode = report.healthy ? EXIT.ok : EXIT.no;
  if (argv.json) return ctx.json(report);
  for (const line of describeReport(report, now, ctx.io.cwd)) ctx.out(line);
}

function describeReport(r: StatusReport, now: number, cwd: string): string[] {
  const lines = [
    `Project: ${r.project.dir} (${whyProject(r.project, cwd)})`,
    `Store:   ${r.store.dir} (${whyStore({ ...r.store, project: r.project }, cwd, { short: true })})` +
      `${r.store.exists ? '' : ': does not exist yet'}`,
    `Config:  ${r.config.file} (${r.config.from === 'project' ? 'the project config' : 'from AGENT_SESSION_CONFIG'})` +
      `${r.config.error ? ': INVALID' : r.config.exists ? '' : ': none, defaults apply'}`,
    '',
  ];
  if (r.hooks.length === 0) lines.push('Hooks: registered nowhere.');
  else {
    lines.push('Hooks:');
    const rows = r.hooks.map((h) => [
      h.event,
      h.place === 'plugin' ? `plugin ${h.plugin}` : h.place,
      h.state,
      h.script ?? h.command,
    ]);
    lines.push(...table(['EVENT', 'WHERE', 'STATE', 'SCRIPT'], rows).map((l) => `  ${l}`));
  }
  const line = r.status_line;
  if (line)
    lines.push(`Status line (${line.place}): ${line.ours ? "agent-session's" : 'another command'}, ${line.command}`);
  if (r.store.exists) {
    lines.push('');
    if (r.last_runs.length === 0) lines.push('Last hook runs: none recorded.');
    else {
      lines.push('Last hook runs:');
      const rows = r.last_runs.map((run) => [
        run.event,
        run.hook,
        run.outcome + (run.code ? ` (${run.code})` : ''),
        relativeTime(run.time, now),
      ]);
      lines.push(...table(['EVENT', 'HOOK', 'OUTCOME', 'WHEN'], rows).map((l) => `  ${l}`));
    }
    lines.push(`Hook failures in the last day: ${r.hook_failures.count}`);
    const phases = Object.entries(r.sessions.by_phase).map(([phase, n]) => `${n} ${phase}`);
    lines.push(`Sessions: ${r.sessions.total}${phases.length > 0 ? ` (${phases.join(', ')})` : ''}`);
    if (r.sessions.approval.length > 0) {
      lines.push('Waiting for approval:');
      const rows = r.sessions.approval.map((s) => [s.id, s.agent, s.purpose ?? '']);
      lines.push(...table(['ID', 'AGENT', 'PURPOSE'], rows).map((l) => `  ${l}`));
    }
  }
  lines.push('');
  for (const f of r.findings)
    lines.push(`${f.severity === 'error' ? 'ERROR' : 'warn '}  ${f.check.padEnd(8)} ${f.message}`);
  const errors = r.findings.filter((f) => f.severity === 'error').length;
  lines.push(r.healthy ? 'All well.' : `Not working: ${errors} error(s).`);
  return lines;
}
