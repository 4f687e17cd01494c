// `agent-session status`: is it working here? Where the project, store and config are and why,
// where the hooks are registered and whether they can run, what they did last, and the sessions.
import { join, resolve } from 'node:path';
import { ownCliCommand } from '../claude/own-cli.js';
import { PHASES, type Phase } from '../phases.js';
import { readHookLog, type HookLogEntry } from '../store/hook-log.js';
import { readHookRuns, type HookRunRecord } from '../store/hook-runs.js';
import {
  configFilePath,
  configProblems,
  locateProject,
  locateStore,
  readConfigFile,
  storeExists,
  type ProjectLocation,
  type StoreLocation,
} from '../store/project.js';
import { SessionStore } from '../store/store.js';
import { parseTimestamp } from '../time.js';
import {
  homeDir,
  projectSettingsPath,
  readSettingsFile,
  sameDirectory,
  userSettingsPath,
} from '../install/settings-file.js';
import { applyingStatusLine, isOurStatusLine, statusLineCommand } from '../install/status-line-setting.js';
import { directoryExists, readPluginHooks, readPluginInstalls, scriptExists } from './claude-files.js';
import { hookFindings, type StatusFinding } from './hook-findings.js';
import { findRegistrations, type HookPlace, type HookTable, type Registration } from './hook-registrations.js';

type Env = Record<string, string | undefined>;

export interface StatusOptions {
  /** `--dir`. */
  dir?: string;
  cwd: string;
  env: Env;
  now: number;
}

export type { StatusCheck, StatusFinding } from './hook-findings.js';

export interface StatusReport {
  healthy: boolean;
  project: ProjectLocation;
  store: { dir: string; reason: StoreLocation['reason']; exists: boolean };
  config: { file: string; from: 'AGENT_SESSION_CONFIG' | 'project'; exists: boolean; error: string | null };
  /** The settings files looked at, with whether each exists. */
  settings: { place: Exclude<HookPlace, 'plugin'>; file: string; exists: boolean; error: string | null }[];
  /** Installs of the agent-session plugin that apply to this project and are enabled. */
  plugins: { plugin: string; scope: string; install_path: string; root: string }[];
  hooks: Registration[];
  /** The status line Claude Code draws here (`install --statusline`), null when no settings file has one. */
  status_line: { place: Exclude<HookPlace, 'plugin'>; file: string; command: string; ours: boolean } | null;
  last_runs: HookRunRecord[];
  hook_failures: { since: string; count: number; recent: HookLogEntry[] };
  sessions: { total: number; by_phase: Partial<Record<Phase, number>>; unreadable: number; approval: Waiting[] };
  findings: StatusFinding[];
}

