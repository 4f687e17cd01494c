// Waiting for what another process does, without guessing how long it takes: a condition polled at a
// short interval, bounded so that a process that never gets there fails the test instead of stalling it.
import { setTimeout as delay } from 'node:timers/promises';

/**
 * Resolves the first truthy value of `condition()` (which may be async), checked every `intervalMs`.
 * Throws after `timeoutMs`, naming `what`; with `running` (a child's promise), as soon as it settles first.
 */
export async function until(condition, what, { timeoutMs = 10_000, intervalMs = 20, running } = {}) {
  let settled = false;
  running?.then(
    () => (settled = true),
    () => (settled = true),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (settled) throw new Error(`the process ended before ${what}: ${JSON.stringify(await running)}`);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(intervalMs);
  }
}
