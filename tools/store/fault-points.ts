import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A seam for the race and crash tests: named points in the store's multi-step operations where a
 * test can hold a process (to run another one inside the window, or to kill it exactly there) or
 * make a step fail as a full disk would. Off unless AGENT_SESSION_TEST_FAULTS is set:
 *   AGENT_SESSION_TEST_FAULTS="pause:trash-move:3,fail:trash-complete:1:ENOSPC"
 *   AGENT_SESSION_TEST_FAULTS_DIR=<dir>
 * `pause:<point>:<n>` writes `<dir>/<point>.reached` at the n-th visit and waits (timers keep
 * running, so held locks stay fresh) until `<dir>/<point>.go` exists; `stall:<point>:<n>:<ms>` writes
 * `<dir>/<point>.reached` and blocks the whole process for `ms` (a read from a hung disk: no timer or
 * signal handler runs meanwhile); `fail:<point>:<n>:<code>` throws a system error with that code at
 * the n-th visit.
 */
const spec = process.env.AGENT_SESSION_TEST_FAULTS;
const rules = spec ? spec.split(',').map((rule) => rule.split(':')) : [];
const visits = new Map<string, number>();

export async function faultPoint(point: string): Promise<void> {
  if (rules.length === 0) return;
  const n = (visits.get(point) ?? 0) + 1;
  visits.set(point, n);
  for (const [kind, name, at, code] of rules) {
    if (name !== point || Number(at ?? 1) !== n) continue;
    if (kind === 'fail') throw Object.assign(new Error(`${code}: injected at ${point}`), { code });
    if (kind === 'pause') await pauseHere(point);
    if (kind === 'stall') {
      reachedHere(point);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(code));
    }
  }
}

async function pauseHere(point: string): Promise<void> {
  reachedHere(point);
  // Also goes on once the directory is gone: a test that ended without releasing it leaves no process behind.
  while (!existsSync(join(faultsDir(), `${point}.go`)) && existsSync(faultsDir()))
    await new Promise((resolve) => setTimeout(resolve, 5));
}

/** `<dir>/<point>.reached` holds this process's pid. */
function reachedHere(point: string): void {
  // Written whole, then renamed: a test that sees the file reads a pid, never an empty file (which it
  // would take for pid 0, and kill its own process group).
  const reached = join(faultsDir(), `${point}.reached`);
  writeFileSync(`${reached}.${process.pid}.tmp`, String(process.pid));
  renameSync(`${reached}.${process.pid}.tmp`, reached);
}

function faultsDir(): string {
  return process.env.AGENT_SESSION_TEST_FAULTS_DIR ?? '.';
}
