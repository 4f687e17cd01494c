// The least `import <bundle-file> --dir <store>` (an empty store) can do on disk with import's design,
// with plain node:fs and node:crypto:
// - a staging directory <store>/.importing/<op>/ with a manifest (temp, fsync, rename; rewritten
//   with the ids, then as committing and as done);
// - the bundle read in 1 MiB chunks, each line hashed (sha256) and parsed; the checksum checked at the end;
// - per batch of 256 sessions: mkdir <op>/sessions/<id>, write its state.json, then fsync the files
//   (4 at a time, as Node's thread pool does) and then their directories and the sessions directory;
// - the children index markers (.index/children/<parent>/<id>, .index/ids/<id>: empty files);
// - one lock directory per session (.locks/<id>.lock), each session renamed into place, the store
//   directory fsynced, the locks removed;
// - one audit line appended, the staging directory removed.
// Usage: node bench/floors/import.mjs <bundle-file> <store>
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const [bundle, store] = process.argv.slice(2);
const op = `floor-${process.pid}`;
const opDir = path.join(store, '.importing', op);
const sessionsDir = path.join(opDir, 'sessions');
fs.mkdirSync(sessionsDir, { recursive: true });
const manifest = { op, ids: [], replaced: [], status: 'staged', pid: process.pid };
const writeManifest = () => {
  const temp = path.join(opDir, `manifest.json.${process.pid}.tmp`);
  const fd = fs.openSync(temp, 'w');
  fs.writeSync(fd, `${JSON.stringify(manifest, null, 2)}\n`);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(temp, path.join(opDir, 'manifest.json'));
};
writeManifest();
const syncAll = async (fds) => {
  let next = 0;
  const worker = async () => {
    while (next < fds.length) {
      const fd = fds[next++];
      await new Promise((resolve, reject) => fs.fsync(fd, (err) => (err ? reject(err) : resolve())));
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
};
const staged = [];
let batch = [];
const flush = async () => {
  const fds = [];
  for (const { id, text } of batch) {
    const dir = path.join(sessionsDir, id);
    fs.mkdirSync(dir);
    const fd = fs.openSync(path.join(dir, 'state.json'), 'wx', 0o644);
    fs.writeSync(fd, text);
    fds.push(fd);
  }
  await syncAll(fds);
  for (const fd of fds) fs.closeSync(fd);
  const dirs = [...batch.map(({ id }) => fs.openSync(path.join(sessionsDir, id), 'r')), fs.openSync(sessionsDir, 'r')];
  await syncAll(dirs);
  for (const fd of dirs) fs.closeSync(fd);
  batch = [];
};
const hash = createHash('sha256');
let checksum;
const fd = fs.openSync(bundle, 'r');
const chunk = Buffer.allocUnsafe(1 << 20);
let rest = Buffer.alloc(0);
const onLine = async (bytes) => {
  const text = bytes.toString('utf8');
  if (text.startsWith('{"checksum":')) return void (checksum = JSON.parse(text).checksum);
  hash.update(bytes).update('\n');
  const value = JSON.parse(text);
  if (!value.session) return;
  staged.push({ id: value.session.agent_id, parent: value.session.parent_session_id });
  batch.push({ id: value.session.agent_id, text: `${JSON.stringify(value.session, null, 2)}\n` });
  if (batch.length >= 256) await flush();
};
for (;;) {
  const n = fs.readSync(fd, chunk, 0, chunk.length, null);
  if (n === 0) break;
  const data = rest.length > 0 ? Buffer.concat([rest, chunk.subarray(0, n)]) : chunk.subarray(0, n);
  let start = 0;
  for (let end = data.indexOf(10); end !== -1; end = data.indexOf(10, start)) {
    await onLine(data.subarray(start, end));
    start = end + 1;
  }
  rest = Buffer.from(data.subarray(start));
}
fs.closeSync(fd);
await flush();
if (checksum !== `sha256:${hash.digest('hex')}`) throw new Error('checksum mismatch');
manifest.ids = staged.map((s) => s.id);
writeManifest();
const children = path.join(store, '.index', 'children');
const idsDir = path.join(store, '.index', 'ids');
fs.mkdirSync(children, { recursive: true });
fs.mkdirSync(idsDir, { recursive: true });
const made = new Set();
for (const { id, parent } of staged) {
  if (parent !== null) {
    if (!made.has(parent)) fs.mkdirSync(path.join(children, parent), { recursive: true });
    made.add(parent);
    fs.writeFileSync(path.join(children, parent, id), '');
  }
  fs.writeFileSync(path.join(idsDir, id), '');
}
const locks = path.join(store, '.locks');
fs.mkdirSync(locks, { recursive: true });
for (const { id } of staged) fs.mkdirSync(path.join(locks, `${id}.lock`));
manifest.status = 'committing';
writeManifest();
for (const { id } of staged) fs.renameSync(path.join(sessionsDir, id), path.join(store, id));
const storeFd = fs.openSync(store, 'r');
fs.fsyncSync(storeFd);
fs.closeSync(storeFd);
manifest.status = 'done';
writeManifest();
fs.appendFileSync(path.join(store, 'audit.jsonl'), `${JSON.stringify({ action: 'import', ids: manifest.ids })}\n`);
for (const { id } of staged) fs.rmdirSync(path.join(locks, `${id}.lock`));
fs.rmSync(opDir, { recursive: true, force: true });
