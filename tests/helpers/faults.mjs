// Driving tools/store/fault-points.ts from a test: hold a child process at a named point (to run
// another one inside the window, or to kill it exactly there), or make a step fail like a full disk.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { until } from './poll.mjs';
import { cleanEnv } from './run.mjs';

/** A place for the pause files of one process, and the environment that arms its rules. */
export function faults(t, rules, extraEnv = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'agent-session-faults-'));
  // A test that failed half-way must not leave a process waiting for ever.
  t.after(() => {
    for (const rule of rules)
      if (rule.startsWith('pause:')) writeFileSync(path.join(dir, `${rule.split(':')[1]}.go`), '');
  });
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = cleanEnv({ AGENT_SESSION_TEST_FAULTS: rules.join(','), AGENT_SESSION_TEST_FAULTS_DIR: dir, ...extraEnv });
  return {
    env,
    /** Resolves once the process waits at `point`; rejects if `running` settles first or after 60 s. */
    reached(point, running) {
      const reached = () => pidAt(dir, point) !== undefined;
      return until(reached, `it reached ${point}`, { timeoutMs: 60_000, intervalMs: 10, running });
    },
    /** Sends the process waiting at `point` a signal (SIGKILL unless told). */
    kill(point, signal = 'SIGKILL') {
      const pid = pidAt(dir, point);
      // Never 0 or a negative number: process.kill would signal this test's whole process group.
      if (pid === undefined) throw new Error(`no process is waiting at ${point}`);
      process.kill(pid, signal);
    },
    /** Lets the process go on from `point`. */
    release(point) {
      writeFileSync(path.join(dir, `${point}.go`), '');
    },
  };
}

/** The pid of the process waiting at `point`, once its file holds one (undefined before). */
function pidAt(dir, point) {
  let text;
  try {
    text = readFileSync(path.join(dir, `${point}.reached`), 'utf8');
  } catch {
    return undefined;
  }
  return /^[1-9]\d*$/.test(text) && Number(text) > 1 ? Number(text) : undefined;
}
