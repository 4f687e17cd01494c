// STYLE.md rules that a reader of the sources can check: one module owns the disk, the library
// never prints or exits, and the hooks never load the CLI's dependencies.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DIST, ROOT } from './helpers/run.mjs';

const DISK_MODULES = /^(node:)?fs(\/promises)?$|^fs-extra$|^proper-lockfile$/;

function sources(dir) {
  return readdirSync(path.join(ROOT, dir), { recursive: true })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));
}

function imports(file) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)[^;]*?from\s+'([^']+)'/g),
    ...text.matchAll(/import\('([^']+)'\)/g),
  ].map((m) => m[1]);
}

test('only tools/store/ imports the file system or the lock library', () => {
  const offenders = [...sources('tools'), ...sources('hooks')]
    .filter((file) => !file.startsWith(`tools${path.sep}store${path.sep}`))
    .flatMap((file) =>
      imports(file)
        .filter((m) => DISK_MODULES.test(m))
        .map((m) => `${file} imports ${m}`),
    );
  assert.deepEqual(offenders, []);
});

test('the library never prints or exits: only the executables do', () => {
  const executables = new Set([path.join('tools', 'cli', 'main.ts'), ...sources('hooks')]);
  const offenders = sources('tools')
    .filter((file) => !executables.has(file))
    .filter((file) =>
      /\bprocess\.exit\(|\bconsole\.(log|error|warn)\(|\bprocess\.(stdout|stderr)\.write\(/.test(
        readFileSync(path.join(ROOT, file), 'utf8'),
      ),
    );
  assert.deepEqual(offenders, []);
});

test('yargs is loaded by the CLI only, never by a hook bundle', () => {
  const outside = sources('tools')
    .filter((file) => !file.startsWith(`tools${path.sep}cli${path.sep}`))
    .filter((file) => imports(file).some((m) => m === 'yargs' || m.startsWith('yargs/')));
  assert.deepEqual(outside, []);
  const bundles = readdirSync(path.join(DIST, 'hooks', 'bundles')).filter((f) => f.endsWith('.cjs'));
  assert.ok(bundles.length >= 2, `expected the two hook bundles in ${DIST}/hooks/bundles, found ${bundles}`);
  for (const bundle of bundles) {
    const text = readFileSync(path.join(DIST, 'hooks', 'bundles', bundle), 'utf8');
    assert.doesNotMatch(text, /node_modules\/yargs\//, `${bundle} bundles yargs`);
    assert.doesNotMatch(text, /node_modules\/date-fns\/index/, `${bundle} bundles the date-fns barrel`);
    // The launcher runs a bundle as a script (for V8's code cache), where import() has no loader.
    assert.doesNotMatch(text, /\bimport\(/, `${bundle} calls import()`);
  }
});

test('the hook bundles leave the cleanup machinery to the sweep bundle', () => {
  const bundle = (name) => readFileSync(path.join(DIST, 'hooks', 'bundles', name), 'utf8');
  // esbuild marks each bundled module with a "// <path>" comment.
  for (const name of ['pre_delegate.cjs', 'subagent_stop.cjs']) {
    for (const module of [
      'tools/trees/cleanup.ts',
      'tools/store/trash.ts',
      'tools/trees/remove-subtree.ts',
      'tools/git/work.ts',
    ]) {
      assert.doesNotMatch(
        bundle(name),
        new RegExp(`^// ${module.replaceAll('.', '\\.')}$`, 'm'),
        `${name} bundles ${module}`,
      );
    }
  }
  assert.match(bundle('sweep.cjs'), /^\/\/ tools\/trees\/cleanup\.ts$/m, 'the sweep bundle carries the cleanup');
});

test('every executable bundle is pure ASCII', () => {
  const bundles = ['hooks', 'bin'].flatMap((dir) =>
    readdirSync(path.join(DIST, dir, 'bundles'))
      .filter((f) => f.endsWith('.cjs'))
      .map((f) => path.join(DIST, dir, 'bundles', f)),
  );
  assert.ok(bundles.length >= 4, `expected the CLI, hook and sweep bundles, found ${bundles}`);
  // The sources have → and … in comments; one such character makes V8 keep the whole bundle as UTF-16.
  assert.ok(
    sources('tools').some((file) => /[^\x00-\x7f]/.test(readFileSync(path.join(ROOT, file), 'utf8'))),
    'no source has a non-ASCII character: this test proves nothing',
  );
  for (const bundle of bundles) {
    const text = readFileSync(bundle, 'utf8');
    const at = text.search(/[^\x00-\x7f]/);
    assert.equal(
      at,
      -1,
      `${path.basename(bundle)} has a non-ASCII character: ${JSON.stringify(text.slice(at - 40, at + 10))}`,
    );
  }
});
