import { createRequire } from 'node:module';

/**
 * A built-in module, loaded where it is used instead of at start-up, where some would cost every run
 * milliseconds. `process.getBuiltinModule` is Node 20.16's; on an older Node (outside "engines", but a hook
 * runs under whatever `node` is on PATH) require loads the same module.
 */
export const builtinModule: typeof process.getBuiltinModule = ((id: string) =>
  typeof process.getBuiltinModule === 'function'
    ? process.getBuiltinModule(id)
    : createRequire(import.meta.url)(id)) as typeof process.getBuiltinModule;
