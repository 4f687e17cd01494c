import { HOOK_REGISTRATIONS } from '../install/registrations.js';
import type { Registration } from './hook-registrations.js';

export type StatusCheck = 'store' | 'config' | 'settings' | 'hooks' | 'hook-log' | 'sessions';

export interface StatusFinding {
  check: StatusCheck;
  /** `error`: it is not working (status exits 1); `warning`: worth knowing. */
  severity: 'error' | 'warning';
  message: string;
}

/** What is wrong with the registrations: broken or inactive scripts, events registered nowhere or twice. */
export function hookFindings(hooks: Registration[]): StatusFinding[] {
  const findings: StatusFinding[] = [];
  const where = (r: Registration) => (r.place === 'plugin' ? `plugin ${r.plugin}` : r.file);
  for (const r of hooks) {
    if (r.state === 'broken')
      findings.push({
        check: 'hooks',
        severity: 'error',
        message:
          `${r.event} in ${where(r)} runs ${r.script}, which does not exist: ` +
          `Claude Code reports a hook error at every ${r.event}`,
      });
    else if (r.state === 'inactive')
      findings.push({
        check: 'hooks',
        severity: 'warning',
        message:
          `${r.event} in ${where(r)} names ${r.script}, which does not exist: ` +
          'the hook does nothing (install the package there, or uninstall the hooks)',
      });
  }
  const missing = HOOK_REGISTRATIONS.filter((reg) => !hooks.some((r) => r.event === reg.event));
  const required = missing.filter((r) => !r.optional).map((r) => r.event);
  if (required.length > 0) {
    const what =
      missing.length === HOOK_REGISTRATIONS.length
        ? 'the hooks are registered nowhere'
        : `no hook for ${missing.map((r) => r.event).join(', ')}`;
    findings.push({
      check: 'hooks',
      severity: 'error',
      message: `${what}: run agent-session install (or install the plugin)`,
    });
  } else if (missing.length > 0) {
    findings.push({
      check: 'hooks',
      severity: 'warning',
      message:
        `no hook for ${missing.map((r) => r.event).join(', ')}: a new conversation is not told about paused ` +
        'sessions; run agent-session install again (or update the plugin)',
    });
  }
  for (const { event } of HOOK_REGISTRATIONS) {
    // An inactive entry runs nothing: it is no second run.
    const running = hooks.filter((r) => r.event === event && r.state !== 'inactive');
    if (running.length > 1)
      findings.push({
        check: 'hooks',
        severity: 'error',
        message:
          `${event} is registered ${running.length} times (${running.map(where).join(', ')}): ` +
          'each runs the hook; keep one',
      });
  }
  return findings;
}
