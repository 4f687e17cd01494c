// Changing settings files as one step: each planned from what was read, all checked before any is
// written, and those written put back when a later one fails.
import { SessionError, toSessionError } from '../errors.js';
import type { HookEntry, SettingsPlan } from './plan.js';
import { checkReplaceable, replaceTextFile } from './replace-file.js';
import { isPlainFile, readSettingsFile, removeSettingsFile, writeSettingsFile } from './settings-file.js';
import { assertRewritable, formatSettings, type SettingsFile } from './settings-text.js';

/** Which settings file: the project's shared one, the project's local one, or the user's. */
export type SettingsScope = 'project' | 'local' | 'user';

/** What the command did to one settings file. */
export interface SettingsChange {
  file: string;
  scope: SettingsScope;
  changed: boolean;
  /** The copy of the old file made before changing it (null: none made). */
  backup: string | null;
  /** The file was removed: our entries were all it held. */
  removed_file: boolean;
  added: HookEntry[];
  removed: HookEntry[];
  /** The file's content after the command ('' when removed or absent). */
  content: string;
}

export interface PlannedChange {
  before: SettingsFile;
  report: SettingsChange;
}

/** Reads a settings file and plans its change; checks that a file to rewrite can be rewritten. */
export async function planFile(
  file: string,
  scope: SettingsScope,
  plan: (old: Record<string, unknown> | undefined) => SettingsPlan,
  removeEmpty: boolean,
): Promise<PlannedChange> {
  const before = await readSettingsFile(file);
  const { settings, changed, added, removed } = plan(before.settings);
  const removedFile =
    changed &&
    removeEmpty &&
    before.text !== undefined &&
    Object.keys(settings).length === 0 &&
    (await isPlainFile(file));
  if (changed && !removedFile) assertRewritable(before);
  const content = removedFile ? '' : changed ? formatSettings(settings, before) : (before.text ?? '');
  return {
    before,
    report: { file, scope, changed, backup: null, removed_file: removedFile, added, removed, content },
  };
}

/**
 * Writes every planned change, all checked first; when one fails, those written are put back as they
 * were, so a command leaves every file changed or none.
 */
export async function writeAll(changes: PlannedChange[], now = Date.now()): Promise<void> {
  const todo = changes.filter((c) => c.report.changed);
  for (const { before } of todo) await checkReplaceable(before.file, before.text);
  const undos: (() => Promise<void>)[] = [];
  try {
    for (const { before, report } of todo) {
      if (report.removed_file) undos.push(await removeSettingsFile(before));
      else {
        report.backup = await writeSettingsFile(before, report.content, now);
        undos.push(() => putBack(before, report.content));
      }
    }
  } catch (err) {
    for (const undo of undos.reverse()) {
      await undo().catch((undoErr: Error) => {
        const first = toSessionError(err, 'cannot write the settings');
        throw new SessionError(first.code, `${first.message}; and ${undoErr.message}`, { cause: err });
      });
    }
    throw err;
  }
}

function putBack(before: SettingsFile, written: string): Promise<void> {
  if (before.text !== undefined)
    return replaceTextFile(before.file, written, before.text, () => Promise.resolve()).then(() => undefined);
  return removeSettingsFile({ ...before, text: written }).then(() => undefined);
}
