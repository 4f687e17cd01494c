// Runs the real Claude Code CLI offline against a mock Messages API (see mock-api.mjs).
//
//   const claude = await ensureClaude();           // from install-claude.mjs (runClaude does it too)
//   const project = makeProject();                  // temp project dir with .claude/ and its own HOME
//   project.writeSettings({ hooks: { ... } });
//   const r = await runClaude({ projectDir: project.dir, home: project.home, prompt, apiUrl: api.url });
//   r.code, r.stdout, r.stderr, r.json
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClaude } from './install-claude.mjs';

/**
 * Creates a throw-away project: `dir` (the project, with .claude/), `home` (a HOME for the
 * CLI, kept apart so `claude --resume` can reuse it across runs) and `tmp` (its TMPDIR).
 */
export function makeProject({ prefix = 'agent-session-e2e-' } = {}) {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const dir = join(root, 'project');
  const home = join(root, 'home');
  const tmp = join(root, 'tmp');
  for (const d of [join(dir, '.claude'), home, tmp]) mkdirSync(d, { recursive: true });

  const settingsPath = join(dir, '.claude', 'settings.json');
  return {
    root,
    dir,
    home,
    tmp,
    settingsPath,
    /** Writes .claude/settings.json (replacing it). */
    writeSettings: (settings) => writeFileSync(settingsPath, JSON.stringify(settings, null, 2)),
    readSettings: () => (existsSync(settingsPath) ? JSON.parse(readFileSync(settingsPath, 'utf8')) : {}),
    /** Writes a file relative to the project dir and returns its absolute path. */
    writeFile: (rel, text, mode) => {
      const path = join(dir, rel);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, text, mode === undefined ? undefined : { mode });
      return path;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Settings `hooks` entry for one command: { matcher?, hooks: [{ type: 'command', command, timeout }] }. */
export function hookGroup(command, { matcher, timeout = 30 } = {}) {
  const group = { hooks: [{ type: 'command', command, timeout }] };
  return matcher === undefined ? group : { matcher, ...group };
}

// Variables of the machine or of an enclosing Claude Code session that would change the
// CLI's behaviour (real credentials, nested-session detection, another base URL), and
// agent-session's own (another store or policy for the hooks); a test sets them through `env`.
const STRIPPED_ENV =
  /^(ANTHROPIC_|AGENT_SESSION_|CLAUDE|CLAUDECODE$|AWS_|GOOGLE_|VERTEX|OTEL_|HTTPS?_PROXY$|https?_proxy$|NODE_OPTIONS$)/;

export function cliEnv({ apiUrl, home, tmp, env }) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !STRIPPED_ENV.test(k)));
  return {
    ...base,
    HOME: home,
    TMPDIR: tmp,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'sk-ant-e2e-dummy-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    NO_PROXY: '127.0.0.1,localhost',
    ...env,
  };
}

function parseJsonOutput(stdout) {
  try {
    return JSON.parse(stdout.trim());
  } catch {
    return null;
  }
}

/**
 * Runs `claude -p <prompt> --output-format json` in projectDir and resolves when it exits
 * (or is killed after timeoutMs). Never rejects on a non-zero exit: check `code`.
 * @param {object} o
 * @param {string} o.projectDir  cwd of the CLI
 * @param {string} o.prompt
 * @param {string} o.apiUrl  the mock's url
 * @param {string} [o.home]  HOME; pass the same one to a second run to `--resume` a session
 * @param {string} [o.tmp]  TMPDIR
 * @param {string[]} [o.args]  extra CLI args, e.g. ['--resume', sessionId]
 * @param {object} [o.env]  extra/overriding env vars
 * @param {number} [o.timeoutMs=60000]
 */
export async function runClaude({ projectDir, prompt, apiUrl, home, tmp, args = [], env = {}, timeoutMs = 60_000 }) {
  const claude = await ensureClaude();
  home ??= mkdtempSync(join(tmpdir(), 'agent-session-e2e-home-'));
  tmp ??= mkdtempSync(join(tmpdir(), 'agent-session-e2e-tmp-'));
  const argv = ['-p', prompt, '--output-format', 'json', ...args];
  const child = spawn(claude, argv, {
    cwd: projectDir,
    env: cliEnv({ apiUrl, home, tmp, env }),
    stdio: ['ignore', 'pipe', 'pipe'], // 'ignore' = stdin from /dev/null
  });

  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);

  const started = Date.now();
  const { code, signal } = await new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal }));
  }).finally(() => clearTimeout(timer));

  return {
    code,
    signal,
    timedOut,
    durationMs: Date.now() - started,
    stdout,
    stderr,
    json: parseJsonOutput(stdout),
    home,
    tmp,
  };
}

/**
 * Writes a tiny hook script into `dir` that appends each payload it receives on stdin
 * (one JSON object per line) to `<dir>/<name>.jsonl`, then prints `stdout` (if given) and
 * exits with `exitCode`. Returns { command, logPath, read() } where read() parses the log.
 */
export function writeLoggingHook(dir, { name = 'hook-log', stdout = '', exitCode = 0 } = {}) {
  const logPath = join(dir, `${name}.jsonl`);
  const scriptPath = join(dir, `${name}.mjs`);
  writeFileSync(
    scriptPath,
    `import { appendFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  appendFileSync(${JSON.stringify(logPath)}, JSON.stringify(JSON.parse(input)) + '\\n');
  process.stdout.write(${JSON.stringify(stdout)});
  process.exitCode = ${Number(exitCode)};
});
`,
  );
  return {
    command: `"${process.execPath}" "${scriptPath}"`,
    logPath,
    read: () =>
      existsSync(logPath)
        ? readFileSync(logPath, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [],
  };
}
