// Reference for the hooks benchmark: the least a hook can do to create a session durably, with none
// of our code. It reads a PreToolUse payload from stdin and makes the same file-system changes as
// pre_delegate's first delegation of a conversation: the conversation's lock, its index (read),
// the session's lock and directory, state.json (temp file in .tmp/, fsync, rename), one audit line, the
// conversation's index (temp file, fsync, rename), both locks released, the answer on stdout.
// Usage: node hook-floor.cjs <store dir>
'use strict';
const fs = require('node:fs');

const store = process.argv[2];
const payload = JSON.parse(fs.readFileSync(0, 'utf8'));
const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
const id = `agent-${stamp}-${Math.random().toString(16).slice(2, 10)}`;
const conversation = `${store}/.claude-code/${payload.session_id}`;

function atomic(file, text, temp = `${file}.${process.pid}.tmp`) {
  const fd = fs.openSync(temp, 'wx');
  fs.writeSync(fd, text);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(temp, file);
}

fs.mkdirSync(`${store}/.claude-code/.locks`, { recursive: true });
fs.mkdirSync(`${store}/.locks`, { recursive: true });
fs.mkdirSync(`${store}/.claude-code/.locks/${payload.session_id}.lock`);
try {
  fs.readFileSync(`${conversation}.json`, 'utf8');
} catch {
  // The conversation's first delegation.
}
fs.mkdirSync(`${store}/.locks/${id}.lock`);
fs.mkdirSync(`${store}/${id}`);
const now = new Date().toISOString();
const record = {
  schema_version: 1,
  agent_id: id,
  agent_name: payload.tool_input.subagent_type,
  purpose: payload.tool_input.description,
  phase: 'initializing',
  created_at: now,
  last_updated: now,
  history: [],
};
fs.mkdirSync(`${store}/.tmp`, { recursive: true });
atomic(
  `${store}/${id}/state.json`,
  `${JSON.stringify(record, null, 2)}\n`,
  `${store}/.tmp/${id}.state.json.${process.pid}.tmp`,
);
fs.appendFileSync(`${store}/audit.jsonl`, `${JSON.stringify({ v: 1, time: now, action: 'create', ids: [id] })}\n`);
fs.rmdirSync(`${store}/.locks/${id}.lock`);
atomic(`${conversation}.json`, `${JSON.stringify({ spawns: { [payload.tool_use_id]: { session: id } } })}\n`);
fs.rmdirSync(`${store}/.claude-code/.locks/${payload.session_id}.lock`);
const prompt = `${payload.tool_input.prompt}\n\n[agent-session: session ${id}]`;
fs.writeSync(
  1,
  `${JSON.stringify({
    hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { ...payload.tool_input, prompt } },
  })}\n`,
);
