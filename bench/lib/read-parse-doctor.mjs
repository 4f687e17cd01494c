// Floor for `doctor`: a bare Node script that reads what doctor must read of a store (argv[2]), each
// once: the store's directory, every session's state.json (parsed) and its directory's names (where an
// older layout left temp files), the children index (.index/children/<parent>/ and .index/ids/), the
// audit trail (parsed, hashes checked: lib/audit-trail.mjs) and the trash's entries. Prints the counts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readAuditTrail } from './audit-trail.mjs';

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
    // Not a session (a create in progress) or unreadable: doctor reports it; the floor skips it.
  }
}
const list = (...parts) => {
  try {
    return readdirSync(path.join(dir, ...parts));
  } catch {
    return [];
  }
};
let links = 0;
for (const parent of list('.index', 'children')) links += list('.index', 'children', parent).length;
const indexed = list('.index', 'ids').length;
const trash = list('.trash').length;
const audit = readAuditTrail(dir);
process.stdout.write(`${parsed} ${names} ${links} ${indexed} ${audit} ${trash}\n`);
