// Builds what ships: the library transpiled file by file, and each executable (the CLI and the hooks)
// bundled into one self-contained file, so a hook costs little more than Node's own start-up.
// Usage: node scripts/build.mjs [--out DIR] [--fast]   (--fast skips tsc's type check and .d.ts files)
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lazyStringWidth } from './lazy-string-width.mjs';
import { hookShims } from './hook-shims/plugin.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const out = path.resolve(root, outIndex >= 0 ? args[outIndex + 1] : 'dist');
const fast = args.includes('--fast');

const sources = (dir) =>
  readdirSync(path.join(root, dir), { recursive: true })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));

rmSync(out, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: sources('tools'),
  outdir: path.join(out, 'tools'),
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
});

// Any CommonJS dependency needs `require` inside an ES module bundle.
const banner = { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' };
// The hooks are CommonJS: an ES module bundle hoists every built-in import to start-up, while
// CommonJS loads them only when the code needing them first runs (after the kill switch).
// Each hook is a bundle in hooks/bundles/, run by a small launcher (hooks/<name>.js, from
// scripts/hook-launcher.cjs) that gives it V8's code cache.
const hooks = sources('hooks').map((f) => path.basename(f, '.ts'));
const executables = [
  ['tools/cli/main.ts', 'bin/agent-session.js', 'esm'],
  ...hooks.map((name) => [`hooks/${name}.ts`, `hooks/bundles/${name}.cjs`, 'cjs']),
];
for (const [entry, target, format] of executables) {
  await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: path.join(out, target),
    bundle: true,
    format,
    platform: 'node',
    target: 'node20',
    banner: format === 'esm' ? banner : undefined,
    plugins: format === 'cjs' ? [lazyStringWidth, hookShims] : [lazyStringWidth],
    logLevel: 'warning',
  });
  chmodSync(path.join(out, target), 0o755);
}
const launcher = readFileSync(path.join(root, 'scripts', 'hook-launcher.cjs'), 'utf8');
for (const name of hooks) {
  writeFileSync(path.join(out, 'hooks', `${name}.js`), launcher.replaceAll('NAME', name), { mode: 0o755 });
}
// The package is "type": "module"; this marks the launchers as CommonJS without renaming them.
writeFileSync(path.join(out, 'hooks', 'package.json'), '{ "type": "commonjs" }\n');

if (!fast) {
  execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', root, '--emitDeclarationOnly', '--outDir', out], { stdio: 'inherit' });
}
