// Hook bundles only: the parts of node:fs/promises the library uses, done with synchronous calls.
// A hook touches a handful of small files; loading fs/promises and a thread-pool round trip per call
// cost more than the I/O itself. Long runs (the detached sweep) yield to the event loop every 50 ms,
// so timers (the lock refresh in tools/store/lock.ts) keep firing. The CLI and the library use the real module.
import * as fs from 'node:fs';

let lastYield = Date.now();

async function call(fn, args) {
  if (Date.now() - lastYield > 50) {
    await new Promise((resolve) => setImmediate(resolve));
    lastYield = Date.now();
  }
  return fn(...args);
}

const promised = (fn) => (...args) => call(fn, args);

export const appendFile = promised(fs.appendFileSync);
export const copyFile = promised(fs.copyFileSync);
export const lstat = promised(fs.lstatSync);
export const mkdir = promised(fs.mkdirSync);
export const readdir = promised(fs.readdirSync);
export const readFile = promised(fs.readFileSync);
export const realpath = promised(fs.realpathSync.native);
export const rename = promised(fs.renameSync);
export const rm = promised(fs.rmSync);
export const rmdir = promised(fs.rmdirSync);
export const stat = promised(fs.statSync);
export const unlink = promised(fs.unlinkSync);
export const utimes = promised(fs.utimesSync);
export const writeFile = promised(fs.writeFileSync);

/** A FileHandle with the methods the library calls on one. */
export const open = promised((file, flags, mode) => {
  const fd = fs.openSync(file, flags, mode);
  return {
    fd,
    writeFile: (data, options) => call(fs.writeFileSync, [fd, data, options]),
    sync: () => call(fs.fsyncSync, [fd]),
    close: () => call(fs.closeSync, [fd]),
  };
});
