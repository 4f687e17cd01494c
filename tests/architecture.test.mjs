// Rules of the code's layout that a reader of the sources can check (ARCHITECTURE.md): the layers,
// each kind of file has one owning module, no import cycles, the library never prints or exits, and
// the hooks never load the CLI's dependencies.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DIST, ROOT } from './helpers/run.mjs';

const DISK_MODULES = /^(node:)?fs(\/promises)?$|^fs-extra$|^proper-lockfile$/;

function sources(dir) {
  return readdirSync(path.join(ROOT, dir), { recursive: true })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));
}

/** Every module specifier of a file: imports and re-exports (types too), side-effect imports, import(). */
function imports(file) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]);
}

/** The files of tools/ and hooks/, each with the files its relative specifiers resolve to. */
function importGraph() {
  const files = [...sources('tools'), ...sources('hooks')];
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const targets = imports(file)
      .filter((m) => m.startsWith('.'))
      .map((m) => path.join(path.dirname(file), m.replace(/\.js$/, '.ts')));
    for (const target of targets) assert.ok(known.has(target), `${file} imports ${target}, which is not a source file`);
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** One cycle per back edge of a depth-first walk, each as "a → b → a"; none when the graph is acyclic. */
function findCycles(graph) {
  const state = new Map();
  const stack = [];
  const cycles = [];
  const visit = (file) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file)) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

/**
 * Who may touch the disk: each kind of file has one owning module, and only the modules listed here
 * import the file system or the lock library. A module that needs a file of a listed kind calls its
 * owner; a new kind of file gets a new line here.
 */
const DISK_OWNERS = {
  'tools/store/store.ts': ['session records (<store>/<id>/state.json) and their write temps in <store>/.tmp/'],
  'tools/store/lock.ts': ['lock directories (<store>/.locks/<name>.lock, <lock>.takeover)'],
  'tools/store/children-index.ts': ['the children index (<store>/.index/)'],
  'tools/store/claude-index.ts': [
    'the conversation indexes (<store>/.claude-code/<claude session id>.json)',
    'the agent files (<store>/.claude-code/agents/<agent id>)',
  ],
  'tools/store/sweep-stamp.ts': ["the periodic sweep's stamp and report (<store>/.claude-code/last-sweep[.json])"],
  'tools/store/trash.ts': ['the trash (<store>/.trash/) and what is being destroyed (<store>/.removing/)'],
  'tools/store/import-stage.ts': ['import staging (<store>/.importing/) and its backups (<store>/.backups/)'],
  'tools/store/strays.ts': [
    'strays found for removal (old temps, stale locks)',
    'the quarantine (<store>/.quarantine/)',
  ],
  'tools/store/audit-log.ts': ['the audit trail (<store>/audit.jsonl and its rotations)'],
  'tools/store/audit-tail.ts': ['the audit trail read as it grows (audit --follow)'],
  'tools/store/hook-log.ts': ['the hook log (<store>/.hooks.log, .hooks.log.1)'],
  'tools/store/store-root.ts': ["the store's own ignore file (<store>/.gitignore)"],
  'tools/store/hook-runs.ts': ['the last hook run per event (<store>/.hooks/last-<event>.json)'],
  'tools/status/claude-files.ts': [
    "Claude Code's plugin records (~/.claude/plugins/installed_plugins.json), read only",
    "an installed plugin's hooks/hooks.json, read only",
    'the scripts registered hook commands name, only checked to exist',
  ],
  'tools/store/project.ts': ['the project and store directories', 'the config file (.claude/agent-session.json)'],
  'tools/store/atomic.ts': ['atomic replacement of any owned file (unique temp, fsync, rename)'],
  'tools/store/regular-file.ts': ['opening owned files and areas (regular files and directories, never a link)'],
  'tools/store/fault-points.ts': ["the race and crash tests' fault-point files (AGENT_SESSION_TEST_FAULTS_DIR)"],
  'tools/install/settings-file.ts': [
    "Claude Code's settings files (.claude/settings.json, settings.local.json, ~/.claude/settings.json)",
    'their backups (.claude/.agent-session-backups/)',
  ],
  'tools/install/replace-file.ts': ['in-place edits of a file the user owns (settings), with a backup'],
  'tools/claude/transcript.ts': ["Claude Code's transcripts (read only)"],
  'tools/store/transcript-cache.ts': ["stats' token cache (<store>/.cache/transcripts.json)"],
  'tools/stats/transcript-usage.ts': ["the agents' transcripts read for their tokens, from where the cache stopped"],
  'tools/stdio.ts': ["an executable's stdin, stdout and stderr (fd 0, 1 and 2)"],
  'tools/install/hook-files.ts': ['the built hooks, found for install (dist/hooks/<name>.js)'],
  'tools/install/git-exclude.ts': ["the clone's .git/info/exclude (only the lines install writes)"],
  'tools/claude/own-cli.ts': ["the package's own CLI and the agent-session on PATH, found for the footer"],
  'tools/transfer/bundle-file.ts': ['export bundles (files the user names) and their temps'],
  'tools/claude/run/sweep-process.ts': [
    'the sweep bundle it starts (dist/hooks/bundles/sweep.cjs), only checked to exist',
  ],
  'tools/dashboard/page-file.ts': ["the dashboard's page (dist/dashboard/page.html), read only"],
};

