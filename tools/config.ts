import { SessionError } from './errors.js';
import type { Phase } from './phases.js';
import { isPlainObject } from './merge-patch.js';
import { closest } from './suggest.js';

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
  sessionStartContext: boolean;
  /** Per-phase resume windows; null: `resumeWindowMinutes`. */
  resumeWindowMinutesApproval: number | null;
  resumeWindowMinutesInvestigating: number | null;
  resumeWindowMinutesPlanning: number | null;
}

type Kind = { number: { min: number; integer?: true } } | { boolean: true } | { oneOf: readonly string[] };

interface SettingSpec {
  env: string;
  file: string;
  /** null: not set, another setting stands in (a per-phase window falls back to the general one). */
  default: number | boolean | string | null;
  kind: Kind;
}

/** A phase's own resume window: unset, the general `resume_window_minutes` applies. */
function phaseWindow(phase: string): SettingSpec {
  return {
    env: `AGENT_SESSION_RESUME_WINDOW_MINUTES_${phase.toUpperCase()}`,
    file: `resume_window_minutes_${phase}`,
    default: null,
    kind: { number: { min: 0 } },
  };
}

const SETTING_SPECS: Record<keyof Settings, SettingSpec> = {
  resumeWindowMinutes: {
    env: 'AGENT_SESSION_RESUME_WINDOW_MINUTES',
    file: 'resume_window_minutes',
    default: 30,
    kind: { number: { min: 0 } },
  },
  errorBudget: {
    env: 'AGENT_SESSION_ERROR_BUDGET',
    file: 'error_budget',
    default: 3,
    kind: { number: { min: 1, integer: true } },
  },
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
  auditKeep: {
    env: 'AGENT_SESSION_AUDIT_KEEP',
    file: 'audit_keep',
    default: 5,
    kind: { number: { min: 1, integer: true } },
  },
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
  sessionStartContext: {
    env: 'AGENT_SESSION_SESSION_START_CONTEXT',
    file: 'session_start_context',
    default: true,
    kind: { boolean: true },
  },
  resumeWindowMinutesApproval: phaseWindow('approval'),
  resumeWindowMinutesInvestigating: phaseWindow('investigating'),
  resumeWindowMinutesPlanning: phaseWindow('planning'),
};

interface SettingSources {
  options?: Partial<Settings>;
  env?: Record<string, string | undefined>;
  file?: unknown;
  fileName?: string;
}

/**
 * One thing wrong with the settings: what `resolveSettings` throws (as an EINVALID error whose
 * `details` hold the fields besides `message`), and what `configProblems` lists without throwing.
 */
export interface ConfigProblem {
  message: string;
  /** The config file it is in, when it is in one. */
  file?: string;
  /** The environment variable it is in, when it is in one. */
  env?: string;
  /** The config-file key (or the library option) it is about. */
  key?: string;
  /** The closest known key or variable, for a name that is not one. */
  suggestion?: string;
  /** Warnings (a misspelt-looking environment variable) are reported, never refused. */
  severity: 'error' | 'warning';
}

/** The config file's keys, in the order SESSION_README.md lists them. */
export const CONFIG_KEYS: readonly string[] = Object.values(SETTING_SPECS).map((spec) => spec.file);

/**
 * The environment variables agent-session reads besides the settings': the store, the config file,
 * debugging, the code cache, the hooks' kill switch, and the test suite's own.
 */
const OTHER_VARIABLES = [
  'AGENT_SESSION_DIR',
  'AGENT_SESSION_CONFIG',
  'AGENT_SESSION_DEBUG',
  'AGENT_SESSION_NO_CODE_CACHE',
  'AGENT_SESSION_DISABLE',
  'AGENT_SESSION_TEST_FAULTS',
  'AGENT_SESSION_TEST_FAULTS_DIR',
  'AGENT_SESSION_DIST',
];

const PREFIX = 'AGENT_SESSION_';

export const ENVIRONMENT_VARIABLES: readonly string[] = [
  ...Object.values(SETTING_SPECS).map((spec) => spec.env),
  ...OTHER_VARIABLES,
];

/** The resume windows set for single phases, in ms (undefined: none is). */
export function phaseWindowsMs(settings: Settings): Partial<Record<Phase, number>> | undefined {
  const windows: Partial<Record<Phase, number | null>> = {
    approval: settings.resumeWindowMinutesApproval,
    investigating: settings.resumeWindowMinutesInvestigating,
    planning: settings.resumeWindowMinutesPlanning,
  };
  const set = Object.entries(windows).flatMap(([phase, minutes]) =>
    minutes == null ? [] : [[phase, minutes * 60_000]],
  );
  return set.length === 0 ? undefined : Object.fromEntries(set);
}

/** The settings in effect; the first problem, if any, is thrown as EINVALID with its fields in `details`. */
export function resolveSettings(sources: SettingSources): Settings {
  const { settings, problems } = evaluate(sources);
  if (problems.length > 0) throw configError(problems[0]!);
  return settings;
}

/** Every problem `resolveSettings` would refuse, without throwing (unknown keys first, then bad values). */
export function settingsProblems(sources: SettingSources): ConfigProblem[] {
  return evaluate(sources).problems;
}

