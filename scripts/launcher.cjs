#!/usr/bin/env node
'use strict';
// An executable (dist/bin/agent-session.js, dist/hooks/<hook>.js; written by scripts/build.mjs from
// this template, which fills in NAME, BUNDLE_HASH and whether it runs a hook). It runs its bundle (bundles/NAME.cjs)
// with V8's code cache, so Node does not parse and compile the whole bundle on each run: a few
// milliseconds of every hook and command.
// The cache sits next to the bundle, named after the bundle's content (V8 itself only compares the
// source's length), the Node version and any Node flags (V8 refuses a cache made under other
// flags), stored twice over so that damaged bytes are noticed (see checkedCache). A run without a
// usable one writes it on exit: temp file, fsync, rename. A read-only
// install runs without it; AGENT_SESSION_NO_CODE_CACHE=1 turns it off. Anything wrong with reading
// or compiling falls back to a plain require: the bundle runs exactly once either way.
// A hook fails open even here: if its bundle cannot be loaded it exits 0 with no output.
const fs = require('node:fs');
const path = require('node:path');

const HOOK = HOOK_VALUE;
let bundle = path.join(__dirname, 'bundles', 'NAME.cjs');

try {
  // Node resolves links to the main script, except under --preserve-symlinks-main: then __dirname can
  // be that of a link (node_modules/.bin), and the bundle is found from the real file.
  if (!fs.existsSync(bundle)) bundle = path.join(path.dirname(fs.realpathSync(__filename)), 'bundles', 'NAME.cjs');
  run();
} catch (err) {
  if (HOOK) {
    process.exitCode = 0;
    if (process.env.AGENT_SESSION_DEBUG === '1')
      process.stderr.write(`agent-session NAME: failing open: cannot load ${bundle}: ${err && err.stack}\n`);
  } else {
    const reason = String(err && err.message).split('\n')[0];
    // Node cannot tell where it runs once its working directory is deleted: the package is fine.
    process.stderr.write(
      err && err.syscall === 'uv_cwd'
        ? `agent-session: the current directory no longer exists (${reason}); cd to one that does and run it again\n`
        : `agent-session: cannot load ${bundle} (${reason}); reinstall the package\n`,
    );
    process.exitCode = 4;
  }
}

function run() {
  const compiled = process.env.AGENT_SESSION_NO_CODE_CACHE === '1' ? undefined : compile();
  if (!compiled) {
    require(bundle);
    return;
  }
  compiled.wrapper.call(module.exports, module.exports, require, module, bundle, path.dirname(bundle));
  // A hook's cache only after a run that did its real work (the bundle marks it: markRunWorthCaching
  // in tools/claude/run/run-hook.ts), so that it holds the functions that work needs.
  if (compiled.stale) {
    process.once('exit', () => {
      if (!HOOK || globalThis[Symbol.for('agent-session.run-worth-caching')] === true)
        saveCache(compiled.script, compiled.cacheFile);
    });
  }
}

/** The bundle compiled with its cache (undefined if anything goes wrong: then it is simply required). */
function compile() {
  try {
    const vm = require('node:vm');
    const cacheFile = `${bundle}.BUNDLE_HASH.${process.version}-${process.arch}${flagsTag()}.v8cache`;
    // The build leaves out the #! line, which only the start of a script may have (blanked: the line
    // count stays the same).
    let source = fs.readFileSync(bundle, 'utf8');
    if (source.startsWith('#!')) source = source.replace(/^#!.*/, '');
    let cachedData;
    try {
      cachedData = checkedCache(fs.readFileSync(cacheFile));
    } catch {
      cachedData = undefined;
    }
    // The same wrapper Node puts around a CommonJS module.
    const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
      filename: bundle,
      cachedData,
    });
    return {
      script,
      cacheFile,
      wrapper: script.runInThisContext(),
      stale: !cachedData || script.cachedDataRejected === true,
    };
  } catch {
    return undefined;
  }
}

/**
 * The cache, if the file holds it twice over, both copies equal. V8 checks a cache's header, not its
 * bytes (release builds skip the checksum, and turning the check on costs 2 ms), and damaged bytecode
 * makes it abort the process: a hook that crashed on every run until someone deleted the file. A
 * second copy costs a read of 100 kB and a memcmp; hashing it in JS or loading zlib costs far more.
 */
function checkedCache(data) {
  const half = data.length / 2;
  if (!Number.isInteger(half) || half === 0) return undefined;
  const copy = data.subarray(0, half);
  return copy.equals(data.subarray(half)) ? copy : undefined;
}

/** Node flags change what V8 accepts: each set of flags gets its own cache. */
function flagsTag() {
  const flags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS || ''}`.trim();
  if (!flags) return '';
  let hash = 0x811c9dc5;
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01000193) >>> 0;
  return `-f${hash.toString(16)}`;
}

/** After the run, so the cache holds the functions it compiled too. Never fails the run. */
function saveCache(script, cacheFile) {
  const temp = `${cacheFile}.${process.pid}.tmp`;
  let fd;
  try {
    fd = fs.openSync(temp, 'wx');
    const cache = script.createCachedData();
    fs.writeFileSync(fd, Buffer.concat([cache, cache]));
    // Only a whole file may ever take the cache's name.
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temp, cacheFile);
  } catch {
    try {
      if (fd !== undefined) fs.closeSync(fd);
      fs.unlinkSync(temp);
    } catch {
      // Nothing was written.
    }
  }
}