interface Waiting {
  id: string;
  agent: string;
  purpose: string | null;
  last_updated: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** The plugin's name in `.claude-plugin/plugin.json`. */
const PLUGIN = 'agent-session';

export async function status({ dir, cwd, env, now }: StatusOptions): Promise<StatusReport> {
  const findings: StatusFinding[] = [];
  const project = locateProject({ cwd, env });
  findings.push(...projectFindings(project, cwd));
  const { settings, tables } = await readSettings(project.dir, env, findings);
  // What the hooks see: Claude Code applies its settings' `env` to the processes it starts.
  const hookEnv = hookEnvironment(env, settings, project.dir);
  const store = locateStore({ dir, cwd, env: hookEnv.env });
  const exists = storeExists(store.dir);
  const config = readConfig(cwd, hookEnv, findings);
  findings.push(...disabledFindings(hookEnv));
  const plugins = await pluginTables(project.dir, env, settings, findings);
  const hooks = [...tables, ...plugins.tables].flatMap((table) => findRegistrations(table, scriptExists));
  findings.push(...hookFindings(hooks, ownCliCommand({ projectDir: project.dir, env })));
  if (!exists)
    findings.push({
      check: 'store',
      severity: 'warning',
      message: `no sessions have been recorded here yet: the store ${store.dir} does not exist`,
    });
  const activity = exists ? readActivityOrSay(store.dir, now, findings) : emptyActivity(now);
  return {
    healthy: !findings.some((f) => f.severity === 'error'),
    project,
    store: { dir: store.dir, reason: store.reason, exists },
    config,
    settings: settings.map(({ place, file, exists: found, error }) => ({ place, file, exists: found, error })),
    plugins: plugins.installs,
    hooks,
    status_line: statusLineOf(settings),
    ...activity,
    findings,
  };
}

/**
 * A project Claude Code cannot use: CLAUDE_PROJECT_DIR naming no directory, or a working directory
 * other than the project, where Claude Code started would read that directory's settings instead.
 */
function projectFindings(project: ProjectLocation, cwd: string): StatusFinding[] {
  if (project.reason === 'CLAUDE_PROJECT_DIR')
    return directoryExists(project.dir)
      ? []
      : [
          {
            check: 'project',
            severity: 'error',
            message: `the project directory ${project.dir} (CLAUDE_PROJECT_DIR) does not exist: no hook runs there`,
          },
        ];
  // In a worktree Claude Code made (claude -w), Claude Code runs the project's hooks.
  if (resolve(cwd) === project.dir || project.reason === 'claude-worktree') return [];
  return [
    {
      check: 'project',
      severity: 'warning',
      message:
        `Claude Code reads the settings of the directory it is started in: start claude in ${project.dir} ` +
        `(not ${resolve(cwd)}) for these hooks to run`,
    },
  ];
}

interface HookEnvironment {
  env: Env;
  /** The settings file each variable set by a settings `env` comes from. */
  setIn: Map<string, string>;
}

/** Variables naming a path: one a settings file sets is taken from the project, where the hooks run. */
const PATH_VARIABLES = ['AGENT_SESSION_DIR', 'AGENT_SESSION_CONFIG'];

/**
 * The environment Claude Code gives its hooks: this one, with the `env` of its settings files over
 * it (the user's, then the project's, then the local file's, the last one winning). A number or a
 * boolean there is its text, as a child process's environment makes it.
 */
function hookEnvironment(env: Env, settings: SettingsRead[], projectDir: string): HookEnvironment {
  const merged: Env = { ...env };
  const setIn = new Map<string, string>();
  for (const place of ['user', 'project', 'local'] as const) {
    for (const read of settings.filter((r) => r.place === place)) {
      const vars = read.settings?.env;
      if (typeof vars !== 'object' || vars === null || Array.isArray(vars)) continue;
      for (const [name, value] of Object.entries(vars)) {
        if (!name.startsWith('AGENT_SESSION_')) continue;
        if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
        const text = String(value);
        merged[name] = PATH_VARIABLES.includes(name) && text !== '' ? resolve(projectDir, text) : text;
        setIn.set(name, read.file);
      }
    }
  }
  return { env: merged, setIn };
}

/** AGENT_SESSION_DISABLE=1 where the hooks see it: they return at once and record nothing. */
function disabledFindings({ env, setIn }: HookEnvironment): StatusFinding[] {
  if (env.AGENT_SESSION_DISABLE !== '1') return [];
  const file = setIn.get('AGENT_SESSION_DISABLE');
  return [
    {
      check: 'config',
      severity: 'error',
      message:
        `AGENT_SESSION_DISABLE=1 ${file ? `in the env of ${file}` : 'in this environment'}: ` +
        'every hook returns at once and no session is recorded',
    },
  ];
}

/** The config as the CLI and the hooks resolve it: every problem they would refuse, and misspelt variables. */
function readConfig(cwd: string, { env, setIn }: HookEnvironment, findings: StatusFinding[]): StatusReport['config'] {
  const file = configFilePath({ cwd, env });
  const from = env.AGENT_SESSION_CONFIG ? 'AGENT_SESSION_CONFIG' : 'project';
  const problems = configProblems({ cwd, env });
  for (const p of problems) {
    const where = p.env && setIn.has(p.env) ? `; set in the env of ${setIn.get(p.env)}` : '';
    findings.push({
      check: 'config',
      severity: p.severity,
      message: p.severity === 'error' ? `${p.message} (every hook fails open on it${where})` : `${p.message}${where}`,
    });
  }
  const error = problems.find((p) => p.severity === 'error')?.message ?? null;
  return { file, from, exists: configExists(file), error };
}

function configExists(file: string): boolean {
  try {
    return readConfigFile(file) !== undefined;
  } catch {
    // There, but unreadable or not JSON: its problem is reported.
    return true;
  }
}

interface SettingsRead {
  place: Exclude<HookPlace, 'plugin'>;
  file: string;
  exists: boolean;
  error: string | null;
  settings: Record<string, unknown> | undefined;
}

async function readSettings(projectDir: string, env: Env, findings: StatusFinding[]) {
  const places: [SettingsRead['place'], string][] = [
    ['project', projectSettingsPath(projectDir)],
    ['local', join(projectDir, '.claude', 'settings.local.json')],
    ['user', userSettingsPath(env)],
  ];
  const settings: SettingsRead[] = [];
  const tables: HookTable[] = [];
  // The user's settings file is also a project's when the project is the home directory: read it once.
  const seen = new Set<string>();
  for (const [place, file] of places) {
    if (seen.has(resolve(file))) continue;
    seen.add(resolve(file));
    try {
      const read = await readSettingsFile(file);
      settings.push({ place, file, exists: read.settings !== undefined, error: null, settings: read.settings });
      if (read.settings?.disableAllHooks === true)
        findings.push({
          check: 'settings',
          severity: 'error',
          message: `disableAllHooks is set in ${file}: Claude Code runs no hooks`,
        });
      const vars = { ...env, HOME: homeDir(env), CLAUDE_PROJECT_DIR: projectDir };
      tables.push({ place, file, hooks: read.settings?.hooks, vars, cwd: projectDir });
    } catch (err) {
      const error = unusable(file, err);
      settings.push({ place, file, exists: true, error, settings: undefined });
      findings.push({ check: 'settings', severity: 'error', message: error });
    }
  }
  return { settings, tables };
}

/** The `statusLine` that applies: the local settings' over the project's over the user's. */
function statusLineOf(settings: SettingsRead[]): StatusReport['status_line'] {
  const read = applyingStatusLine(settings);
  if (!read) return null;
  const value = read.settings!.statusLine;
  return { place: read.place, file: read.file, command: statusLineCommand(value), ours: isOurStatusLine(value) };
}

/** Why Claude Code cannot use a settings file (install's reader words it for a rewrite it refuses). */
function unusable(file: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : message;
  if (/is not valid JSON/.test(message)) return `${file} is not valid JSON: ${cause}; Claude Code ignores it`;
  if (/does not hold a JSON object/.test(message)) return `${file} does not hold a JSON object; Claude Code ignores it`;
  return `${file} cannot be read: ${cause}`;
}

/** The plugin's installs that apply here (user scope, or this project's) and are enabled, with their hooks. */
async function pluginTables(projectDir: string, env: Env, settings: SettingsRead[], findings: StatusFinding[]) {
  const installs: StatusReport['plugins'] = [];
  const tables: HookTable[] = [];
  const seen = new Set<string>();
  for (const install of await readPluginInstalls(homeDir(env), PLUGIN)) {
    if (seen.has(install.key) || !enabled(install.key, settings)) continue;
    if (install.projectPath !== undefined && !(await sameDirectory(install.projectPath, projectDir))) continue;
    if (install.projectPath === undefined && install.scope !== 'user') continue;
    seen.add(install.key);
    installs.push({ plugin: install.key, scope: install.scope, install_path: install.installPath, root: install.root });
    const hooks = await readPluginHooks(install.root);
    const file = join(install.root, 'hooks', 'hooks.json');
    if (hooks === undefined)
      findings.push({
        check: 'hooks',
        severity: 'error',
        message: `plugin ${install.key}: ${file} is missing or unreadable`,
      });
    const vars = {
      ...env,
      HOME: homeDir(env),
      CLAUDE_PROJECT_DIR: projectDir,
      CLAUDE_PLUGIN_ROOT: install.root,
    };
    tables.push({ place: 'plugin', file, plugin: install.key, hooks, vars, cwd: projectDir });
  }
  return { installs, tables };
}

/** `enabledPlugins[key]` of the local settings, else the project's, else the user's. */
function enabled(key: string, settings: SettingsRead[]): boolean {
  for (const place of ['local', 'project', 'user'] as const) {
    const table = settings.find((s) => s.place === place)?.settings?.enabledPlugins;
    const value = table && typeof table === 'object' ? (table as Record<string, unknown>)[key] : undefined;
    if (typeof value === 'boolean') return value;
  }
  return false;
}

/** The store's activity; a store that cannot be read (a file, not a directory) is a finding, not a crash. */
function readActivityOrSay(dir: string, now: number, findings: StatusFinding[]): ReturnType<typeof readActivity> {
  try {
    return readActivity(dir, now, findings);
  } catch (err) {
    const message = `the store ${dir} cannot be read (${(err as Error).message}): every hook fails open on it`;
    findings.push({ check: 'store', severity: 'error', message });
    return emptyActivity(now);
  }
}

function readActivity(dir: string, now: number, findings: StatusFinding[]) {
  const since = now - DAY_MS;
  let failures: HookLogEntry[] = [];
  try {
    failures = readHookLog(dir).filter((e) => (parseTimestamp(e.time) ?? 0) >= since);
  } catch (err) {
    findings.push({ check: 'hook-log', severity: 'warning', message: (err as Error).message });
  }
  const last = failures[failures.length - 1];
  if (last)
    findings.push({
      check: 'hook-log',
      severity: 'warning',
      message: `${failures.length} hook failure(s) in the last day, the last: ${last.code}: ${last.message}`,
    });
  const { records, problems } = new SessionStore(dir, { lockTimeoutMs: 0 }).scan();
  if (problems.length > 0)
    findings.push({
      check: 'sessions',
      severity: 'warning',
      message: `${problems.length} record(s) cannot be read (run agent-session doctor)`,
    });
  const by_phase: Partial<Record<Phase, number>> = {};
  for (const phase of PHASES) {
    const n = records.filter((r) => r.phase === phase).length;
    if (n > 0) by_phase[phase] = n;
  }
  const approval = records
    .filter((r) => r.phase === 'approval')
    .sort((a, b) => b.last_updated.localeCompare(a.last_updated))
    .map((r) => ({ id: r.agent_id, agent: r.agent_name, purpose: r.purpose, last_updated: r.last_updated }));
  return {
    last_runs: readHookRuns(dir),
    hook_failures: { since: new Date(since).toISOString(), count: failures.length, recent: failures.slice(-10) },
    sessions: { total: records.length, by_phase, unreadable: problems.length, approval },
  };
}

function emptyActivity(now: number) {
  return {
    last_runs: [],
    hook_failures: { since: new Date(now - DAY_MS).toISOString(), count: 0, recent: [] },
    sessions: { total: 0, by_phase: {}, unreadable: 0, approval: [] },
  };
}
