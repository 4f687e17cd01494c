import { lstat, lutimes } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { writeFileAtomic } from './atomic.js';
import { CLAUDE_DIR } from './claude-index.js';
import { withLock } from './lock.js';
import { decodeUtf8, ensureAreaSync, readRegularFileSync } from './regular-file.js';
import { ensureStoreSync } from './store-root.js';

/** `<store>/.claude-code/last-sweep`: its modification time is when the last sweep was claimed. */
function sweepStampPath(storeDir: string): string {
  return join(resolve(storeDir), CLAUDE_DIR, 'last-sweep');
}

/**
 * Whether this process should sweep now: true at most once per interval across processes.
 * The common case is one stat. A store without a stamp starts the clock instead of sweeping.
 */
export async function claimSweep(storeDir: string, now: number, intervalMs: number): Promise<boolean> {
  const file = sweepStampPath(storeDir);
  const last = await stampTime(file);
  if (last !== undefined && now - last < intervalMs) return false;
  ensureStoreSync(resolve(storeDir));
  ensureAreaSync(dirname(file));
  return withLock(`${file}.lock`, { timeoutMs: 500, what: 'the sweep stamp' }, async () => {
    // Checked again under the lock: another hook may have claimed it since the stat.
    const again = await stampTime(file);
    if (again !== undefined && now - again < intervalMs) return false;
    // Replaced, never written through: a link planted there (a cloned store) is not followed.
    await writeFileAtomic(file, `${new Date(now).toISOString()}\n`);
    await lutimes(file, now / 1000, now / 1000);
    return again !== undefined;
  });
}

async function stampTime(file: string): Promise<number | undefined> {
  return lstat(file).then(
    (info) => info.mtimeMs,
    () => undefined,
  );
}

/** Where the last sweep leaves its report (`--sweep` also prints it). */
function sweepReportPath(storeDir: string): string {
  return join(resolve(storeDir), CLAUDE_DIR, 'last-sweep.json');
}

export async function writeSweepReport(storeDir: string, report: unknown): Promise<void> {
  ensureStoreSync(resolve(storeDir));
  ensureAreaSync(dirname(sweepReportPath(storeDir)));
  await writeFileAtomic(sweepReportPath(storeDir), `${JSON.stringify(report, null, 2)}\n`);
}

/** A report is a few KiB; a larger file is not one. */
const REPORT_MAX_BYTES = 1024 * 1024;

/** The last sweep's report as written (undefined: none yet, or not JSON); never throws. */
export function readSweepReport(storeDir: string): unknown {
  try {
    const data = readRegularFileSync(sweepReportPath(storeDir), { maxBytes: REPORT_MAX_BYTES });
    return data === undefined ? undefined : JSON.parse(decodeUtf8(data, sweepReportPath(storeDir)));
  } catch {
    return undefined;
  }
}
