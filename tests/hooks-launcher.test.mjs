// The hook executables are launchers that run their bundle with V8's code cache (scripts/launcher.cjs).
// Each test runs a private copy of dist/hooks, so the shared build's cache files are not touched.
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fixture, flow, hook, hookLog, onlySession, project } from './helpers/hooks.mjs';
import { cleanEnv, DIST, runNode, tempDir } from './helpers/run.mjs';

/** The cache file's name for this build (the launcher names it after its bundle's content) and this Node. */
function cacheName(launcher, flagsTag = '') {
  const hash = /\$\{bundle\}\.([0-9a-f]{12})\./.exec(readFileSync(launcher, 'utf8'))[1];
  return `pre_delegate.cjs.${hash}.${process.version}-${process.arch}${flagsTag}.v8cache`;
}

/** dist/hooks copied to a temp directory: { script, bundles } of pre_delegate. */
function privateHooks(t) {
  const dir = path.join(tempDir(t, 'agent-session-launcher-'), 'hooks');
  cpSync(path.join(DIST, 'hooks'), dir, { recursive: true, filter: (src) => !src.endsWith('.v8cache') });
  return { script: path.join(dir, 'pre_delegate.js'), bundles: path.join(dir, 'bundles') };
}

/** One delegation in its own Claude Code session; returns the prompt pre_delegate answered with. */
async function delegate(script, proj, n) {
  const payload = fixture('pretooluse-task', { session_id: `launcher-${n}`, tool_use_id: `toolu_launcher_${n}` });
  const result = await hook(script, proj, payload);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  return result.json?.hookSpecificOutput?.updatedInput?.prompt;
}

test(
  'the launcher writes a code cache for this Node version next to the bundle, ' + 'uses it, and replaces a bad one',
  async (t) => {
    const hooks = privateHooks(t);
    const cache = path.join(hooks.bundles, cacheName(hooks.script));
    assert.equal(existsSync(cache), false);

    const proj = project(t);
    const first = await delegate(hooks.script, proj, 1);
    const id = onlySession(proj.store).agent_id;
    assert.ok(first.includes(id), `the answer names the new session ${id}: ${first}`);
    const written = statSync(cache);
    assert.ok(written.size > 10_000, `a cache of ${written.size} bytes`);

    // V8 accepted it: the next run does not rewrite it (a rewrite renames a new file into place), and
    // answers the same way.
    const other = project(t);
    const second = await delegate(hooks.script, other, 2);
    assert.ok(second.includes(onlySession(other.store).agent_id));
    assert.equal(statSync(cache).ino, written.ino);

    // A cache V8 refuses (garbage, or another build's) is replaced after a run that works as usual.
    writeFileSync(cache, Buffer.alloc(4096, 7));
    const third = project(t);
    const answer = await delegate(hooks.script, third, 3);
    assert.ok(answer.includes(onlySession(third.store).agent_id));
    assert.ok(readFileSync(cache).length > 10_000, 'the garbage was replaced by a real cache');
    const replaced = statSync(cache).ino;
    const fourth = project(t);
    assert.ok((await delegate(hooks.script, fourth, 4)).includes(onlySession(fourth.store).agent_id));
    assert.equal(statSync(cache).ino, replaced, 'the new cache is accepted in turn');
    assert.deepEqual(
      readdirSync(hooks.bundles).filter((f) => f.endsWith('.tmp')),
      [],
    );
  },
);

test(
  'a cache with damaged bytes is never given to V8: ' + 'the hook answers as usual and the cache is rewritten',
  async (t) => {
    const hooks = privateHooks(t);
    const cache = path.join(hooks.bundles, cacheName(hooks.script));
    const first = project(t);
    assert.ok((await delegate(hooks.script, first, 1)).includes(onlySession(first.store).agent_id));
    const good = readFileSync(cache);
    const half = good.length / 2;
    assert.ok(good.subarray(0, half).equals(good.subarray(half)), 'the cache is stored twice over');

    // Bytes damaged after V8's header (which V8 does check): given to V8, this bytecode aborts Node
    // (SIGTRAP, exit 133) on every run. The second copy no longer matches, so the launcher drops it.
    const damaged = Buffer.from(good);
    for (let i = 2000; i < half; i += 997) damaged[i] ^= 0xff;
    writeFileSync(cache, damaged);
    const second = project(t);
    const answer = await delegate(hooks.script, second, 2);
    assert.ok(answer.includes(onlySession(second.store).agent_id), answer);
    const rewritten = readFileSync(cache);
    assert.ok(
      rewritten.subarray(0, rewritten.length / 2).equals(rewritten.subarray(rewritten.length / 2)),
      'a whole new cache',
    );
    const replaced = statSync(cache).ino;
    const third = project(t);
    assert.ok((await delegate(hooks.script, third, 3)).includes(onlySession(third.store).agent_id));
    assert.equal(statSync(cache).ino, replaced, 'the new cache is accepted in turn');
  },
);

