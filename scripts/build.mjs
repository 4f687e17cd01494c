// Builds what ships: the library transpiled file by file, and each executable (the CLI and the hooks)
// bundled into one self-contained file, so a hook costs little more than Node's own start-up.
// Usage: node scripts/build.mjs [--out DIR] [--fast]   (--fast skips tsc's type check and .d.ts files)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lazyStringWidth } from './bundling/lazy-string-width.mjs';
import { lazyAssert, lazyBuiltins, syncFsPromises, yargsShimFromBundle } from './bundling/plugins.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const out = path.resolve(root, outIndex >= 0 ? args[outIndex + 1] : 'dist');
const fast = args.includes('--fast');
// `agent-session --version` prints it: the bundles and the library carry it, as they find no package.json.
const version = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version;
const defineVersion = { AGENT_SESSION_VERSION: JSON.stringify(version) };

const sources = (dir) =>
  readdirSync(path.join(root, dir), { recursive: true })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));

rmSync(out, { recursive: true, force: true });
// tsc (the type check and the .d.ts files, most of the build's time) runs while esbuild bundles.
const types = fast ? undefined : typeCheck();
await build({
  absWorkingDir: root,
  entryPoints: sources('tools'),
  outdir: path.join(out, 'tools'),
  format: 'esm',
  platform: 'node',
  target: 'node20',
  define: defineVersion,
  logLevel: 'warning',
});
// The library as it is imported (package.json's "exports"): one ES module bundle that dist/tools/index.js
// re-exports, so that an import reads and links one file instead of about 90 (bench/README.md, "The
// CLI's start and the library's import"). It sits with the other bundles, two folders below dist/, so
// that what it finds from its own file (the built hooks, the CLI, the MCP server, the dashboard page)
// is found as theirs. The modules transpiled one by one stay beside it: the tests import internals
// from them.
await build({
  absWorkingDir: root,
  entryPoints: ['tools/index.ts'],
  outfile: path.join(out, 'bin', 'bundles', 'library.mjs'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  define: defineVersion,
  logLevel: 'warning',
});
const library = path.join(out, 'bin', 'bundles', 'library.mjs');
writeFileSync(library, asciiOnly(readFileSync(library, 'utf8')));
writeFileSync(path.join(out, 'tools', 'index.js'), "export * from '../bin/bundles/library.mjs';\n");

// Every executable (the CLI, each hook) is a CommonJS bundle in <dir>/bundles/, run by a small
// launcher (<dir>/<name>.js, from scripts/launcher.cjs) that gives it V8's code cache. CommonJS also
// loads built-in modules only when the code needing them first runs (the hooks' kill switch is
// checked before any is loaded), where an ES module bundle hoists them all to start-up.
// Every bundle is built the same way; the one difference, synchronous file calls in the two hooks, is
// there because it saves each hook run milliseconds (bench/README.md, "What the hook bundles do
// differently").
const plugins = [lazyBuiltins, lazyAssert, lazyStringWidth, yargsShimFromBundle];
const hooks = sources('hooks').map((f) => path.basename(f, '.ts'));
const executables = [
  { entry: 'tools/cli/main.ts', dir: 'bin', name: 'agent-session', plugins },
  // The MCP server (`agent-session mcp`): a bundle of its own, so that no other command loads the SDK.
  { entry: 'tools/mcp/bin.ts', dir: 'bin', name: 'agent-session-mcp', plugins },
  ...hooks.map((name) => ({ entry: `hooks/${name}.ts`, dir: 'hooks', name, plugins: [...plugins, syncFsPromises] })),
  // Claude Code's statusLine command: started like a hook (launcher, code cache, fail-open), not through the CLI.
  {
    entry: 'tools/statusline/statusline-main.ts',
    dir: 'hooks',
    name: 'statusline',
    plugins: [...plugins, syncFsPromises],
  },
  // subagent_stop's periodic sweep (detached, or `--sweep`): a bundle without a launcher of its own.
  { entry: 'tools/claude/run/sweep-main.ts', dir: 'hooks', name: 'sweep', plugins, bundleOnly: true },
];
const launcher = readFileSync(path.join(root, 'scripts', 'launcher.cjs'), 'utf8');
for (const { entry, dir, name, plugins, bundleOnly } of executables) {
  await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: path.join(out, dir, 'bundles', `${name}.cjs`),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // The library finds the built hooks from its own file (tools/install/hook-files.ts).
    // Computed on use: pathToFileURL at start-up costs a hook a third of a millisecond.
    // import.meta.filename (the footer's tools/claude/own-cli.ts) is the bundle's path, with no URL at all.
    define: { 'import.meta.url': '__bundle.url', 'import.meta.filename': '__filename', ...defineVersion },
    banner: { js: 'var __bundle = { get url() { return require("node:url").pathToFileURL(__filename).href; } };' },
    plugins,
    logLevel: 'warning',
  });
  // A bundle is never run directly: its entry's #! line would only cost the launcher a copy of it.
  const bundleFile = path.join(out, dir, 'bundles', `${name}.cjs`);
  writeFileSync(bundleFile, asciiOnly(readFileSync(bundleFile, 'utf8').replace(/^#!.*/, '')));
  if (bundleOnly) continue;
  const bundleHash = createHash('sha256').update(readFileSync(bundleFile)).digest('hex').slice(0, 12);
  const text = launcher
    .replaceAll('NAME', name)
    .replaceAll('BUNDLE_HASH', bundleHash)
    .replace('HOOK_VALUE', String(dir === 'hooks'));
  writeFileSync(path.join(out, dir, `${name}.js`), text, { mode: 0o755 });
  chmodSync(path.join(out, dir, `${name}.js`), 0o755);
  // The package is "type": "module"; this marks the launchers as CommonJS without renaming them.
  writeFileSync(path.join(out, dir, 'package.json'), '{ "type": "commonjs" }\n');
}

// The dashboard's page, read by the server at start (tools/dashboard/page-file.ts): no build step of its own.
mkdirSync(path.join(out, 'dashboard'), { recursive: true });
copyFileSync(path.join(root, 'tools', 'dashboard', 'page.html'), path.join(out, 'dashboard', 'page.html'));

if (types && (await types) !== 0) process.exit(1);

/**
 * A bundle in pure ASCII: one character beyond it (a → in a comment) makes V8 hold the whole source as
 * UTF-16, twice the bytes to decode, hash and scan on every run. esbuild escapes strings already; what
 * is left (comments) gets \uXXXX escapes, which mean the same in strings, regular expressions and
 * names, and nothing in a comment.
 */
function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** tsc's type check, writing the .d.ts files into `out`: resolves its exit code (its errors go to stderr). */
function typeCheck() {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const child = spawn(process.execPath, [tsc, '-p', root, '--emitDeclarationOnly', '--outDir', out], {
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}
