// The library's operations in process, and one update against a bare locked atomic write.
import { mkdirSync, readFileSync } from 'node:fs';
import { mkdir, open, readFile, rename, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { interleave, round, target, timeAsync } from './lib/measure.mjs';

export const name = 'store';
export const title = 'Library operations in process';

export async function run({ dist, tmp, quick }) {
  const { Sessions } = await import(pathToFileURL(path.join(dist, 'tools', 'index.js')).href);
  const dir = path.join(tmp, 'store');
  mkdirSync(dir, { recursive: true });
  const sessions = Sessions.open({ dir, cwd: tmp, env: {} });
  const runs = quick ? 60 : 300;

  const createMs = await timeAsync(
    () => sessions.create({ agentName: 'bench', purpose: 'measure create', metadata: { n: 1 } }),
    { runs },
  );
  const { agent_id: id } = await sessions.create({ agentName: 'bench', purpose: 'measure update' });
  await sessions.update(id, { phase: 'approval' });
  const getMs = await timeAsync(() => sessions.get(id), { runs });
  const resumeMs = await timeAsync(() => sessions.shouldResume(id), { runs });

  // Both sides rewrite the same state.json, alternately.
  const file = path.join(dir, id, 'state.json');
  const lockPath = path.join(dir, '.locks', `${id}.lock`);
  const timed = async (fn) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };
  const medians = await interleave(
    {
      update: (i) => timed(() => sessions.update(id, { metadata: { step: i } })),
      bare: () => timed(() => bareLockedWrite(file, lockPath)),
    },
    { runs, warmup: 10 },
  );
  const updateMs = medians.update;
  const ratio = updateMs / medians.bare;

  const size = readFileSync(file).length;
  return {
    figures: [
      { label: 'create (median)', value: round(createMs, 3), unit: 'ms' },
      { label: 'update (median)', value: round(updateMs, 3), unit: 'ms' },
      { label: 'should-resume (median)', value: round(resumeMs, 3), unit: 'ms' },
      { label: 'get (median)', value: round(getMs, 3), unit: 'ms' },
      {
        label: `bare locked atomic write of the same ${size}-byte file (median)`,
        value: round(medians.bare, 3),
        unit: 'ms',
      },
    ],
    targets: [target('update / bare locked atomic write', ratio, 2)],
    runs,
  };
}

/**
 * The floor for one update: lock (a bare mkdir, the store's lock protocol), read, write temp, fsync, rename,
 * unlock.
 */
async function bareLockedWrite(file, lockPath) {
  await mkdir(lockPath);
  try {
    const text = await readFile(file, 'utf8');
    const temp = `${file}.${process.pid}.bare.tmp`;
    const handle = await open(temp, 'wx', 0o644);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } finally {
    await rmdir(lockPath);
  }
}