test('a cache that cannot be written leaves the hook working and no temp files behind', async (t) => {
  const hooks = privateHooks(t);
  // A directory where the cache file would go: reading and renaming over it both fail (also as root).
  mkdirSync(path.join(hooks.bundles, cacheName(hooks.script)));
  for (const n of [1, 2]) {
    const proj = project(t);
    const prompt = await delegate(hooks.script, proj, n);
    assert.ok(prompt.includes(onlySession(proj.store).agent_id));
  }
  assert.deepEqual(
    readdirSync(hooks.bundles).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('other Node flags get a cache of their own, and the default one is left as it is', async (t) => {
  const hooks = privateHooks(t);
  await delegate(hooks.script, project(t), 1);
  const plain = statSync(path.join(hooks.bundles, cacheName(hooks.script)));
  const env = { NODE_OPTIONS: '--max-old-space-size=100' };
  for (const n of [2, 3]) {
    const proj = project(t);
    const payload = fixture('pretooluse-task', { session_id: `flags-${n}`, tool_use_id: `toolu_flags_${n}` });
    const result = await hook(hooks.script, proj, payload, env);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(result.json.hookSpecificOutput.updatedInput.prompt.includes(onlySession(proj.store).agent_id));
  }
  const caches = readdirSync(hooks.bundles).filter((f) => f.startsWith('pre_delegate.cjs.') && f.endsWith('.v8cache'));
  assert.equal(caches.length, 2, caches.join(', '));
  assert.ok(
    caches.some((f) => /-f[0-9a-f]+\.v8cache$/.test(f)),
    caches.join(', '),
  );
  await delegate(hooks.script, project(t), 4);
  assert.equal(statSync(path.join(hooks.bundles, cacheName(hooks.script))).ino, plain.ino);
});

test('a hook writes its cache only after a run that did its work: events it ignores leave none', async (t) => {
  const hooks = privateHooks(t);
  const stopScript = path.join(path.dirname(hooks.script), 'subagent_stop.js');
  const caches = (name) =>
    readdirSync(hooks.bundles).filter((f) => f.startsWith(`${name}.cjs.`) && f.endsWith('.v8cache'));
  const proj = project(t);
  const f = flow({ session: 'worth-1', toolUseId: 'toolu_worth_1', agentId: 'aworth1' });

  // A cache written now would hold only the code that ignores an event, for every later run.
  const bash = await hook(hooks.script, proj, { ...f.pre, tool_name: 'Bash', tool_input: { command: 'ls' } });
  assert.equal(bash.code, 0, bash.stderr);
  assert.equal(bash.stdout, '');
  const unknown = await hook(stopScript, proj, flow({ session: 'worth-0', agentId: 'anobody' }).stop('done'));
  assert.equal(unknown.code, 0, unknown.stderr);
  const empty = await hook(hooks.script, proj, '', { CLAUDECODE: '' });
  assert.equal(empty.json?.reason, 'invalid_json', empty.stdout);
  assert.deepEqual([...caches('pre_delegate'), ...caches('subagent_stop')], []);

  // A delegation, then its agent's start: each hook's first real run writes its cache.
  const delegated = await hook(hooks.script, proj, f.pre);
  assert.ok(delegated.json.hookSpecificOutput.updatedInput.prompt.includes(onlySession(proj.store).agent_id));
  assert.deepEqual(caches('pre_delegate'), [cacheName(hooks.script)]);
  assert.deepEqual(caches('subagent_stop'), []);
  const started = await hook(stopScript, proj, f.start);
  assert.equal(started.code, 0, started.stderr);
  assert.equal(onlySession(proj.store).phase, 'executing');
  assert.equal(caches('subagent_stop').length, 1);
  assert.ok(statSync(path.join(hooks.bundles, caches('subagent_stop')[0])).size > 10_000);
});

test('a hook whose bundle is missing or throws at load still fails open: exit 0, no output', async (t) => {
  const hooks = privateHooks(t);
  const bundle = path.join(hooks.bundles, 'pre_delegate.cjs');
  const payload = fixture('pretooluse-task', { session_id: 'broken', tool_use_id: 'toolu_broken' });
  for (const breakIt of [
    () => writeFileSync(bundle, 'throw new Error("boom at load");\n'),
    () => writeFileSync(bundle, '}}}'),
    () => rmSync(bundle),
  ]) {
    breakIt();
    const proj = project(t);
    const result = await hook(hooks.script, proj, payload);
    assert.deepEqual([result.code, result.stdout, result.stderr], [0, '', '']);
    assert.equal(existsSync(proj.store), false, 'nothing written');
    const debug = await hook(hooks.script, proj, payload, { AGENT_SESSION_DEBUG: '1' });
    assert.equal(debug.code, 0);
    assert.equal(debug.stdout, '');
    assert.match(debug.stderr, /^agent-session pre_delegate: failing open: cannot load .*pre_delegate\.cjs/);
  }
});

test('the CLI without its bundle says so and exits 4', async (t) => {
  const bin = path.join(tempDir(t, 'agent-session-launcher-'), 'bin');
  cpSync(path.join(DIST, 'bin'), bin, { recursive: true });
  rmSync(path.join(bin, 'bundles', 'agent-session.cjs'));
  const result = await runNode(path.join(bin, 'agent-session.js'), ['list'], { env: cleanEnv() });
  assert.equal(result.code, 4);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^agent-session: cannot load .*agent-session\.cjs \(.*\); reinstall the package\n$/);
});

test('the CLI run from a directory deleted under it says so, not "reinstall", and exits 4', (t) => {
  const gone = path.join(tempDir(t, 'agent-session-launcher-'), 'gone');
  // The shell enters the directory, removes it, then starts the CLI there: Node's process.cwd() fails.
  const cli = path.join(DIST, 'bin', 'agent-session.js');
  for (const args of ['--version', 'list']) {
    mkdirSync(gone);
    const result = spawnSync(
      'sh',
      ['-c', `cd "$1" && rmdir "$1" && exec "$2" "$3" ${args}`, 'sh', gone, process.execPath, cli],
      {
        env: cleanEnv(),
        encoding: 'utf8',
      },
    );
    assert.equal(result.status, 4, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^agent-session: the current directory no longer exists \(.*uv_cwd\); cd to one that does/,
    );
    assert.doesNotMatch(result.stderr, /reinstall/);
  }
});

test("the CLI run through a symlink (npm's .bin) finds its bundle, even with --preserve-symlinks-main", async (t) => {
  const dir = tempDir(t, 'agent-session-launcher-');
  const bin = path.join(dir, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(path.join(DIST, 'bin', 'agent-session.js'), path.join(bin, 'agent-session'));
  const store = path.join(dir, 'store');
  // An empty store: a missing one is an error of its own.
  mkdirSync(store);
  for (const flags of [[], ['--preserve-symlinks-main']]) {
    const r = spawnSync(
      process.execPath,
      [...flags, path.join(bin, 'agent-session'), 'list', '--json', '--dir', store],
      { env: cleanEnv(), encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).sessions, []);
  }
});

test(
  'the CLI whose output cannot be written (a full disk) says so on one line and exits 4',
  { skip: !existsSync('/dev/full') && 'no /dev/full' },
  async (t) => {
    const store = path.join(tempDir(t, 'agent-session-launcher-'), 'store');
    mkdirSync(store);
    const full = openSync('/dev/full', 'w');
    const r = spawnSync(
      process.execPath,
      [path.join(DIST, 'bin', 'agent-session.js'), 'list', '--json', '--dir', store],
      { env: cleanEnv(), stdio: ['ignore', full, 'pipe'], encoding: 'utf8' },
    );
    assert.equal(r.status, 4);
    assert.equal(r.stderr, 'agent-session: cannot write the output (ENOSPC)\n');
  },
);

test(
  'a missing sweep bundle: ' + 'the detached sweep is logged as a problem, and --sweep by hand fails with exit 4',
  async (t) => {
    const hooks = privateHooks(t);
    const stop = path.join(path.dirname(hooks.script), 'subagent_stop.js');
    rmSync(path.join(hooks.bundles, 'sweep.cjs'));
    const proj = project(t);
    const f = flow();
    assert.equal((await hook(hooks.script, proj, f.pre)).code, 0);
    // A stamp one interval old: this stop claims the sweep and would start it detached.
    const stamp = path.join(proj.store, '.claude-code', 'last-sweep');
    writeFileSync(stamp, 'x');
    const hourAgo = (Date.now() - 3_600_000 - 1000) / 1000;
    utimesSync(stamp, hourAgo, hourAgo);
    const result = await hook(stop, proj, f.start, { AGENT_SESSION_SWEEP_INTERVAL_MINUTES: '60' });
    assert.deepEqual([result.code, result.stdout, result.stderr], [0, '', '']);
    assert.match(
      hookLog(proj.store),
      /cannot start the periodic sweep: .*sweep\.cjs is missing; reinstall agent-session/,
    );

    const byHand = await runNode(stop, ['--sweep'], {
      cwd: proj.dir,
      env: cleanEnv({ AGENT_SESSION_DIR: proj.store }),
    });
    assert.equal(byHand.code, 4);
    assert.equal(byHand.stdout, '');
    assert.match(byHand.stderr, /^agent-session: cannot load the sweep .*sweep\.cjs .*; reinstall the package\n$/);
  },
);
