#!/usr/bin/env node
'use strict';
// An executable (dist/bin/agent-session.js, dist/hooks/<hook>.js; written by scripts/build.mjs from
// this template). It runs its bundle (bundles/NAME.cjs) with V8's code cache, so Node does not parse
// and compile the whole bundle on each run: a few milliseconds of every hook and command.
// The cache sits next to the bundle, one file per Node version; a run without a usable one (the
// first, or after a Node upgrade: V8 refuses a cache from another version) writes it on exit, via a
// temp file and a rename. A read-only install runs without it. Anything wrong with reading or
// compiling falls back to a plain require: the bundle runs exactly once either way.
const fs = require('node:fs');
const path = require('node:path');

const bundle = path.join(__dirname, 'bundles', 'NAME.cjs');
const cacheFile = `${bundle}.${process.version}-${process.arch}.v8cache`;

let compiled;
try {
  compiled = compile();
} catch {
  compiled = undefined;
}
if (compiled) {
  compiled.wrapper.call(module.exports, module.exports, require, module, bundle, path.dirname(bundle));
  if (compiled.stale) process.once('exit', () => saveCache(compiled.script));
} else {
  require(bundle);
}

function compile() {
  const vm = require('node:vm');
  // Without its #! line, which only the start of a script may have (the line count stays the same).
  const source = fs.readFileSync(bundle, 'utf8').replace(/^#!.*/, '');
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // The same wrapper Node puts around a CommonJS module.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: bundle, cachedData });
  return { script, wrapper: script.runInThisContext(), stale: !cachedData || script.cachedDataRejected === true };
}

/** After the run, so the cache holds the functions it compiled too. Never fails the hook. */
function saveCache(script) {
  const temp = `${cacheFile}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, script.createCachedData(), { flag: 'wx' });
    fs.renameSync(temp, cacheFile);
  } catch {
    try {
      fs.unlinkSync(temp);
    } catch {
      // Nothing was written.
    }
  }
}
