import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliCommand, decideCliInstall, type CliInstall } from '../policy/cli-command.js';

interface Where {
  /** The project the command will run in. */
  projectDir: string;
  env: Record<string, string | undefined>;
  /** This code's own file: the hook bundle (dist/hooks/bundles/) or the library (dist/tools/claude/). */
  from?: string;
}

/** How the running package is installed, seen from `projectDir` (undefined when its CLI is not found). */
export function locateOwnCli({ projectDir, env, from = ownFile() }: Where): CliInstall | undefined {
  const bin = ownBin(from);
  if (!bin) return undefined;
  const projectBin = real(join(projectDir, 'node_modules', 'agent-session', 'dist', 'bin', 'agent-session.js'));
  // PATH is searched only when the project's own copy is not the one running.
  if (projectBin === bin) return decideCliInstall({ bin, projectBin });
  return decideCliInstall({ bin, projectBin, pathBin: firstOnPath(env.PATH ?? '') });
}

/** The command that runs this package's CLI in `projectDir`; `agent-session` when it cannot tell. */
export function ownCliCommand(where: Where): string {
  const install = locateOwnCli(where);
  return install ? cliCommand(install) : 'agent-session';
}

/**
 * This module's file. A bundle (CommonJS) has `__filename`, the bundle's path: its `import.meta.url`
 * would cost a hook the loading of node:url, about a third of a millisecond.
 */
function ownFile(): string {
  return typeof __filename === 'string' ? __filename : import.meta.url;
}

/** `<dist>/bin/agent-session.js` of the running package, found upwards from this code's file. */
function ownBin(from: string): string | undefined {
  let dir = dirname(from.startsWith('file:') ? fileURLToPath(from) : resolve(from));
  for (let level = 0; level < 4; level++, dir = dirname(dir)) {
    const bin = join(dir, 'bin', 'agent-session.js');
    if (existsSync(bin)) return real(bin);
  }
  return undefined;
}

/** What the shell would run as `agent-session`: the first entry of PATH that has one, links resolved. */
function firstOnPath(path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const found = real(join(dir, 'agent-session'));
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
