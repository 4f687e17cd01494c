// The ways a user has the package, each made from the build under test (DIST): as a dependency of a
// project (a copy in <project>/node_modules/agent-session/, as npm lays it out), as a global install
// (an `agent-session` link to the build's bin in a directory on PATH), or only as files somewhere.
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CLI, DIST, ROOT, tempDir } from './run.mjs';

/** The package's bins (package.json "bin"), the CLI first. */
const BINS = {
  'agent-session': 'dist/bin/agent-session.js',
  'agent-session-pre-delegate': 'dist/hooks/pre_delegate.js',
  'agent-session-subagent-stop': 'dist/hooks/subagent_stop.js',
};
const PACKAGE_JSON = JSON.stringify({ name: 'agent-session', version: '0.0.0-test', type: 'module' });

/** A project with `.claude/` and a package.json (HOME is the temp dir around it). */
export function bareProject(t, name = 'proj') {
  const home = tempDir(t, 'agent-session-install-');
  const dir = path.join(home, name);
  mkdirSync(path.join(dir, '.claude'), { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'proj', private: true }) + '\n');
  return { home, dir, store: path.join(dir, '.claude', 'session') };
}

/**
 * A project that has the package as a dependency: the build copied to node_modules/agent-session/,
 * its bins linked in node_modules/.bin/ as npm does, its dependencies linked from this checkout.
 */
export function dependencyProject(t) {
  const proj = bareProject(t);
  const modules = path.join(proj.dir, 'node_modules');
  const pkg = path.join(modules, 'agent-session');
  cpSync(DIST, path.join(pkg, 'dist'), { recursive: true });
  writeFileSync(path.join(pkg, 'package.json'), PACKAGE_JSON + '\n');
  for (const dep of ['date-fns', 'yargs']) symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(modules, dep));
  mkdirSync(path.join(modules, '.bin'));
  for (const [name, file] of Object.entries(BINS))
    symlinkSync(path.join('..', 'agent-session', file), path.join(modules, '.bin', name));
  return { ...proj, dist: path.join(pkg, 'dist') };
}

/** A directory to put first on PATH, holding links to the build's bins, as `npm install -g` makes them. */
export function globalBin(t) {
  const dir = tempDir(t, 'agent-session-bin-');
  symlinkSync(CLI, path.join(dir, 'agent-session'));
  for (const [name, file] of Object.entries(BINS).slice(1))
    symlinkSync(path.join(DIST, file.replace(/^dist\//, '')), path.join(dir, name));
  return dir;
}

/** A copy of the build at a path the shell needs quoted (a space and a quote in it). */
export function copiedDist(t) {
  const dist = path.join(tempDir(t, 'agent-session-copy-'), "it's here", 'dist');
  cpSync(DIST, dist, { recursive: true });
  return dist;
}

/** PATH with `first` in front and no directory that has an `agent-session` other than the one given. */
export function pathWith(...first) {
  return [...first, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter);
}
