// Installs the real Claude Code CLI at a pinned version into <repo>/.cache/claude-code/ (another
// version, named by AGENT_SESSION_E2E_CLAUDE_VERSION, into .cache/claude-code-<version>/) and returns
// the absolute path of its `claude` executable.
//
//   node tests/e2e/install-claude.mjs   -> prints the path (exit 1 with a message on failure)
//   import { ensureClaude } from './install-claude.mjs'
//
// The npm package ships the native binary in a platform optionalDependency
// (@anthropic-ai/claude-code-linux-x64 etc.); its postinstall (install.cjs) only
// hard-links that binary over the small stub bin/claude.exe. Nothing is downloaded
// from outside the npm registry.
import { execFile } from 'node:child_process';
import { readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The version the tests are pinned to. */
export const PINNED_VERSION = '2.1.330';
/** Another version for one run: `AGENT_SESSION_E2E_CLAUDE_VERSION=2.1.332 node --test tests/e2e/...`. */
export const CLAUDE_VERSION = process.env.AGENT_SESSION_E2E_CLAUDE_VERSION || PINNED_VERSION;
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CACHE_DIR = join(
  REPO_ROOT,
  '.cache',
  CLAUDE_VERSION === PINNED_VERSION ? 'claude-code' : `claude-code-${CLAUDE_VERSION}`,
);

const PACKAGE = '@anthropic-ai/claude-code';
// The stub that postinstall replaces is a few hundred bytes; the real binary is ~380 MB.
const MIN_BINARY_SIZE = 1024 * 1024;

const packageDir = (prefix) => join(prefix, 'node_modules', PACKAGE);
const binaryPath = (prefix) => join(packageDir(prefix), 'bin', 'claude.exe');

function installedVersion(prefix) {
  try {
    return JSON.parse(readFileSync(join(packageDir(prefix), 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

function hasRealBinary(prefix) {
  try {
    return statSync(binaryPath(prefix)).size >= MIN_BINARY_SIZE;
  } catch {
    return false;
  }
}

async function reportedVersion(bin) {
  try {
    const { stdout } = await run(bin, ['--version'], { timeout: 30_000 });
    return stdout.trim();
  } catch (err) {
    return `(failed: ${err.message})`;
  }
}

async function npmInstall(prefix) {
  const args = [
    'install',
    '--prefix',
    prefix,
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--no-package-lock',
    // The package declares node >=22 but only the native binary runs; Node 20 is fine.
    '--engine-strict=false',
    `${PACKAGE}@${CLAUDE_VERSION}`,
  ];
  try {
    await run('npm', args, { timeout: 10 * 60_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    throw new Error(`npm ${args.join(' ')} failed:\n${err.stderr || err.message}`);
  }
}

// When npm skipped the postinstall (ignore-scripts, or npm's allowScripts policy),
// place the binary ourselves with the package's own script.
async function ensurePostinstall(prefix) {
  if (hasRealBinary(prefix)) return;
  try {
    await run(process.execPath, ['install.cjs'], { cwd: packageDir(prefix), timeout: 120_000 });
  } catch (err) {
    throw new Error(`${PACKAGE} postinstall (install.cjs) failed:\n${err.stderr || err.message}`);
  }
  if (!hasRealBinary(prefix)) {
    throw new Error(
      `${PACKAGE}@${CLAUDE_VERSION}: no native binary was installed for ${process.platform}-${process.arch} ` +
        `(bin/claude.exe is still the stub; is the platform optionalDependency missing?)`,
    );
  }
}

// Installs into a private temp prefix and renames it into place, so two concurrent
// callers (parallel test files) never see or write a half-installed tree.
async function installFresh() {
  const tmp = `${CACHE_DIR}.tmp-${process.pid}-${Date.now()}`;
  try {
    await npmInstall(tmp);
    await ensurePostinstall(tmp);
    if (isInstalled(CACHE_DIR)) return; // someone else finished first
    rmSync(CACHE_DIR, { recursive: true, force: true });
    try {
      renameSync(tmp, CACHE_DIR);
    } catch (err) {
      if (!isInstalled(CACHE_DIR)) throw err;
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const isInstalled = (prefix) => installedVersion(prefix) === CLAUDE_VERSION && hasRealBinary(prefix);

/** Returns the absolute path of the pinned `claude` executable, installing it first if needed. */
export async function ensureClaude() {
  if (!isInstalled(CACHE_DIR)) await installFresh();
  const bin = binaryPath(CACHE_DIR);
  const version = await reportedVersion(bin);
  if (!version.startsWith(CLAUDE_VERSION)) {
    throw new Error(`${bin} --version printed "${version}", expected ${CLAUDE_VERSION}`);
  }
  return bin;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  try {
    console.log(await ensureClaude());
  } catch (err) {
    console.error(`install-claude: ${err.message}`);
    process.exit(1);
  }
}
