// The least `export --all --dir <store> -o <out-file>` can do on disk, with plain node:fs and node:crypto:
// - list the store, read each session's state.json once (parse it, write it as one line of the bundle);
// - read the audit trail (audit.<n>.jsonl … audit.1.jsonl, audit.jsonl: the entries of the exported
//   sessions are in the rotated files too), check each line's hash (a tampered line would make the
//   bundle fail its import), and copy the entries naming an exported session;
// - stream the lines into a temp file beside <out-file> in 1 MiB writes, hashing them (sha256);
// - fsync the temp file, rename it over <out-file>, fsync its directory.
// Usage: node bench/floors/export.mjs <store> <out-file>
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';

const [store, out] = process.argv.slice(2);
const target = path.resolve(out);
const temp = `${target}.${process.pid}.1.floor.tmp`;
const fd = openSync(temp, 'wx', 0o644);
const hash = createHash('sha256');
let pending = [];
let size = 0;
const flush = () => {
  const data = Buffer.from(pending.join(''), 'utf8');
  for (let off = 0; off < data.length;) off += writeSync(fd, data, off);
  pending = [];
  size = 0;
};
const line = (text) => {
  const l = `${text}\n`;
  hash.update(l, 'utf8');
  pending.push(l);
  size += l.length;
  if (size >= 1 << 20) flush();
};
const ids = readdirSync(store, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
  .map((e) => e.name)
  .sort();
line(
  JSON.stringify({
    format: 'agent-session-bundle',
    format_version: 2,
    exported_at: new Date().toISOString(),
    sessions: ids.length,
  }),
);
const parents = new Map();
for (const id of ids) {
  const record = JSON.parse(readFileSync(path.join(store, id, 'state.json'), 'utf8'));
  parents.set(record.agent_id, record.parent_session_id);
  line(`{"session":${JSON.stringify(record)}}`);
}
let audit = 0;
const rotated = readdirSync(store)
  .map((name) => /^audit\.(\d+)\.jsonl$/.exec(name))
  .filter(Boolean)
  .sort((a, b) => Number(b[1]) - Number(a[1]))
  .map((m) => m[0]);
for (const name of [...rotated, 'audit.jsonl']) {
  const auditFile = path.join(store, name);
  if (!existsSync(auditFile)) continue;
  for (const text of readFileSync(auditFile, 'utf8').split('\n')) {
    if (text === '') continue;
    const entry = JSON.parse(text);
    // The hash covers the line without its `,"hash":"<64 hex digits>"` tail (75 characters).
    if (
      createHash('sha256')
        .update(`${text.slice(0, text.length - 75)}}`)
        .digest('hex') !== entry.hash
    )
      continue;
    if (!entry.ids.some((id) => parents.has(id))) continue;
    audit++;
    line(`{"audit":${JSON.stringify(entry)}}`);
  }
}
const roots = [...parents].filter(([, p]) => p === null || !parents.has(p)).map(([id]) => id);
line(JSON.stringify({ roots, session_count: parents.size, audit_count: audit }));
pending.push(`${JSON.stringify({ checksum: `sha256:${hash.digest('hex')}` })}\n`);
flush();
fsyncSync(fd);
closeSync(fd);
renameSync(temp, target);
const dir = openSync(path.dirname(target), 'r');
fsyncSync(dir);
closeSync(dir);
