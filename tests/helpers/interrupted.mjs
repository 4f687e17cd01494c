// Helpers for the tests of commands cut short: what the trail, the trash and the locks show after a
// kill or a signal, and stores of old finished trees to cut short.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { build, trashEntries, treeSpec } from './trees.mjs';

/** The entries of the store's trail (`audit.jsonl` read directly) whose line passes `keep`, parsed. */
function auditEntries(dir, keep) {
  const file = path.join(dir, 'audit.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line && keep(line))
    .map((line) => JSON.parse(line));
}

/** Ids named by entries of `action` (a trail of thousands of lines: only lines naming the action are parsed). */
export function audited(dir, action) {
  const named = `"action":${JSON.stringify(action)}`;
  return new Set(
    auditEntries(dir, (line) => line.includes(named))
      .filter((e) => e.action === action)
      .flatMap((e) => e.ids),
  );
}

/** The trash entries whose manifest is written (a kill can land between creating an entry and writing it). */
export const trashEntriesWithManifest = (dir) => trashEntries(dir, { written: true });

export function trashCount(dir) {
  const trash = path.join(dir, '.trash');
  return existsSync(trash) ? readdirSync(trash).length : 0;
}

/** Lock directories (and takeover guards) left in `<store>/.locks/`. */
export function locksLeft(dir) {
  const locks = path.join(dir, '.locks');
  return existsSync(locks) ? readdirSync(locks).filter((n) => n.endsWith('.lock') || n.endsWith('.takeover')) : [];
}

const templates = mkdtempSync(path.join(tmpdir(), 'agent-session-interrupts-'));
after(() => rmSync(templates, { recursive: true, force: true }));
const oldTreesTemplates = new Map();

/**
 * A copy at `dir` of a store of `count` old finished trees of 3 sessions (a root and two children);
 * resolves their ids. Each size is built once per test file, from a copy of a smaller one if any.
 */
export async function oldTrees(dir, count) {
  if (!oldTreesTemplates.has(count)) {
    const smaller = Math.max(0, ...[...oldTreesTemplates.keys()].filter((n) => n < count));
    const building = (async () => {
      const template = path.join(templates, `old-trees-${count}`);
      const spec = [];
      for (let i = 0; i < count; i++)
        spec.push(...treeSpec(`r${String(i).padStart(4, '0')}`, 2, 2, { outcome: 'completed', hoursAgo: 48 }));
      if (smaller > 0) cpSync((await oldTreesTemplates.get(smaller)).template, template, { recursive: true });
      await build(template, spec.slice(smaller * 3));
      return { template, ids: spec.map((s) => s.id) };
    })();
    oldTreesTemplates.set(count, building);
  }
  const { template, ids } = await oldTreesTemplates.get(count);
  cpSync(template, dir, { recursive: true });
  return ids;
}

/** Sessions held in the trash, in every entry. */
export function trashedCount(dir) {
  const trash = path.join(dir, '.trash');
  if (!existsSync(trash)) return 0;
  let n = 0;
  for (const entry of readdirSync(trash)) {
    const sessions = path.join(trash, entry, 'sessions');
    if (existsSync(sessions)) n += readdirSync(sessions).length;
  }
  return n;
}

/**
 * Sessions that took effect in the trash and that no audit line of `action` names: those of complete
 * entries, and those of the committed subtrees of an entry still moving (a batched cleanup cut short).
 */
export function unauditedTrash(dir, action) {
  const named = audited(dir, action);
  return trashEntriesWithManifest(dir)
    .flatMap((e) => settled(e))
    .filter((id) => !named.has(id));
}

function settled(e) {
  if (e.manifest.status === 'complete') return e.held;
  if (e.manifest.status !== 'moving' || !e.manifest.subtrees) return [];
  const count = e.manifest.subtrees.slice(0, e.manifest.committed ?? 0).reduce((n, t) => n + t.sessions, 0);
  const committed = new Set(e.manifest.sessions.slice(0, count).map((s) => s.id));
  return e.held.filter((id) => committed.has(id));
}
