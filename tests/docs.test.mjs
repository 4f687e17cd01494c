// The shell examples of SESSION_README.md run. How a fenced block says what it is:
//   ```sh       commands that run: the whole block, with `sh -e`; it must exit 0.
//   ```console  a shell session: each `$ ` line (a trailing `\` continues it) runs, and the lines up to
//               the next `$ ` are what it must print (stdout then stderr; session ids match any id).
//   ```text     a synopsis or an illustration: not run (also any other language: json, js, cron).
// An HTML comment on the line before a sh or console block changes what is expected of it:
//   <!-- doc-test: skip: <why> -->                 not run (it needs the network or a real Claude Code)
//   <!-- doc-test: exit 1; output contains "..." -->  the exit code (the last command's, in a console
//                                                    block) and text the output must contain (repeatable)
// The blocks run in document order in one temporary project, so a block can use what an earlier one
// made. The project has the build under test as a dependency (node_modules/agent-session/), the CLI
// is `agent-session` on PATH, and the session agent-20261122-141500-1a2b3c4d (the id the guide's
// examples use) exists before the first block. A failure names the block by its line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { dependencyProject, globalBin, pathWith } from './helpers/installs.mjs';
import { cleanEnv, ROOT, runCli } from './helpers/run.mjs';

const GUIDE = 'SESSION_README.md';
const EXAMPLE_ID = 'agent-20261122-141500-1a2b3c4d';
/** Languages that would look like shell but escape this test: use sh, console or text. */
const SHELL_LIKE = new Set(['bash', 'shell', 'zsh', 'shell-session', 'shellsession']);

/** The fenced blocks of a Markdown text: {line (1-based, of the opening fence), lang, body, expect}. */
function fencedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```([\w-]*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, lang] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(indent.length));
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const comment = k >= 0 ? /^\s*<!--\s*doc-test:(.*?)-->\s*$/.exec(lines[k]) : null;
    blocks.push({ line: i + 1, lang, body: body.join('\n'), expect: parseExpect(comment?.[1], i + 1) });
    i = j;
  }
  return blocks;
}

/** `skip: why` | `exit N` and `output contains "..."` separated by `;` (a typo is an error, not ignored). */
function parseExpect(spec, line) {
  const expect = { skip: undefined, exit: 0, contains: [] };
  if (spec === undefined) return expect;
  const skip = /^\s*skip:\s*(.+?)\s*$/.exec(spec);
  if (skip) return { ...expect, skip: skip[1] };
  const rest = spec
    .replace(/\bexit (\d+)/, (_, n) => ((expect.exit = Number(n)), ''))
    .replace(/\boutput contains ("(?:[^"\\]|\\.)*")/g, (_, s) => (expect.contains.push(JSON.parse(s)), ''));
  assert.match(rest, /^[\s;]*$/, `${GUIDE}:${line - 1}: doc-test comment not understood: ${rest.trim()}`);
  return expect;
}

/** A console block's commands: {command, output (expected lines)}. */
function consoleCommands(body) {
  const commands = [];
  let continuing = false;
  for (const line of body.split('\n')) {
    if (continuing) commands.at(-1).command += `\n${line}`;
    else if (line.startsWith('$ ')) commands.push({ command: line.slice(2), output: [] });
    else if (commands.length) commands.at(-1).output.push(line);
    else assert.fail(`a console block starts with output, not with a "$ " command: ${line}`);
    continuing = /\\$/.test(line) && (continuing || line.startsWith('$ '));
  }
  return commands;
}

const sameIds = (text) => text.replace(/agent-\d{8}-\d{6}-[0-9a-f]{8}/g, 'agent-<id>');

let env;
let cwd;
const cleanups = [];
before(async () => {
  const owner = { after: (fn) => cleanups.push(fn) };
  const proj = dependencyProject(owner);
  const tmp = path.join(proj.home, 'tmp');
  mkdirSync(tmp);
  cwd = proj.dir;
  env = cleanEnv({
    HOME: proj.home,
    TMPDIR: tmp,
    PATH: pathWith(globalBin(owner)),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  });
  const made = await runCli(['create', '--agent', 'code-reviewer', '--id', EXAMPLE_ID], { cwd, env });
  assert.equal(made.code, 0, made.stderr);
});
after(() => cleanups.reverse().forEach((fn) => fn()));

function run(script, { errexit }) {
  return spawnSync('/bin/sh', [...(errexit ? ['-e'] : []), '-c', script], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
}

function check(block, what, result, expected) {
  const where = `${GUIDE}:${block.line} (${block.lang} block): ${what}`;
  const shown = `\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
  assert.equal(result.status, expected.exit, `${where} exited ${result.status ?? result.signal}${shown}`);
  for (const text of expected.contains)
    assert.ok(`${result.stdout}${result.stderr}`.includes(text), `${where} does not print "${text}"${shown}`);
  if (expected.output) {
    const printed = sameIds(`${result.stdout}${result.stderr}`).trimEnd();
    assert.equal(printed, sameIds(expected.output.join('\n')).trimEnd(), `${where} printed other output${shown}`);
  }
}

const blocks = fencedBlocks(readFileSync(path.join(ROOT, GUIDE), 'utf8'));

test(`${GUIDE}: shell examples are sh, console or text blocks`, () => {
  const shellLike = blocks.filter((b) => SHELL_LIKE.has(b.lang)).map((b) => `${GUIDE}:${b.line}: ${b.lang}`);
  assert.deepEqual(shellLike, []);
  assert.ok(blocks.filter((b) => b.lang === 'sh' && !b.expect.skip).length > 0, 'no sh block runs');
});

for (const block of blocks.filter((b) => b.lang === 'sh' || b.lang === 'console')) {
  test(`${GUIDE}:${block.line} (${block.lang})`, (t) => {
    if (block.expect.skip) return t.skip(block.expect.skip);
    if (block.lang === 'sh') return check(block, 'the block', run(block.body, { errexit: true }), block.expect);
    const commands = consoleCommands(block.body);
    commands.forEach(({ command, output }, i) => {
      const last = i === commands.length - 1;
      const expected = last ? { ...block.expect, output } : { exit: 0, contains: [], output };
      check(block, `\`${command}\``, run(command, { errexit: false }), expected);
    });
  });
}
