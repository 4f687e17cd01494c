import { join } from 'node:path';
import { isSessionError } from '../errors.js';
import { AGENTS_DIR, CLAUDE_DIR } from '../store/claude-index.js';
import { ChildrenIndex, INDEX_DIR } from '../store/children-index.js';
import { HOOK_LOG } from '../store/hook-log.js';
import { HOOK_RUNS_DIR } from '../store/hook-runs.js';
import { BACKUPS_DIR } from '../store/import-stage.js';
import { areaProblem, fileProblem } from '../store/regular-file.js';
import { STORE_IGNORE } from '../store/store-root.js';
import { QUARANTINE_DIR } from '../store/strays.js';
import { REMOVING_DIR } from '../store/trash.js';
import type { CheckName, Found } from './checks.js';

// Checked elsewhere: `.tmp` with the temp files (checkStrays), the audit files by reading them
// (checkAudit), `.trash` and `.importing` by their own checks, which refuse them.
const AREAS = [
  '.locks',
  INDEX_DIR,
  `${INDEX_DIR}/children`,
  `${INDEX_DIR}/ids`,
  REMOVING_DIR,
  QUARANTINE_DIR,
  BACKUPS_DIR,
  CLAUDE_DIR,
  `${CLAUDE_DIR}/.locks`,
  AGENTS_DIR,
  HOOK_RUNS_DIR,
];
const FILES = [STORE_IGNORE, HOOK_LOG, `${HOOK_LOG}.1`];

/**
 * The store's own areas and files that are not what the store made: a symbolic link (a cloned
 * store can carry one pointing anywhere), a FIFO, a file where a directory belongs. The store
 * refuses to move sessions or write through them; nothing is repaired automatically.
 */
export function checkLayout(storeDir: string): Found[] {
  const found: Found[] = [];
  for (const name of AREAS) {
    const problem = areaProblem(join(storeDir, name));
    if (problem)
      found.push({
        check: 'store',
        severity: 'error',
        subject: join(storeDir, name),
        message: problem,
        repair: null,
      });
  }
  // Links among the index's own entries: a child list or an ids marker pointing outside the store.
  for (const link of new ChildrenIndex(storeDir).links())
    found.push({
      check: 'store',
      severity: 'error',
      subject: link,
      message: `${link} is a symbolic link, not an index entry the store made (the store never goes through it)`,
      repair: null,
    });
  for (const name of FILES) {
    const problem = fileProblem(join(storeDir, name));
    if (problem)
      found.push({
        check: 'store',
        severity: 'error',
        subject: join(storeDir, name),
        message: problem,
        repair: null,
      });
  }
  return found;
}

/** Runs a check; an ECORRUPT it throws (a file or area the store refuses to use) becomes its finding. */
export async function guarded<T>(
  check: CheckName,
  storeDir: string,
  empty: T,
  run: () => Promise<T> | T,
): Promise<{ value: T; found: Found[] }> {
  try {
    return { value: await run(), found: [] };
  } catch (err) {
    if (!isSessionError(err, 'ECORRUPT')) throw err;
    const subject = typeof err.details.path === 'string' ? err.details.path : storeDir;
    return { value: empty, found: [{ check, severity: 'error', subject, message: err.message, repair: null }] };
  }
}
