// A child process that works on the store through the built library, for concurrency and crash tests.
// Usage: node store-worker.mjs <dist> <store> <mode> <id> [count] [tag]
//   count-up: `count` updates, each adding metadata key `<tag>-<n>` and one error; prints "acked <n>"
//   counter:  updates forever, each raising metadata.counter by one together with one error
//   create:   one create of <id>; prints "created" or the error code
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, dir, mode, id, count = '25', tag = String(process.pid)] = process.argv.slice(2);
const { Sessions } = await import(pathToFileURL(path.join(dist, 'tools', 'index.js')).href);
const sessions = Sessions.open({ dir, env: {}, settings: { lockTimeoutMs: 30_000 } });

if (mode === 'count-up') {
  for (let n = 0; n < Number(count); n++) {
    await sessions.update(id, { metadata: { [`${tag}-${n}`]: n }, error: `${tag} error ${n}` });
    process.stdout.write(`acked ${n}\n`);
  }
} else if (mode === 'counter') {
  for (;;) {
    let next = 0;
    await sessions.store.update(id, (record) => {
      next = (record.metadata.counter ?? 0) + 1;
      return { ...record, metadata: { ...record.metadata, counter: next }, error_count: record.error_count + 1 };
    });
    process.stdout.write(`acked ${next}\n`);
  }
} else if (mode === 'create') {
  try {
    await sessions.create({ agentName: 'racer', id, metadata: { by: tag } });
    process.stdout.write('created\n');
  } catch (err) {
    process.stdout.write(`${err.code}\n`);
  }
}
