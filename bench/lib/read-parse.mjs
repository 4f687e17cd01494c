// Baseline for list and cleanup: a bare Node script that only reads and parses every session's
// state.json in the store (argv[2]) and prints how many it parsed.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
let parsed = 0;
for (const entry of readdirSync(dir, { withFileTypes: true })) {
  if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
  try {
    JSON.parse(readFileSync(path.join(dir, entry.name, 'state.json'), 'utf8'));
    parsed++;
  } catch {
    // Not a session (a create in progress) or unreadable: skipped, as the store's scan does.
  }
}
process.stdout.write(`${parsed}\n`);
