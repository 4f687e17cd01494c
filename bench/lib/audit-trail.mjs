// Reads a store's audit trail with plain node:fs and node:crypto, for the floors of `audit` and `doctor`:
// every audit file, oldest first (audit.<n>.jsonl … audit.1.jsonl, audit.jsonl), each line parsed and its
// hash checked as the store's reader does.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The number of entries read. */
export function readAuditTrail(dir) {
  const rotated = readdirSync(dir)
    .map((name) => /^audit\.(\d+)\.jsonl$/.exec(name))
    .filter(Boolean)
    .sort((a, b) => Number(b[1]) - Number(a[1]))
    .map((m) => m[0]);
  let entries = 0;
  for (const name of [...rotated, 'audit.jsonl']) {
    let text;
    try {
      text = readFileSync(path.join(dir, name), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const entry = JSON.parse(line);
      // The hash covers the line without its `,"hash":"<64 hex digits>"` tail (75 characters).
      const body = `${line.slice(0, line.length - 75)}}`;
      if (createHash('sha256').update(body).digest('hex') !== entry.hash) throw new Error(`bad hash in ${name}`);
      entries++;
    }
  }
  return entries;
}
