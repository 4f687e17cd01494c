// A node:test reporter for scripts/test.mjs: how long each test file ran, as one JSON object
// ({"tests/x.test.mjs": ms}) written when the run ends. A file's top-level tests run one after the
// other, so their durations add up to the file's time (its imports aside).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

export default async function* durations(source) {
  const byFile = {};
  for await (const event of source) {
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || event.data.nesting !== 0) continue;
    if (!event.data.file) continue;
    const file = path.relative(root, event.data.file);
    byFile[file] = Math.round((byFile[file] ?? 0) + (event.data.details?.duration_ms ?? 0));
  }
  yield `${JSON.stringify(byFile)}\n`;
}
