// esbuild plugin for the hook bundles: swaps modules that cost a hook more to load than they save.
// Today one: node:fs/promises, for synchronous calls (see fs-promises.mjs).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export const hookShims = {
  name: 'hook-shims',
  setup(build) {
    build.onResolve({ filter: /^(node:)?fs\/promises$/ }, () => ({ path: path.join(here, 'fs-promises.mjs') }));
  },
};