/** A problem as the error the library throws: EINVALID, its fields in `details`. */
export function configError(problem: ConfigProblem, cause?: unknown): SessionError {
  const { message, severity: _severity, ...details } = problem;
  return new SessionError('EINVALID', message, { details, cause });
}

/**
 * `AGENT_SESSION_*` variables that are not agent-session's but look like a misspelling of one
 * (`AGENT_SESSION_ERROR_BUGDET`): warnings. Others are left alone; whoever set them may have a use for them.
 */
export function environmentWarnings(env: Record<string, string | undefined>): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  for (const name of Object.keys(env)) {
    if (!name.startsWith(PREFIX) || ENVIRONMENT_VARIABLES.includes(name)) continue;
    // Compared without the shared prefix, which would make every name look close to every other.
    const rest = closest(
      name.slice(PREFIX.length),
      ENVIRONMENT_VARIABLES.map((v) => v.slice(PREFIX.length)),
    );
    if (rest === undefined) continue;
    const suggestion = `${PREFIX}${rest}`;
    const message = `unknown environment variable ${name}; did you mean ${suggestion}?`;
    warnings.push({ message, env: name, suggestion, severity: 'warning' });
  }
  return warnings;
}

function evaluate({ options = {}, env = {}, file, fileName = 'config file' }: SettingSources) {
  const problems: ConfigProblem[] = [];
  const settings: Record<string, unknown> = {};
  if (file !== undefined && !isPlainObject(file)) {
    problems.push({ message: `${fileName} must hold a JSON object`, file: fileName, severity: 'error' });
    file = undefined;
  }
  const fromFile = (file ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(fromFile)) {
    if (!CONFIG_KEYS.includes(key)) problems.push(unknownName(key, CONFIG_KEYS, `in ${fileName}`, { file: fileName }));
  }
  const optionNames = Object.keys(SETTING_SPECS);
  for (const key of Object.keys(options)) {
    if (!optionNames.includes(key)) problems.push(unknownName(key, optionNames, 'among the settings options', {}));
  }
  for (const [key, spec] of Object.entries(SETTING_SPECS) as [keyof Settings, SettingSpec][]) {
    const fromOption = (options as Record<string, unknown>)[key];
    const fromEnv = env[spec.env];
    let value: Checked;
    if (fromOption !== undefined) value = check(fromOption, spec, `option ${key}`, { key });
    else if (fromEnv !== undefined && fromEnv !== '')
      value = check(fromEnvText(fromEnv, spec.kind), spec, `environment variable ${spec.env}`, { env: spec.env });
    else if (fromFile[spec.file] !== undefined)
      value = check(fromFile[spec.file], spec, `${spec.file} in ${fileName}`, { file: fileName, key: spec.file });
    else value = { ok: spec.default };
    if ('ok' in value) settings[key] = value.ok;
    else problems.push(value.problem);
  }
  return { settings: settings as unknown as Settings, problems };
}

function unknownName(name: string, known: readonly string[], where: string, at: Partial<ConfigProblem>): ConfigProblem {
  const suggestion = closest(name, known);
  const hint = suggestion ? `did you mean "${suggestion}"?` : `the keys are ${known.join(', ')}`;
  const message = `unknown key ${JSON.stringify(name)} ${where}; ${hint}`;
  return { ...at, message, key: name, ...(suggestion ? { suggestion } : {}), severity: 'error' };
}

/** Decimal text (an exponent allowed): Number() would also take " " (0) and "0x10" (16). */
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

/** The number decimal `text` spells (blanks around it allowed), or undefined for anything else. */
export function parseDecimal(text: string): number | undefined {
  return DECIMAL.test(text) ? Number(text) : undefined;
}

function fromEnvText(text: string, kind: Kind): unknown {
  // Not a number: the text itself goes on to the check, which names the variable.
  if ('number' in kind) return parseDecimal(text) ?? text;
  if ('boolean' in kind) return { '1': true, true: true, '0': false, false: false }[text.toLowerCase()] ?? text;
  return text;
}

type Checked = { ok: unknown } | { problem: ConfigProblem };

function check(value: unknown, spec: SettingSpec, where: string, at: Partial<ConfigProblem>): Checked {
  const { kind } = spec;
  // JSON.stringify writes Infinity (a file's 1e400) and NaN as null.
  const got = `got ${typeof value === 'number' ? String(value) : JSON.stringify(value)}`;
  let expected: string;
  if ('number' in kind) {
    const { min, integer } = kind.number;
    const whole = !integer || Number.isInteger(value);
    if (typeof value === 'number' && Number.isFinite(value) && value >= min && whole) return { ok: value };
    expected = integer ? `a whole number >= ${min}` : `a number >= ${min}`;
  } else if ('boolean' in kind) {
    if (typeof value === 'boolean') return { ok: value };
    expected = 'true or false (1 or 0)';
  } else {
    if (typeof value === 'string' && kind.oneOf.includes(value)) return { ok: value };
    expected = `one of ${kind.oneOf.join(', ')}`;
  }
  return { problem: { ...at, message: `${where} must be ${expected}, ${got}`, severity: 'error' } };
}
