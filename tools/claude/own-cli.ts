import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, sep } from 'node:path';
import { cliCommand, decideCliInstall, type CliInstall } from '../policy/cli-command.js';
import { locateProject } from '../store/project.js';

/** The CLI in the package (path.join makes the separators the platform's). */
const BIN = 'dist/bin/agent-session.js';

interface Where {
  /** The project the command will run in. */
  projectDir: string;
  env: Record<string, string | undefined>;
  /**
   * This code's own file: the library's (dist/tools/claude/), or in a bundle (dist/hooks/bundles/)
   * the bundle's, which scripts/build.mjs gives as import.meta.filename.
   */
  from?: string;
}

/** How the running package is installed, seen from `projectDir` (undefined when its CLI is not found). */
export function locateOwnCli({ projectDir, env, from = import.meta.filename }: Where): CliInstall | undefined {
  const bin = ownBin(from);
  const projectBin = join(projectDir, 'node_modules', 'agent-session', BIN);
  // npm's layout in a project reached by its real path needs no file call; a link (pnpm) one realpath.
  if (projectBin === bin) return decideCliInstall({ bin, projectBin });
  const realProjectBin = real(projectBin);
  if (realProjectBin === bin) return decideCliInstall({ bin, projectBin: realProjectBin });
  // PATH is searched only when the project's own copy is not the one running.
  const install = decideCliInstall({ bin, projectBin: realProjectBin, pathBin: firstOnPath(env.PATH ?? '') });
  return install.kind === 'file' && !existsSync(bin) ? undefined : install;
}

/** The command that runs this package's CLI in `projectDir`; `agent-session` when it cannot tell. */
export function ownCliCommand(where: Where): string {
  const install = locateOwnCli(where);
  return install ? cliCommand(install) : 'agent-session';
}

/** `ownCliCommand` in the project found from `cwd` (see locateProject). */
export function ownCliCommandFrom(cwd: string, env: Record<string, string | undefined>): string {
  return ownCliCommand({ projectDir: locateProject({ cwd, env }).dir, env });
}

/**
 * `<package>/dist/bin/agent-session.js` of the running package: `dist` is three levels above this
 * code's file, a bundle (dist/hooks/bundles/, dist/bin/bundles/) or the library's (dist/tools/claude/).
 * Node gives both by their real path, so no file call is needed.
 */
function ownBin(from: string): string {
  return join(dirname(dirname(dirname(dirname(from)))), BIN);
}

/** What the shell would run as `agent-session`: the first entry of PATH that has one, links resolved. */
function firstOnPath(path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    // Concatenated: path.join would normalize each entry, and the shell does not either.
    const found = real(`${dir}${sep}agent-session`);
    if (found) return found;
  }
  return undefined;
}

/** The file with its links resolved, or undefined when there is none (checked first: a throw costs more). */
function real(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return realpathSync.native(file);
  } catch {
    return undefined;
  }
}
