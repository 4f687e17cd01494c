// Runs every tests/**/*.test.mjs with node:test (Node 20's --test does not expand globs).
// --fast leaves out tests/e2e/, the scenarios that run the real Claude Code CLI.
// Other arguments filter by substring of the path: node scripts/test.mjs cli hooks
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const fast = args.includes('--fast');
const filters = args.filter((a) => a !== '--fast');
const realClient = path.join('tests', 'e2e') + path.sep;
const files = readdirSync(path.join(root, 'tests'), { recursive: true })
  .filter((f) => f.endsWith('.test.mjs'))
  .map((f) => path.join('tests', f))
  .filter((f) => !fast || !f.startsWith(realClient))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
// Most files spend much of their time waiting (for a lock to go stale, a child to reach a point, the
// disk), so twice as many files as cores run at once.
const concurrency = 2 * availableParallelism();
const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...files], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(result.status ?? 1);