test('each kind of file has one owning module: only the owners import the file system or the lock library', () => {
  const owners = new Map(Object.entries(DISK_OWNERS).map(([file, kinds]) => [path.join(...file.split('/')), kinds]));
  const touching = [...sources('tools'), ...sources('hooks')].filter((file) =>
    imports(file).some((m) => DISK_MODULES.test(m)),
  );
  assert.deepEqual(
    touching.filter((file) => !owners.has(file)).map((file) => `${file} touches the disk but owns no kind of file`),
    [],
  );
  // The list stays true: every owner exists and does touch the disk.
  assert.deepEqual(
    [...owners.keys()]
      .filter((file) => !touching.includes(file))
      .map((file) => `${file} is listed but touches no file`),
    [],
  );
  const kinds = Object.values(DISK_OWNERS).flat();
  assert.deepEqual(
    kinds.filter((kind, i) => kinds.indexOf(kind) !== i),
    [],
    'a kind of file with two owners',
  );
});

/** The modules of the bottom layer, `tools/<name>.ts`. */
const VALUES = [
  'errors',
  'ids',
  'random',
  'time',
  'json',
  'merge-patch',
  'phases',
  'record',
  'config',
  'safe-points',
  'suggest',
  'builtin',
  'stdio',
  'options',
];

