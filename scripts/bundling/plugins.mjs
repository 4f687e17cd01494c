// esbuild plugins for the executable bundles: keep them free of import(), which the launcher cannot
// serve (it runs bundles as scripts), and, in the hooks, swap a module that costs more than it saves.
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
