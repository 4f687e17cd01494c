import { phaseWindowsMs, type Settings } from '../config.js';
import { isFinalPhase, isResumablePhase, type Phase } from '../phases.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';

export type ResumeReason =
  | 'resumable'
  | 'not_found'
  | 'finalized'
  | 'phase_not_resumable'
  | 'not_resume_ready'
  | 'expired'
  | 'too_many_errors'
  | 'corrupt';

export interface ResumeRules {
  /** How long after its last update a paused session may still resume. */
  resumeWindowMs: number;
  /** A phase's own window, where one is set (an approval waits for people, who come back tomorrow). */
  phaseWindowsMs?: Partial<Record<Phase, number>>;
  /** A session with this many errors or more is not resumed. */
  errorBudget: number;
  /** A `last_updated` this far in the future is still taken as now; further is expired. */
  clockSkewMs: number;
}

/** The resume rules the settings give. */
export function resumeRules(settings: Settings): ResumeRules {
  const phaseWindows = phaseWindowsMs(settings);
  return {
    resumeWindowMs: settings.resumeWindowMinutes * 60_000,
    ...(phaseWindows ? { phaseWindowsMs: phaseWindows } : {}),
    errorBudget: settings.errorBudget,
    clockSkewMs: settings.clockSkewSeconds * 1000,
  };
}

export interface ResumeDecision {
  resume: boolean;
  reason: ResumeReason;
  detail: string;
}

/** Whether a session should resume at `now`: the checks in the order the user guide lists them. */
export function decideResume(record: SessionRecord | undefined, now: number, rules: ResumeRules): ResumeDecision {
  if (!record) return no('not_found', 'no such session');
  if (isFinalPhase(record.phase) || record.finalized_at)
    return no('finalized', `the session is final (${record.phase})`);
  if (!isResumablePhase(record.phase)) return no('phase_not_resumable', `phase ${record.phase} is not resumable`);
  if (!record.resume_ready) return no('not_resume_ready', 'the session is not marked resume_ready');
  const age = now - (parseTimestamp(record.last_updated) ?? Number.NaN);
  if (!(age >= -rules.clockSkewMs))
    return no('expired', 'last_updated is in the future beyond the clock-skew allowance');
  const windowMs = resumeWindowMs(rules, record.phase);
  if (age > windowMs) {
    return no(
      'expired',
      `last updated ${Math.round(age / 1000)} s ago, beyond the ${windowMs / 1000} s resume window of ${record.phase}`,
    );
  }
  if (record.error_count >= rules.errorBudget) {
    return no('too_many_errors', `${record.error_count} errors reach the budget of ${rules.errorBudget}`);
  }
  return { resume: true, reason: 'resumable', detail: `paused in ${record.phase}, within the resume window` };
}

/** How long a session paused in `phase` may resume after its last update. */
export function resumeWindowMs(rules: Pick<ResumeRules, 'resumeWindowMs' | 'phaseWindowsMs'>, phase: Phase): number {
  return rules.phaseWindowsMs?.[phase] ?? rules.resumeWindowMs;
}

function no(reason: ResumeReason, detail: string): ResumeDecision {
  return { resume: false, reason, detail };
}
