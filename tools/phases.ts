export const PHASES = [
  'initializing',
  'investigating',
  'planning',
  'approval',
  'executing',
  'validating',
  'completed',
  'failed',
  'abandoned',
] as const;
export type Phase = (typeof PHASES)[number];

export const OUTCOMES = ['completed', 'failed', 'abandoned'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const RESUMABLE_PHASES: readonly Phase[] = ['approval', 'investigating', 'planning'];

export function isPhase(value: unknown): value is Phase {
  return typeof value === 'string' && (PHASES as readonly string[]).includes(value);
}

export function isOutcome(value: unknown): value is Outcome {
  return typeof value === 'string' && (OUTCOMES as readonly string[]).includes(value);
}

export function isFinalPhase(phase: Phase): boolean {
  return isOutcome(phase);
}

export function isResumablePhase(phase: Phase): boolean {
  return RESUMABLE_PHASES.includes(phase);
}
