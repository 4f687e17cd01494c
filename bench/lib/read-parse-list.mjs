// A second, informative baseline for cleanup: what bare Node needs to read and parse every record AND
// list every session directory (what cleanup did to find stray temp files, before they moved to .tmp/).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
let parsed = 0;
let names = 0;
for (const entry of readdirSync(dir, { withFileTypes: true })) {
  if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
  try {
    names += readdirSync(path.join(dir, entry.name)).length;
    JSON.parse(readFileSync(path.join(dir, entry.name, 'state.json'), 'utf8'));
    parsed++;
  } catch {
    // Not a session (a create in progress) or unreadable: skipped, as the store's scan does.
  }
}
process.stdout.write(`${parsed} ${names}\n`);
