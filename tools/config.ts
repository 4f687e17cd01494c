import { SessionError } from './errors.js';
import { isPlainObject } from './merge-patch.js';

/** Every tunable, with where it can be set. Precedence: options > environment > config file > default. */
export interface Settings {
  resumeWindowMinutes: number;
  errorBudget: number;
  clockSkewSeconds: number;
  lockTimeoutMs: number;
  cleanupHours: number;
}

interface SettingSpec {
  env: string;
  file: string;
  default: number;
  min: number;
}

export const SETTING_SPECS: Record<keyof Settings, SettingSpec> = {
  resumeWindowMinutes: { env: 'AGENT_SESSION_RESUME_WINDOW_MINUTES', file: 'resume_window_minutes', default: 30, min: 0 },
  errorBudget: { env: 'AGENT_SESSION_ERROR_BUDGET', file: 'error_budget', default: 3, min: 1 },
  clockSkewSeconds: { env: 'AGENT_SESSION_CLOCK_SKEW_SECONDS', file: 'clock_skew_seconds', default: 60, min: 0 },
  lockTimeoutMs: { env: 'AGENT_SESSION_LOCK_TIMEOUT_MS', file: 'lock_timeout_ms', default: 10_000, min: 100 },
  cleanupHours: { env: 'AGENT_SESSION_CLEANUP_HOURS', file: 'cleanup_hours', default: 24, min: 0 },
};

export interface SettingSources {
  options?: Partial<Settings>;
  env?: Record<string, string | undefined>;
  file?: unknown;
  fileName?: string;
}

export function resolveSettings({ options = {}, env = {}, file, fileName = 'config file' }: SettingSources): Settings {
  if (file !== undefined && !isPlainObject(file)) throw new SessionError('EINVALID', `${fileName} must hold a JSON object`);
  const fromFile = (file ?? {}) as Record<string, unknown>;
  const settings = {} as Settings;
  for (const [key, spec] of Object.entries(SETTING_SPECS) as [keyof Settings, SettingSpec][]) {
    const fromOption = options[key];
    const fromEnv = env[spec.env];
    if (fromOption !== undefined) settings[key] = checkNumber(fromOption, spec, `option ${key}`);
    else if (fromEnv !== undefined && fromEnv !== '') settings[key] = checkNumber(Number(fromEnv), spec, `environment variable ${spec.env}`);
    else if (fromFile[spec.file] !== undefined) settings[key] = checkNumber(fromFile[spec.file], spec, `${spec.file} in ${fileName}`);
    else settings[key] = spec.default;
  }
  return settings;
}

function checkNumber(value: unknown, spec: SettingSpec, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < spec.min) {
    throw new SessionError('EINVALID', `${where} must be a number >= ${spec.min}, got ${JSON.stringify(value)}`);
  }
  return value;
}
