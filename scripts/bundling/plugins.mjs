// esbuild plugins for the executable bundles: keep them free of import(), which the launcher cannot
// serve (it runs bundles as scripts), keep yargs's start small in the CLI, and, in the hooks, swap a
// module that costs more than it saves.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * For every executable bundle, and needed, not an optimisation: `await import('node:x')` (loaded when
 * first needed) becomes a require at that moment. esbuild leaves the import() as it is, and a bundle
 * run by the launcher (a vm.Script) has no loader for it.
 */
export const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: args.path, namespace: 'lazy-builtin' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * For the two hook bundles only: node:fs/promises as synchronous calls (see fs-promises.mjs). Kept
 * because it saves each hook run several milliseconds (bench/README.md).
 */
export const syncFsPromises = {
  name: 'sync-fs-promises',
  setup(build) {
    build.onResolve({ filter: /^(node:)?fs\/promises$/ }, () => ({ path: path.join(here, 'fs-promises.mjs') }));
  },
};

/**
 * For every executable bundle: yargs imports node:assert for two checks of its own arguments
 * (strictEqual, notStrictEqual) that pass on every ordinary run, and loading node:assert costs each
 * CLI run about 1.5 ms. These two make the same comparison (Object.is, as node:assert does) and load
 * node:assert only to throw its own error when a check fails.
 */
export const lazyAssert = {
  name: 'lazy-assert',
  setup(build) {
    build.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      args.importer.includes(`${path.sep}node_modules${path.sep}yargs${path.sep}`)
        ? { path: 'assert', namespace: 'lazy-assert' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'lazy-assert' }, () => ({
      contents: `export function strictEqual(actual, expected, message) {
  if (!Object.is(actual, expected)) require('node:assert').strictEqual(actual, expected, message);
}
export function notStrictEqual(actual, expected, message) {
  if (Object.is(actual, expected)) require('node:assert').notStrictEqual(actual, expected, message);
}
`,
      loader: 'js',
    }));
  },
};

/**
 * For every executable bundle: yargs's Node shim, started from the bundle's own path. yargs guesses a
 * version (which build-cli.ts then replaces) from the first package.json it finds walking up from the
 * directory above its node_modules, or, when its path has none (a bundle), from the working
 * directory: a listing of every ancestor directory on every run, then, with no package.json found, a
 * failed check that loads node:assert; about 4 ms of a CLI run in a deep directory, more under a
 * large one such as /usr/lib. From the bundle's path the walk ends at dist/bin/package.json, one level
 * up. The shim's file URL is not built either (the bundle's path serves createRequire as well), and
 * the terminal's width is read when asked for, not at start-up. A yargs whose shim no longer has
 * these lines fails the build here.
 */
export const yargsShimFromBundle = {
  name: 'yargs-shim-from-bundle',
  setup(build) {
    build.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, async (args) => {
      let text = await readFile(args.path, 'utf8');
      const replacements = [
        ['const __dirname = fileURLToPath(import.meta.url);', 'const __dirname = __filename;'],
        [
          "const mainFilename = __dirname.substring(0, __dirname.lastIndexOf('node_modules'));",
          'const mainFilename = __dirname;',
        ],
        ['const require = createRequire(import.meta.url);', 'const require = createRequire(__filename);'],
        // Read when asked (yargs asks only without .wrap(), which build-cli.ts gives), not at start-up:
        // `process.stdout` builds a stream, and for a pipe loads `net`.
        [
          "stdColumns: typeof process.stdout.columns !== 'undefined' ? process.stdout.columns : null",
          'get stdColumns() { ' +
            "return typeof process.stdout.columns !== 'undefined' ? process.stdout.columns : null; }",
        ],
      ];
      for (const [from, to] of replacements) {
        if (!text.includes(from)) throw new Error(`${args.path} has no \`${from}\`: see yargsShimFromBundle`);
        text = text.replace(from, to);
      }
      return { contents: text, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};
