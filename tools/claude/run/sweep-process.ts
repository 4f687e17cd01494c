import { statSync } from 'node:fs';

/**
 * Starts the periodic sweep (its own bundle) as a detached child nobody waits for: it scans the
 * store, so it must not delay Claude Code. False when the bundle is missing.
 */
export async function startDetachedSweep(bundle: string): Promise<boolean> {
  if (!isFile(bundle)) return false;
  // Loaded only here: child_process costs a hook start-up otherwise.
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [bundle], {
    detached: true,
    stdio: 'ignore',
    env: process.env,
    cwd: process.cwd(),
  });
  child.on('error', () => undefined);
  child.unref();
  return true;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
