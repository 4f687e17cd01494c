// esbuild plugin for the hook bundles: swaps modules that cost a hook more to load than they save,
// and keeps the bundles free of import(), which the launcher cannot serve (it runs them as scripts).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export const hookShims = {
  name: 'hook-shims',
  setup(build) {
    // node:fs/promises as synchronous calls (see fs-promises.mjs).
    build.onResolve({ filter: /^(node:)?fs\/promises$/ }, () => ({ path: path.join(here, 'fs-promises.mjs') }));
    // `await import('node:x')` (loaded when first needed) becomes a require at that moment.
    build.onResolve({ filter: /^node:/ }, (args) => (args.kind === 'dynamic-import' ? { path: args.path, namespace: 'lazy-builtin' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
  },
};
