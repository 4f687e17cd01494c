/**
 * A built-in module, loaded where it is used instead of at start-up, where some would cost every run
 * milliseconds. `process.getBuiltinModule` is Node 20.16's. On an older Node (outside "engines", but a hook
 * runs under whatever `node` is on PATH) the executables, CommonJS bundles, load it with their own `require`:
 * importing `node:module` for `createRequire` would cost each of their runs the ES module loader's start. The
 * library imported as an ES module has no `require`: it needs the Node "engines" names.
 */
export const builtinModule: typeof process.getBuiltinModule = ((id: string) =>
  typeof process.getBuiltinModule === 'function'
    ? process.getBuiltinModule(id)
    : require(id)) as typeof process.getBuiltinModule;
