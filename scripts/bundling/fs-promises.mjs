// Hook bundles only: the parts of node:fs/promises the library uses, done with synchronous calls.
// A hook touches a handful of small files; loading fs/promises and a thread-pool round trip per call
// cost more than the I/O itself. A long run (a hook on a slow disk) yields to the event loop every
// 50 ms, so timers (the lock refresh in tools/store/lock.ts) keep firing. The CLI, the periodic sweep
// and the library use the real module.
// Named imports: a namespace import would copy every property of node:fs at start-up (esbuild's __toESM).
import {
  closeSync,
  copyFileSync,
  fsyncSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';

let lastYield = Date.now();

async function call(fn, args) {
  if (Date.now() - lastYield > 50) {
    await new Promise((resolve) => setImmediate(resolve));
    lastYield = Date.now();
  }
  return fn(...args);
}

const promised =
  (fn) =>
  (...args) =>
    call(fn, args);

export const copyFile = promised(copyFileSync);
export const lstat = promised(lstatSync);
export const lutimes = promised(lutimesSync);
export const mkdir = promised(mkdirSync);
export const readdir = promised(readdirSync);
export const readFile = promised(readFileSync);
export const realpath = promised(realpathSync.native);
export const rename = promised(renameSync);
export const rm = promised(rmSync);
export const rmdir = promised(rmdirSync);
export const stat = promised(statSync);
export const unlink = promised(unlinkSync);
export const utimes = promised(utimesSync);
export const writeFile = promised(writeFileSync);

/** A FileHandle with the methods the library calls on one. */
export const open = promised((file, flags, mode) => {
  const fd = openSync(file, flags, mode);
  return {
    fd,
    writeFile: (data, options) => call(writeFileSync, [fd, data, options]),
    sync: () => call(fsyncSync, [fd]),
    close: () => call(closeSync, [fd]),
  };
});
