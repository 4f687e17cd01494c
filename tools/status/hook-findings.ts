import { HOOK_REGISTRATIONS } from '../install/registrations.js';
import type { Registration } from './hook-registrations.js';

export type StatusCheck = 'project' | 'store' | 'config' | 'settings' | 'hooks' | 'hook-log' | 'sessions';

export interface StatusFinding {
  check: StatusCheck;
  /** `error`: it is not working (status exits 1); `warning`: worth knowing. */
  severity: 'error' | 'warning';
  message: string;
}

const where = (r: Registration) => (r.place === 'plugin' ? `plugin ${r.plugin}` : r.file);
/** A registration Claude Code runs and that can do its work. */
const works = (r: Registration) => r.state === 'ok' || r.state === 'unchecked';

/**
 * What is wrong with the registrations: broken, inactive or never-matching entries, events registered
 * nowhere, events with no entry that can run, and events registered twice. `cli` is the command that
 * runs this CLI here, for the advice.
 */
export function hookFindings(hooks: Registration[], cli: string): StatusFinding[] {
  const findings: StatusFinding[] = hooks.flatMap(entryFinding);
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
      message: `${what}: run ${cli} install (or install the plugin)`,
    });
  } else if (missing.length > 0) {
    findings.push({
      check: 'hooks',
      severity: 'warning',
      message:
        `no hook for ${missing.map((r) => r.event).join(', ')}: a new conversation is not told about paused ` +
        `sessions; run ${cli} install again (or update the plugin)`,
    });
  }
  findings.push(...idleFindings(hooks, cli));
  for (const { event } of HOOK_REGISTRATIONS) findings.push(...doubleFindings(hooks, event));
  return findings.concat(sameCommandFinding(hooks));
}

function entryFinding(r: Registration): StatusFinding[] {
  switch (r.state) {
    case 'broken':
      return [
        {
          check: 'hooks',
          severity: 'error',
          message:
            `${r.event} in ${where(r)} runs ${r.script}, which does not exist: ` +
            `Claude Code reports a hook error at every ${r.event}`,
        },
      ];
    case 'inactive':
      return [
        {
          check: 'hooks',
          severity: 'warning',
          message:
            `${r.event} in ${where(r)} names ${r.script}, which does not exist: ` +
            'the hook does nothing (install the package there, or uninstall the hooks)',
        },
      ];
    case 'unmatched':
      return [
        {
          check: 'hooks',
          severity: 'warning',
          message: `${r.event} in ${where(r)}: its matcher does not match the tool Agent, so Claude Code never runs it`,
        },
      ];
    default:
      return [];
  }
}

/**
 * Events registered only by entries that cannot run (inactive or never matching): no hook works for
 * them although they look installed. Broken entries are errors of their own already.
 */
function idleFindings(hooks: Registration[], cli: string): StatusFinding[] {
  const idle = HOOK_REGISTRATIONS.map((reg) => hooks.filter((r) => r.event === reg.event)).filter(
    (regs) => regs.length > 0 && !regs.some(works) && !regs.some((r) => r.state === 'broken'),
  );
  if (idle.length === 0) return [];
  const entries = idle.flat();
  const reasons = new Set<string>();
  for (const r of entries)
    reasons.add(
      r.state === 'inactive'
        ? `${r.script} is missing; run npm install, or reinstall (${cli} install)`
        : `the matcher in ${where(r)} does not match the tool Agent; run ${cli} install`,
    );
  const events = idle.map((regs) => regs[0]!.event).join(', ');
  return [
    {
      check: 'hooks',
      severity: 'error',
      message: `registered, but no hook can run for ${events}: ${[...reasons].join('; ')}`,
    },
  ];
}

/**
 * Claude Code runs a command string once per event however many settings files register it, so only
 * distinct commands that run make a double run (the plugin's command always differs from a file's).
 */
function doubleFindings(hooks: Registration[], event: string): StatusFinding[] {
  const running = runningFor(hooks, event);
  const commands = new Set(running.map((r) => r.command));
  if (commands.size < 2) return [];
  return [
    {
      check: 'hooks',
      severity: 'error',
      message:
        `${event} is registered ${commands.size} times with different commands ` +
        `(${running.map(where).join(', ')}): each runs the hook; keep one`,
    },
  ];
}

/** The events registered in several files with one same command: worth knowing, no double run. */
function sameCommandFinding(hooks: Registration[]): StatusFinding[] {
  const same = HOOK_REGISTRATIONS.map((reg) => runningFor(hooks, reg.event)).filter(
    (running) => running.length > 1 && new Set(running.map((r) => r.command)).size === 1,
  );
  if (same.length === 0) return [];
  const files = [...new Set(same.flat().map(where))];
  return [
    {
      check: 'hooks',
      severity: 'warning',
      message:
        `${same.map((running) => running[0]!.event).join(', ')} registered in ${files.length} files with the ` +
        `same command (${files.join(', ')}): Claude Code runs it once`,
    },
  ];
}

function runningFor(hooks: Registration[], event: string): Registration[] {
  return hooks.filter((r) => r.event === event && r.state !== 'inactive' && r.state !== 'unmatched');
}
