// The esbuild plugins that keep modules out of the executables' start-up (scripts/bundling/plugins.mjs)
// must not change what the code they replace does.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { build } from 'esbuild';
import { lazyAssert } from '../scripts/bundling/plugins.mjs';
import { tempDir } from './helpers/run.mjs';

test("yargs's node:assert, loaded on a failing check only, fails and passes as node:assert does", async (t) => {
  // An importer where the plugin looks for yargs: node_modules/yargs/.
  const dir = path.join(tempDir(t), 'node_modules', 'yargs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'shim.mjs'),
    "import { notStrictEqual, strictEqual } from 'assert';\nexport { notStrictEqual, strictEqual };\n",
  );
  const outfile = path.join(dir, 'bundle.cjs');
  await build({
    entryPoints: [path.join(dir, 'shim.mjs')],
    outfile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    plugins: [lazyAssert],
    logLevel: 'silent',
  });
  const shim = createRequire(import.meta.url)(outfile);
  const real = await import('node:assert');
  const cases = [
    [1, 1],
    [1, 2],
    ['a', 'a'],
    [NaN, NaN],
    [0, -0],
    [{}, {}],
    [undefined, null],
  ];
  const outcome = (fn, a, b) => {
    try {
      fn(a, b, 'the message');
      return 'passed';
    } catch (err) {
      return `${err.constructor.name} ${err.code} ${err.message}`;
    }
  };
  for (const [a, b] of cases) {
    for (const name of ['strictEqual', 'notStrictEqual']) {
      assert.equal(outcome(shim[name], a, b), outcome(real[name], a, b), `${name}(${String(a)}, ${String(b)})`);
    }
  }
  assert.match(outcome(shim.strictEqual, 1, 2), /^AssertionError ERR_ASSERTION the message\n/);
});
