// How the project has this package: as a dependency (every clone gets it from `npm ci` at the same
// place under the project), or not (a global install, npx, a path elsewhere: this machine only).
import { dirname, join } from 'node:path';
import { sameDirectory } from './settings-file.js';

/** The package's name: in a project's package.json, its node_modules, and its own repository. */
export const PACKAGE_NAME = 'agent-session';

export interface ProjectPackage {
  /** The project's package.json `name` (undefined: no package.json, or no name). */
  name: string | undefined;
  /** Whether its dependencies or devDependencies list this package. */
  lists: boolean;
}

/** A project's package.json as far as install cares; an unreadable or invalid one says nothing. */
export function projectPackage(text: string | undefined): ProjectPackage {
  let pkg: unknown;
  try {
    pkg = text === undefined ? undefined : JSON.parse(text);
  } catch {
    pkg = undefined;
  }
  if (typeof pkg !== 'object' || pkg === null) return { name: undefined, lists: false };
  const { name, dependencies, devDependencies } = pkg as Record<string, unknown>;
  const has = (deps: unknown) => typeof deps === 'object' && deps !== null && Object.hasOwn(deps, PACKAGE_NAME);
  return { name: typeof name === 'string' ? name : undefined, lists: has(dependencies) || has(devDependencies) };
}

/** Where the project's own copy of the package is (or would be). */
export function dependencyDir(projectDir: string): string {
  return join(projectDir, 'node_modules', PACKAGE_NAME);
}

/** The package directory of built hooks (`<package>/dist/hooks/<name>.js`). */
export function packageDirOf(hookFile: string): string {
  return dirname(dirname(dirname(hookFile)));
}

/**
 * Whether the package is a dependency of the project: the running package is the project's
 * `node_modules/agent-session` (symlinks resolved), or the project's package.json lists it.
 */
export async function isDependency(projectDir: string, pkg: ProjectPackage, hookFile: string): Promise<boolean> {
  return pkg.lists || (await sameDirectory(dependencyDir(projectDir), packageDirOf(hookFile)));
}
