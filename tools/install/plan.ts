import { SessionError } from '../errors.js';
import {
  HOOK_REGISTRATIONS,
  ourHook,
  type CommandHook,
  type HookName,
  type HookRegistration,
} from './registrations.js';

type SettingsObject = Record<string, unknown>;

/** One of our entries as the report shows it. */
export interface HookEntry {
  event: string;
  matcher: string | null;
  command: string;
  timeout: number | null;
}

export interface SettingsPlan {
  /** The settings to write (the old object itself when nothing changes). */
  settings: SettingsObject;
  changed: boolean;
  added: HookEntry[];
  removed: HookEntry[];
}

type Group = { matcher?: unknown; hooks?: unknown };
type HooksTable = Record<string, unknown[]>;

/**
 * Our registrations merged into `old` (undefined: no file yet). Our entries are updated in place,
 * missing ones appended as new matcher groups, stale ones of ours removed; nothing else changes.
 */
export function planInstall(
  old: SettingsObject | undefined,
  commands: Record<HookName, string>,
  timeout: number,
  registrations: readonly HookRegistration[] = HOOK_REGISTRATIONS,
): SettingsPlan {
  const settings = structuredClone(old ?? {});
  const hooks = hooksTable(settings);
  const kept = new Set<unknown>();
  for (const reg of registrations) {
    const wanted: CommandHook = { type: 'command', command: commands[reg.hook], timeout };
    const groups = (hooks[reg.event] ??= []);
    const replaced = replaceOurs(groups, reg, wanted);
    if (!replaced)
      groups.push(reg.matcher === undefined ? { hooks: [wanted] } : { matcher: reg.matcher, hooks: [wanted] });
    kept.add(replaced ?? wanted);
  }
  removeOurs(hooks, (entry) => !kept.has(entry));
  settings.hooks = hooks;
  return result(old, settings);
}

/** `old` without any of our entries; groups and events emptied by that are dropped, nothing else. */
export function planUninstall(old: SettingsObject | undefined): SettingsPlan {
  // Nothing of ours: nothing to write (an empty "hooks" stays, and so does a "hooks" of the wrong type).
  if (old === undefined) return { settings: {}, changed: false, added: [], removed: [] };
  if (ourEntries(old).length === 0) return { settings: old, changed: false, added: [], removed: [] };
  const settings = structuredClone(old);
  const hooks = hooksTable(settings);
  removeOurs(hooks, () => true);
  if (Object.keys(hooks).length === 0) delete settings.hooks;
  return result(old, settings);
}

/** Our entries in a settings object, in file order. */
export function ourEntries(settings: SettingsObject | undefined): HookEntry[] {
  const hooks = settings?.hooks;
  if (!isObject(hooks)) return [];
  const entries: HookEntry[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      if (!isObject(group) || !Array.isArray(group.hooks)) continue;
      for (const entry of group.hooks)
        if (ourHook(entry, event)) entries.push(describe(event, group, entry as CommandHook));
    }
  }
  return entries;
}

function result(old: SettingsObject | undefined, settings: SettingsObject): SettingsPlan {
  const before = ourEntries(old);
  const after = ourEntries(settings);
  const changed = old === undefined || JSON.stringify(old) !== JSON.stringify(settings);
  return {
    settings: changed ? settings : old,
    changed,
    added: after.filter((a) => !before.some((b) => sameEntry(a, b))),
    removed: before.filter((b) => !after.some((a) => sameEntry(a, b))),
  };
}

/**
 * Makes the first entry of ours for this hook in a group with the same matcher run `wanted`, and
 * returns it (undefined: there is none).
 */
function replaceOurs(groups: unknown[], reg: HookRegistration, wanted: CommandHook): object | undefined {
  for (const group of groups) {
    if (!isObject(group) || !Array.isArray(group.hooks) || matcherOf(group) !== reg.matcher) continue;
    const index = group.hooks.findIndex((entry) => ourHook(entry, reg.event) === reg.hook);
    if (index >= 0) {
      // Fields someone added to our entry (a statusMessage) stay; command and timeout are ours.
      return Object.assign(group.hooks[index] as object, wanted);
    }
  }
  return undefined;
}

function removeOurs(hooks: HooksTable, drop: (entry: unknown) => boolean): void {
  for (const [event, groups] of Object.entries(hooks)) {
    let emptied = false;
    const left = groups.filter((group) => {
      if (!isObject(group) || !Array.isArray(group.hooks)) return true;
      const entries = group.hooks.filter((entry) => !(ourHook(entry, event) && drop(entry)));
      if (entries.length === group.hooks.length) return true;
      group.hooks = entries;
      // Only a group that we emptied goes; one that was empty already stays as it was.
      if (entries.length === 0) emptied = true;
      return entries.length > 0;
    });
    if (!emptied) continue;
    if (left.length === 0) delete hooks[event];
    else hooks[event] = left;
  }
}

/** `settings.hooks`, validated enough to merge into without losing anything. */
function hooksTable(settings: SettingsObject): HooksTable {
  const hooks = settings.hooks === undefined ? {} : settings.hooks;
  if (!isObject(hooks))
    throw new SessionError('EINVALID', 'the settings key "hooks" is not an object; refusing to rewrite the file');
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups))
      throw new SessionError(
        'EINVALID',
        `the settings key "hooks.${event}" is not an array; refusing to rewrite the file`,
      );
  }
  return hooks as HooksTable;
}

/** Claude Code treats a missing, empty or `*` matcher alike: every occurrence of the event. */
function matcherOf(group: Group): unknown {
  return group.matcher === undefined || group.matcher === '' || group.matcher === '*' ? undefined : group.matcher;
}

function describe(event: string, group: Group, entry: CommandHook): HookEntry {
  return {
    event,
    matcher: typeof group.matcher === 'string' ? group.matcher : null,
    command: entry.command,
    timeout: typeof entry.timeout === 'number' ? entry.timeout : null,
  };
}

function sameEntry(a: HookEntry, b: HookEntry): boolean {
  return a.event === b.event && a.matcher === b.matcher && a.command === b.command && a.timeout === b.timeout;
}

function isObject(value: unknown): value is Record<string, unknown> & Group {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
