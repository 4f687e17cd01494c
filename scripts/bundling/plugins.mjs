// esbuild plugins for the executable bundles: keep them free of import(), which the launcher cannot
// serve (it runs bundles as scripts), and, in the hooks, swap a module that costs more than it saves.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** For every executable bundle: `await import('node:x')` (loaded when first needed) becomes a require at that moment. */
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

/** For the hook bundles only: node:fs/promises as synchronous calls (see fs-promises.mjs). */
export const syncFsPromises = {
  name: 'sync-fs-promises',
  setup(build) {
    build.onResolve({ filter: /^(node:)?fs\/promises$/ }, () => ({ path: path.join(here, 'fs-promises.mjs') }));
  },
};

/**
 * For the two hook bundles only: the cleanup (Sessions#cleanup loads it on use) stays out, with
 * everything it brings (trees, trash, plans, git): about a third of the bundle, which every hook run
 * would read and load. The hooks never call it; their periodic sweep is its own bundle.
 */
export const withoutCleanup = {
  name: 'without-cleanup',
  setup(build) {
    build.onResolve({ filter: /\/trees\/cleanup\.js$/ }, (args) =>
      args.kind === 'dynamic-import' ? { path: args.path, namespace: 'no-cleanup' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-cleanup' }, () => ({
      contents:
        'export async function cleanup() { throw new Error("cleanup is not part of the hook bundles: it runs from bundles/sweep.cjs"); }',
      loader: 'js',
    }));
  },
};

/**
 * For the hook bundles: `import { f } from 'node:X'` of a module the hooks rarely need (node:os: only
 * when HOME is unset) loads it on the first call of one of its functions rather than at start-up.
 */
export function lazyStaticBuiltins(names) {
  const filter = new RegExp(`^(${names.map((n) => n.replace(/[:/]/g, '\\$&')).join('|')})$`);
  return {
    name: 'lazy-static-builtins',
    setup(build) {
      build.onResolve({ filter }, (args) =>
        args.kind === 'import-statement' ? { path: args.path, namespace: 'lazy-static' } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'lazy-static' }, (args) => {
        const module = createRequire(import.meta.url)(args.path);
        const functions = Object.keys(module).filter(
          (key) => typeof module[key] === 'function' && /^[a-z]\w*$/i.test(key),
        );
        const lines = [`let loaded;`, `const load = () => (loaded ??= require(${JSON.stringify(args.path)}));`];
        for (const key of functions) lines.push(`export function ${key}(...args) { return load().${key}(...args); }`);
        return { contents: lines.join('\n'), loader: 'js' };
      });
    },
  };
}

/**
 * For every executable bundle: `import path from 'node:path'` in each module would become its own
 * `__toESM(require("node:path"))`, a copy of the module object made at start-up (nine in a hook
 * bundle, about 0.3 ms together in a CPU profile). They share one module here, which requires it once.
 */
export const sharedPath = {
  name: 'shared-path',
  setup(build) {
    build.onResolve({ filter: /^node:path$/ }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'shared-path' } : undefined,
    );
    // Default import only (the one form the code uses): a named import fails the build, loudly.
    build.onLoad({ filter: /.*/, namespace: 'shared-path' }, () => ({
      contents: 'export default require("node:path");',
      loader: 'js',
    }));
  },
};
