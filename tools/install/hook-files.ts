import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SessionError } from '../errors.js';

/**
 * Absolute paths of the built hooks (`<dist>/hooks/<name>.js`), found from this code's own file:
 * dist/bin/agent-session.js in the CLI bundle, dist/tools/install/hook-files.js in the library.
 */
export function locateBuiltHooks<Name extends string>(
  names: readonly Name[],
  from: string = import.meta.url,
): Record<Name, string> {
  const start = dirname(from.startsWith('file:') ? fileURLToPath(from) : resolve(from));
  const looked: string[] = [];
  for (let dir = start, level = 0; level < 4; dir = dirname(dir), level++) {
    const hooksDir = join(dir, 'hooks');
    looked.push(hooksDir);
    const files = names.map((name) => join(hooksDir, `${name}.js`));
    if (files.every((file) => existsSync(file)))
      return Object.fromEntries(names.map((name, i) => [name, files[i]])) as Record<Name, string>;
    if (dirname(dir) === dir) break;
  }
  throw new SessionError(
    'EIO',
    `the built hooks (${names.map((n) => `${n}.js`).join(', ')}) were not found in ${looked.join(', ')}; ` +
      'build the package (npm run build) or reinstall it',
    { details: { looked } },
  );
}

/** Those of `files` that do not exist (a dependency's built hooks before `npm install`). */
export async function missingFiles(files: readonly string[]): Promise<string[]> {
  return files.filter((file) => !existsSync(file));
}

/**
 * The built MCP server (`<dist>/bin/agent-session-mcp.js`), found from this code's own file as the
 * hooks are; undefined when this build has none.
 */
export function locateBuiltMcpServer(from: string = import.meta.url): string | undefined {
  const start = dirname(from.startsWith('file:') ? fileURLToPath(from) : resolve(from));
  for (let dir = start, level = 0; level < 4; dir = dirname(dir), level++) {
    const file = join(dir, 'bin', 'agent-session-mcp.js');
    if (existsSync(file)) return file;
    if (dirname(dir) === dir) break;
  }
  return undefined;
}
