// esbuild plugins for the executable bundles: keep them free of import(), which the launcher cannot
// serve (it runs bundles as scripts), and, in the hooks, swap a module that costs more than it saves.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** For every executable bundle: `await import('node:x')` (loaded when first needed) becomes a require at that moment. */
export const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    build.onResolve({ filter: /^node:/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, namespace: 'lazy-builtin' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};

/** For the hook bundles only: node:fs/promises as synchronous calls (see fs-promises.mjs). */
export const syncFsPromises = {
  name: 'sync-fs-promises',
  setup(build) {
    build.onResolve({ filter: /^(node:)?fs\/promises$/ }, () => ({ path: path.join(here, 'fs-promises.mjs') }));
  },
};
