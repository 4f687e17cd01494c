// What `status` reads of Claude Code's own files besides the settings: the plugin records under
// `~/.claude/plugins/` and an installed plugin's hooks/hooks.json (read only), and whether the script
// a registered hook command names exists.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';

/** One installation of a plugin, as `claude plugin install` records it. */
export interface PluginInstall {
  /** `<plugin>@<marketplace>`. */
  key: string;
  scope: string;
  installPath: string;
  /** The project a `project` or `local` install belongs to. */
  projectPath?: string;
}

/** `~/.claude/plugins/installed_plugins.json` (version 2: `{plugins: {key: [installs]}}`), the installs of `plugin`. */
export async function readPluginInstalls(home: string, plugin: string): Promise<PluginInstall[]> {
  const value = await readJson(join(home, '.claude', 'plugins', 'installed_plugins.json'));
  if (!isPlainObject(value) || !isPlainObject(value.plugins)) return [];
  const installs: PluginInstall[] = [];
  for (const [key, list] of Object.entries(value.plugins)) {
    if (!key.startsWith(`${plugin}@`) || !Array.isArray(list)) continue;
    for (const item of list) {
      if (!isPlainObject(item) || typeof item.installPath !== 'string') continue;
      const projectPath = typeof item.projectPath === 'string' ? { projectPath: item.projectPath } : {};
      installs.push({ key, scope: String(item.scope ?? 'user'), installPath: item.installPath, ...projectPath });
    }
  }
  return installs;
}

/** An installed plugin's `hooks/hooks.json` (its `hooks` table), or undefined when it has none or it is unreadable. */
export async function readPluginHooks(installPath: string): Promise<Record<string, unknown> | undefined> {
  const value = await readJson(join(installPath, 'hooks', 'hooks.json'));
  return isPlainObject(value) && isPlainObject(value.hooks) ? value.hooks : undefined;
}

/** Whether a hook's script is a file that exists (links followed, as Node would). */
export function scriptExists(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

async function readJson(file: string): Promise<unknown> {
  try {
    // Claude Code's own small files; a megabyte is far more than they hold.
    const text = await readFile(file, 'utf8');
    return text.length > 1024 * 1024 ? undefined : parseJson(text);
  } catch {
    return undefined;
  }
}
