import { SessionError } from './errors.js';
import { isPlainObject } from './merge-patch.js';

/**
 * Every tunable, with where it can be set. Precedence: options > environment > config file > default.
 * To add one: a field here and a row in SETTING_SPECS.
 */
export interface Settings {
  resumeWindowMinutes: number;
  errorBudget: number;
  clockSkewSeconds: number;
  lockTimeoutMs: number;
  cleanupHours: number;
  runningMinutes: number;
  trashRetentionDays: number;
  stuckFactor: number;
  auditMaxBytes: number;
  auditKeep: number;
  resumePolicy: 'auto' | 'continue' | 'brief' | 'off';
  promptFooter: boolean;
  sweepIntervalMinutes: number;
  abandonAfterHours: number;
}

type Kind = { number: { min: number } } | { boolean: true } | { oneOf: readonly string[] };

interface SettingSpec {
  env: string;
  file: string;
  default: number | boolean | string;
  kind: Kind;
}

const SETTING_SPECS: Record<keyof Settings, SettingSpec> = {
  resumeWindowMinutes: {
    env: 'AGENT_SESSION_RESUME_WINDOW_MINUTES',
    file: 'resume_window_minutes',
    default: 30,
    kind: { number: { min: 0 } },
  },
  errorBudget: { env: 'AGENT_SESSION_ERROR_BUDGET', file: 'error_budget', default: 3, kind: { number: { min: 1 } } },
  clockSkewSeconds: {
    env: 'AGENT_SESSION_CLOCK_SKEW_SECONDS',
    file: 'clock_skew_seconds',
    default: 60,
    kind: { number: { min: 0 } },
  },
  lockTimeoutMs: {
    env: 'AGENT_SESSION_LOCK_TIMEOUT_MS',
    file: 'lock_timeout_ms',
    default: 10_000,
    kind: { number: { min: 100 } },
  },
  cleanupHours: {
    env: 'AGENT_SESSION_CLEANUP_HOURS',
    file: 'cleanup_hours',
    default: 24,
    kind: { number: { min: 0 } },
  },
  runningMinutes: {
    env: 'AGENT_SESSION_RUNNING_MINUTES',
    file: 'running_minutes',
    default: 10,
    kind: { number: { min: 0 } },
  },
  trashRetentionDays: {
    env: 'AGENT_SESSION_TRASH_RETENTION_DAYS',
    file: 'trash_retention_days',
    default: 7,
    kind: { number: { min: 0 } },
  },
  stuckFactor: { env: 'AGENT_SESSION_STUCK_FACTOR', file: 'stuck_factor', default: 3, kind: { number: { min: 1 } } },
  auditMaxBytes: {
    env: 'AGENT_SESSION_AUDIT_MAX_BYTES',
    file: 'audit_max_bytes',
    default: 5 * 1024 * 1024,
    kind: { number: { min: 4096 } },
  },
  auditKeep: { env: 'AGENT_SESSION_AUDIT_KEEP', file: 'audit_keep', default: 5, kind: { number: { min: 1 } } },
  resumePolicy: {
    env: 'AGENT_SESSION_RESUME_POLICY',
    file: 'resume_policy',
    default: 'auto',
    kind: { oneOf: ['auto', 'continue', 'brief', 'off'] },
  },
  promptFooter: { env: 'AGENT_SESSION_PROMPT_FOOTER', file: 'prompt_footer', default: true, kind: { boolean: true } },
  sweepIntervalMinutes: {
    env: 'AGENT_SESSION_SWEEP_INTERVAL_MINUTES',
    file: 'sweep_interval_minutes',
    default: 60,
    kind: { number: { min: 0 } },
  },
  abandonAfterHours: {
    env: 'AGENT_SESSION_ABANDON_AFTER_HOURS',
    file: 'abandon_after_hours',
    default: 4,
    kind: { number: { min: 0 } },
  },
};

interface SettingSources {
  options?: Partial<Settings>;
  env?: Record<string, string | undefined>;
  file?: unknown;
  fileName?: string;
}

export function resolveSettings({ options = {}, env = {}, file, fileName = 'config file' }: SettingSources): Settings {
  if (file !== undefined && !isPlainObject(file))
    throw new SessionError('EINVALID', `${fileName} must hold a JSON object`);
  const fromFile = (file ?? {}) as Record<string, unknown>;
  const settings: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(SETTING_SPECS) as [keyof Settings, SettingSpec][]) {
    const fromOption = (options as Record<string, unknown>)[key];
    const fromEnv = env[spec.env];
    if (fromOption !== undefined) settings[key] = check(fromOption, spec, `option ${key}`);
    else if (fromEnv !== undefined && fromEnv !== '')
      settings[key] = check(fromEnvText(fromEnv, spec.kind), spec, `environment variable ${spec.env}`);
    else if (fromFile[spec.file] !== undefined)
      settings[key] = check(fromFile[spec.file], spec, `${spec.file} in ${fileName}`);
    else settings[key] = spec.default;
  }
  return settings as unknown as Settings;
}

/** Decimal text (an exponent allowed): Number() would also take " " (0) and "0x10" (16). */
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

function fromEnvText(text: string, kind: Kind): unknown {
  // Not a number: the text itself goes on to the check, which names the variable.
  if ('number' in kind) return DECIMAL.test(text) ? Number(text) : text;
  if ('boolean' in kind) return { '1': true, true: true, '0': false, false: false }[text.toLowerCase()] ?? text;
  return text;
}

function check(value: unknown, spec: SettingSpec, where: string): unknown {
  const { kind } = spec;
  if ('number' in kind) {
    if (typeof value === 'number' && Number.isFinite(value) && value >= kind.number.min) return value;
    throw new SessionError('EINVALID', `${where} must be a number >= ${kind.number.min}, got ${JSON.stringify(value)}`);
  }
  if ('boolean' in kind) {
    if (typeof value === 'boolean') return value;
    throw new SessionError('EINVALID', `${where} must be true or false (1 or 0), got ${JSON.stringify(value)}`);
  }
  if (typeof value === 'string' && kind.oneOf.includes(value)) return value;
  throw new SessionError('EINVALID', `${where} must be one of ${kind.oneOf.join(', ')}, got ${JSON.stringify(value)}`);
}