/** The layers of ARCHITECTURE.md, bottom first: a module imports from its own layer or those below. */
const LAYERS = [
  ['values', new RegExp(`^tools/(${VALUES.join('|')})\\.ts$`)],
  ['rules and store', /^tools\/(policy|store)\//],
  ['context', /^tools\/session-context\.ts$/],
  ['operations', /^tools\/(trees|transfer|audit|doctor|git|stats)\//],
  ['sessions', /^tools\/sessions\.ts$/],
  ['integrations', /^tools\/(claude|install|status|statusline)\//],
  ['entry points', /^(hooks\/|tools\/(cli|mcp|watch|dashboard)\/|tools\/(index|walkthrough)\.ts$)/],
];

function layerOf(file) {
  const posix = file.split(path.sep).join('/');
  const at = LAYERS.findIndex(([, pattern]) => pattern.test(posix));
  assert.notEqual(at, -1, `${posix} is in no layer of ARCHITECTURE.md`);
  return at;
}

test('every module imports only from its own layer or the layers below it', () => {
  const upward = [...importGraph()].flatMap(([file, targets]) =>
    targets
      .filter((target) => layerOf(target) > layerOf(file))
      .map((target) => `${file} (${LAYERS[layerOf(file)][0]}) imports ${target} (${LAYERS[layerOf(target)][0]})`),
  );
  assert.deepEqual(upward, []);
});

test('tools/ and hooks/ import each other without cycles', () => {
  const graph = importGraph();
  assert.ok([...graph.values()].flat().length > 100, 'the import graph has too few edges: the parser is broken');
  assert.deepEqual(
    findCycles(graph).map((cycle) => cycle.replaceAll(path.sep, '/')),
    [],
  );
});

test('the modules under Sessions take its context and never import it', () => {
  const graph = importGraph();
  const below = ['store', 'policy', 'trees', 'audit', 'doctor', 'transfer', 'stats'].map(
    (dir) => `tools${path.sep}${dir}${path.sep}`,
  );
  const offenders = [...graph]
    .filter(([file]) => below.some((dir) => file.startsWith(dir)))
    .filter(([, targets]) => targets.includes(path.join('tools', 'sessions.ts')))
    .map(([file]) => file);
  assert.deepEqual(offenders, []);
});

test('the library never prints or exits: only the executables do', () => {
  const executables = new Set([
    path.join('tools', 'cli', 'main.ts'),
    // The sweep bundle's entry (started by subagent_stop, or `--sweep`).
    path.join('tools', 'claude', 'run', 'sweep-main.ts'),
    // The executables' stdout and stderr (their owner in DISK_OWNERS), for the CLI and the hooks.
    path.join('tools', 'stdio.ts'),
    // The MCP server's bundle entry (its stdout is the protocol's, written by the SDK's transport).
    path.join('tools', 'mcp', 'serve.ts'),
    ...sources('hooks'),
  ]);
  const printsOrExits =
    /\bprocess\.(exit\(|exitCode\b|std(out|err)\.(?!columns\b))|\bconsole\.(log|error|warn)\(|\bwriteSync\([12],/;
  const offenders = sources('tools')
    .filter((file) => !executables.has(file))
    .filter((file) => printsOrExits.test(readFileSync(path.join(ROOT, file), 'utf8')));
  assert.deepEqual(offenders, []);
});

test('yargs is loaded by the CLI only, never by a hook bundle', () => {
  const outside = sources('tools')
    .filter((file) => !file.startsWith(`tools${path.sep}cli${path.sep}`))
    .filter((file) => imports(file).some((m) => m === 'yargs' || m.startsWith('yargs/')));
  assert.deepEqual(outside, []);
  const bundles = readdirSync(path.join(DIST, 'hooks', 'bundles')).filter((f) => f.endsWith('.cjs'));
  assert.ok(bundles.length >= 2, `expected the two hook bundles in ${DIST}/hooks/bundles, found ${bundles}`);
  for (const bundle of bundles) {
    const text = readFileSync(path.join(DIST, 'hooks', 'bundles', bundle), 'utf8');
    assert.doesNotMatch(text, /node_modules\/yargs\//, `${bundle} bundles yargs`);
    assert.doesNotMatch(text, /node_modules\/date-fns\/index/, `${bundle} bundles the date-fns barrel`);
    // The launcher runs a bundle as a script (for V8's code cache), where import() has no loader.
    assert.doesNotMatch(text, /\bimport\(/, `${bundle} calls import()`);
  }
});

test('the hook bundles leave the cleanup machinery to the sweep bundle', () => {
  const bundle = (name) => readFileSync(path.join(DIST, 'hooks', 'bundles', name), 'utf8');
  // esbuild marks each bundled module with a "// <path>" comment.
  for (const name of ['pre_delegate.cjs', 'subagent_stop.cjs']) {
    for (const module of [
      'tools/trees/cleanup.ts',
      'tools/store/trash.ts',
      'tools/trees/remove-subtree.ts',
      'tools/git/work-tree.ts',
    ]) {
      assert.doesNotMatch(
        bundle(name),
        new RegExp(`^// ${module.replaceAll('.', '\\.')}$`, 'm'),
        `${name} bundles ${module}`,
      );
    }
  }
  assert.match(bundle('sweep.cjs'), /^\/\/ tools\/trees\/cleanup\.ts$/m, 'the sweep bundle carries the cleanup');
});

test('every executable bundle is pure ASCII', () => {
  const bundles = ['hooks', 'bin'].flatMap((dir) =>
    readdirSync(path.join(DIST, dir, 'bundles'))
      .filter((f) => f.endsWith('.cjs'))
      .map((f) => path.join(DIST, dir, 'bundles', f)),
  );
  assert.ok(bundles.length >= 4, `expected the CLI, hook and sweep bundles, found ${bundles}`);
  // The sources have → and … in comments; one such character makes V8 keep the whole bundle as UTF-16.
  assert.ok(
    sources('tools').some((file) => /[^\x00-\x7f]/.test(readFileSync(path.join(ROOT, file), 'utf8'))),
    'no source has a non-ASCII character: this test proves nothing',
  );
  for (const bundle of bundles) {
    const text = readFileSync(bundle, 'utf8');
    const at = text.search(/[^\x00-\x7f]/);
    assert.equal(
      at,
      -1,
      `${path.basename(bundle)} has a non-ASCII character: ${JSON.stringify(text.slice(at - 40, at + 10))}`,
    );
  }
});

test('no source line is over 120 characters (prettier leaves long strings and comments as they are)', () => {
  const code = /\.(ts|mjs|cjs|js)$/;
  const files = ['tools', 'hooks', 'scripts', 'bench', 'tests'].flatMap((dir) =>
    readdirSync(path.join(ROOT, dir), { recursive: true })
      .filter((f) => code.test(f) && !f.startsWith(`fixtures${path.sep}`))
      .map((f) => path.join(dir, f)),
  );
  assert.ok(files.length > 150, `found only ${files.length} source files: the walk is broken`);
  const long = files.flatMap((file) =>
    readFileSync(path.join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((line, i) => (line.length > 120 ? [`${file}:${i + 1} has ${line.length} characters`] : [])),
  );
  assert.deepEqual(long, []);
});

test('no two modules of tools/ and hooks/ share a file name', () => {
  const byName = new Map();
  for (const file of [...sources('tools'), ...sources('hooks')]) {
    const name = path.basename(file);
    byName.set(name, [...(byName.get(name) ?? []), file]);
  }
  assert.ok(byName.size > 100, `found only ${byName.size} modules: the walk is broken`);
  assert.deepEqual(
    [...byName.values()].filter((files) => files.length > 1).map((files) => files.join(' and ')),
    [],
  );
});
