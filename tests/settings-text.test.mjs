// Install and uninstall change a settings file's text only where our hooks are: every other line
// keeps its exact text (tools/install/settings-text.ts).
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cleanEnv, DIST, runCli, tempDir } from './helpers/run.mjs';

const { formatSettings, parseSettingsText } = await import(
  pathToFileURL(path.join(DIST, 'tools', 'install', 'settings-text.js')).href
);

/** The text `formatSettings` writes for `text` changed by `change` (applied to its parsed settings). */
function rewrite(text, change) {
  const file = parseSettingsText('settings.json', text);
  return formatSettings(change(structuredClone(file.settings)), file);
}

const USER_SETTINGS = [
  '{',
  '  "permissions": { "allow": ["Bash(npm test:*)", "Read(./src/**)"], "deny": ["Read(./.env)"] },',
  '  "env": {"PRICE": 1.50},',
  '  "hooks": {',
  '    "Stop": [{ "hooks": [{ "type": "command", "command": "echo stop" }] }]',
  '  },',
  '  "model": "opus"',
  '}',
  '',
].join('\n');

test('install --user keeps every line but the hooks; uninstall gives the file back', async (t) => {
  const home = tempDir(t, 'agent-session-settings-');
  const file = path.join(home, '.claude', 'settings.json');
  mkdirSync(path.dirname(file));
  writeFileSync(file, USER_SETTINGS);
  const env = cleanEnv({ HOME: home });
  const install = await runCli(['install', '--user'], { cwd: home, env });
  assert.equal(install.code, 0, install.stderr);
  const installed = readFileSync(file, 'utf8');
  // The compact permissions line, the number as written, the user's own Stop group (followed by ours
  // now, so with a comma), the last member.
  const lines = USER_SETTINGS.split('\n');
  const now = installed.split('\n').map((line) => line.replace(/,$/, ''));
  for (const line of [lines[1], lines[2], lines[4], lines[6]]) assert.ok(now.includes(line.replace(/,$/, '')), line);
  assert.equal(JSON.parse(installed).hooks.SubagentStart.length, 1);
  const uninstall = await runCli(['uninstall', '--user'], { cwd: home, env });
  assert.equal(uninstall.code, 0, uninstall.stderr);
  assert.equal(readFileSync(file, 'utf8'), USER_SETTINGS);
});

test('a changed member is written in the file indentation where it was; added ones go last', () => {
  const text = '{\r\n\t"a": [1,2],\r\n\t"b": {"x": 1},\r\n\t"c": 3\r\n}\r\n';
  assert.equal(
    rewrite(text, (s) => ({ ...s, b: { x: 2, y: [true] }, d: { e: 1 } })),
    '{\r\n\t"a": [1,2],\r\n\t"b": {"x": 2,"y": [true]},\r\n\t"c": 3,\r\n\t"d": {\r\n\t\t"e": 1\r\n\t}\r\n}\r\n',
  );
  // Dropping members (the last one included) keeps the others and the closing line.
  assert.equal(
    rewrite(text, ({ a }) => ({ a })),
    '{\r\n\t"a": [1,2]\r\n}\r\n',
  );
  assert.equal(
    rewrite(text, ({ b, c }) => ({ b, c })),
    '{\r\n\t"b": {"x": 1},\r\n\t"c": 3\r\n}\r\n',
  );
});

test('a one-line file stays on one line; a BOM and a missing final line break are kept', () => {
  assert.equal(
    rewrite('\ufeff{"a":1}', (s) => ({ ...s, h: { k: [1] } })),
    '\ufeff{"a":1,"h":{"k":[1]}}',
  );
  assert.equal(
    rewrite('{ "a": 1, "h": {"k": [1]} }', ({ a }) => ({ a })),
    '{ "a": 1 }',
  );
});

test('what cannot be kept in place is written anew: reordered keys, an object emptied or filled', () => {
  assert.equal(
    rewrite('{"a":1,"b":2}', ({ a, b }) => ({ b, a })),
    '{\n  "b": 2,\n  "a": 1\n}\n',
  );
  assert.equal(
    rewrite('{"a":1}', () => ({})),
    '{}\n',
  );
  assert.equal(
    rewrite('{ }', () => ({ a: 1 })),
    '{\n  "a": 1\n}\n',
  );
  assert.equal(
    rewrite(undefined, () => ({ a: 1 })),
    '{\n  "a": 1\n}\n',
  );
  // An emptied object inside is written as the empty object it is.
  assert.equal(
    rewrite('{\n  "h": {"k": 1}\n}\n', () => ({ h: {} })),
    '{\n  "h": {}\n}\n',
  );
});
