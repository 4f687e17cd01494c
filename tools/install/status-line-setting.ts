// The `statusLine` setting of a Claude Code settings file, without the disk: whether it runs our
// statusline command, and the plans that set it and remove exactly it. A settings file has one
// status line: one that is not ours is never replaced (the caller says how to show both instead).
import { isPlainObject } from '../merge-patch.js';
import type { HookEntry, SettingsPlan } from './plan.js';

/** The built command's name: `<dist>/hooks/statusline.js`. */
export const STATUS_LINE_SCRIPT = 'statusline';

/** One shell word: single-quoted (a quote in it written `'\''`), double-quoted, or bare. */
const WORD = String.raw`(?:'(?:[^']|'\\'')*'|"[^"]*"|[^\s'"]+)`;
/**
 * What install writes, `test ! -f <file> || node <file>` (the file absolute or under `$CLAUDE_PROJECT_DIR`), and
 * `node <file>`.
 */
const RUNS_FILE = [
  new RegExp(String.raw`^test ! -f (${WORD}) \|\| node \1$`),
  new RegExp(String.raw`^node (${WORD})$`),
];
/** The word names the built status line: `<package>/dist/hooks/statusline.js`, quoted or not. */
const BUILT = /[\\/]dist[\\/]hooks[\\/]statusline\.js['"]?$/;
/** The CLI's own command, also through npx. */
const CLI = /^(?:npx (?:-y |--yes |--no )?)?agent-session statusline$/;

/**
 * Whether a `statusLine` value runs our command: one of the forms above as the whole command. A wrapper
 * that runs ours besides another command is the user's, and stays.
 */
export function isOurStatusLine(value: unknown): boolean {
  if (!isPlainObject(value) || value.type !== 'command' || typeof value.command !== 'string') return false;
  const command = value.command.trim();
  if (CLI.test(command)) return true;
  return RUNS_FILE.some((form) => BUILT.test(form.exec(command)?.[1] ?? ''));
}

/** The command of a `statusLine` value, for messages (the value as JSON when it has none). */
export function statusLineCommand(value: unknown): string {
  return isPlainObject(value) && typeof value.command === 'string' ? value.command : JSON.stringify(value);
}

function shown(value: unknown): HookEntry {
  return { event: 'statusLine', matcher: null, command: statusLineCommand(value), timeout: null };
}

/**
 * Sets our status line (or brings an older form of ours up to `command`, keeping fields the user
 * added such as `padding`). `foreign`: the status line there is someone else's, left as it was.
 */
export function planStatusLineInstall(
  old: Record<string, unknown> | undefined,
  command: string,
): SettingsPlan & { foreign: string | null } {
  const settings = old ?? {};
  const unchanged = { settings, changed: false, added: [], removed: [] };
  const current = settings.statusLine;
  if (current !== undefined && !isOurStatusLine(current)) return { ...unchanged, foreign: statusLineCommand(current) };
  if (current !== undefined && (current as { command: string }).command === command)
    return { ...unchanged, foreign: null };
  const wanted = { ...(isPlainObject(current) ? current : {}), type: 'command', command };
  return {
    settings: { ...settings, statusLine: wanted },
    changed: true,
    added: [shown(wanted)],
    removed: current === undefined ? [] : [shown(current)],
    foreign: null,
  };
}

/** The settings files that can hold a status line, in Claude Code's precedence: the first that has one is drawn. */
export const STATUS_LINE_PRECEDENCE = ['local', 'project', 'user'] as const;
export type StatusLinePlace = (typeof STATUS_LINE_PRECEDENCE)[number];

/** Of settings files read, the one whose `statusLine` Claude Code draws (undefined: none has one). */
export function applyingStatusLine<T extends { place: string; settings?: Record<string, unknown> | undefined }>(
  reads: T[],
): T | undefined {
  for (const place of STATUS_LINE_PRECEDENCE) {
    const read = reads.find((r) => r.place === place && r.settings?.statusLine !== undefined);
    if (read) return read;
  }
  return undefined;
}

/** Removes our status line only; someone else's stays. */
export function planStatusLineUninstall(old: Record<string, unknown> | undefined): SettingsPlan {
  const settings = old ?? {};
  if (!isOurStatusLine(settings.statusLine)) return { settings, changed: false, added: [], removed: [] };
  const { statusLine, ...rest } = settings;
  return { settings: rest, changed: true, added: [], removed: [shown(statusLine)] };
}

/**
 * A script that shows both status lines on one: each command gets the same JSON, and ours follows
 * the other's text when it has something to say.
 */
export function combinedStatusLineScript(theirs: string, ours: string): string {
  return [
    '#!/bin/sh',
    'input=$(cat)',
    // Each in parentheses: a command such as `test ! -f <file> || node <file>` gets the input as a whole.
    `theirs=$(printf '%s' "$input" | (${theirs}))`,
    `ours=$(printf '%s' "$input" | (${ours}))`,
    `printf '%s\\n' "$theirs\${theirs:+\${ours:+ | }}$ours"`,
  ].join('\n');
}
