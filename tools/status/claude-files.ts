// What `status` reads of Claude Code's own files besides the settings: the plugin records under
// `~/.claude/plugins/` (and a directory marketplace's listing) and an installed plugin's hooks/hooks.json
// (read only), and whether the script
// a registered hook command names exists.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseJson } from '../json.js';
import { isPlainObject } from '../merge-patch.js';

/** One installation of a plugin, as `claude plugin install` records it. */
export interface PluginInstall {
  /** `<plugin>@<marketplace>`. */
  key: string;
  scope: string;
  installPath: string;
  /**
   * Where its hooks run from (`${CLAUDE_PLUGIN_ROOT}`): for a directory marketplace the plugin's source
   * directory itself (Claude Code reads its hooks there, not in the cached copy), else `installPath`.
   */
  root: string;
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
    const source = await directorySource(home, plugin, key.slice(plugin.length + 1));
    for (const item of list) {
      if (!isPlainObject(item) || typeof item.installPath !== 'string') continue;
      const projectPath = typeof item.projectPath === 'string' ? { projectPath: item.projectPath } : {};
      const { installPath } = item;
      installs.push({
        key,
        scope: String(item.scope ?? 'user'),
        installPath,
        root: source ?? installPath,
        ...projectPath,
      });
    }
  }
  return installs;
}

/**
 * The plugin's directory when its marketplace is a directory (`claude plugin marketplace add <dir>`):
 * the marketplace's place from `known_marketplaces.json`, joined with the plugin's relative `source`
 * in that directory's `.claude-plugin/marketplace.json`. Undefined for any other kind of marketplace.
 */
async function directorySource(home: string, plugin: string, marketplace: string): Promise<string | undefined> {
  const known = await readJson(join(home, '.claude', 'plugins', 'known_marketplaces.json'));
  const entry = isPlainObject(known) ? known[marketplace] : undefined;
  if (!isPlainObject(entry) || !isPlainObject(entry.source) || entry.source.source !== 'directory') return undefined;
  const dir = typeof entry.installLocation === 'string' ? entry.installLocation : entry.source.path;
  if (typeof dir !== 'string') return undefined;
  const listing = await readJson(join(dir, '.claude-plugin', 'marketplace.json'));
  const plugins = isPlainObject(listing) && Array.isArray(listing.plugins) ? listing.plugins : [];
  const ours = plugins.find((p) => isPlainObject(p) && p.name === plugin) as Record<string, unknown> | undefined;
  return typeof ours?.source === 'string' ? resolve(dir, ours.source) : dir;
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

/** Whether a directory is there (CLAUDE_PROJECT_DIR may name none). */
export function directoryExists(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
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
