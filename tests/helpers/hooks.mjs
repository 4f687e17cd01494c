// Running the built hooks the way Claude Code does: a payload on stdin, CLAUDECODE=1, the project as cwd.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cleanEnv, FIXTURES, PRE_DELEGATE, runNode, SUBAGENT_STOP, tempDir } from './run.mjs';

export const CLAUDE_FIXTURES = path.join(FIXTURES, 'claude');

/** A fixture payload (parsed), with fields replaced by `changes` (undefined deletes a field). */
export function fixture(name, changes = {}) {
  const payload = JSON.parse(readFileSync(path.join(CLAUDE_FIXTURES, `${name}.json`), 'utf8'));
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete payload[key];
    else payload[key] = value;
  }
  return payload;
}

/** A temp project with `.claude/`; its store is `<project>/.claude/session`. */
export function project(t) {
  const dir = tempDir(t, 'agent-session-hooks-');
  mkdirSync(path.join(dir, '.claude'));
  return { dir, store: path.join(dir, '.claude', 'session') };
}

/** Runs a hook with a payload (object or raw text) as Claude Code would. */
export async function hook(script, proj, payload, env = {}) {
  const input = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
  const result = await runNode(script, [], {
    cwd: proj.dir,
    env: cleanEnv({ CLAUDECODE: '1', CLAUDE_PROJECT_DIR: proj.dir, AGENT_SESSION_SWEEP_INTERVAL_MINUTES: '0', ...env }),
    input,
  });
  return { ...result, json: result.stdout.trim() ? JSON.parse(result.stdout) : null };
}

export const pre = (proj, payload, env) => hook(PRE_DELEGATE, proj, payload, env);
export const life = (proj, payload, env) => hook(SUBAGENT_STOP, proj, payload, env);

/** Session ids in the store (directories not starting with "."). */
export function sessionIds(store) {
  if (!existsSync(store)) return [];
  return readdirSync(store, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && existsSync(path.join(store, e.name, 'state.json')))
    .map((e) => e.name)
    .sort();
}

export function readSession(store, id) {
  return JSON.parse(readFileSync(path.join(store, id, 'state.json'), 'utf8'));
}

/** The one session in the store (fails when there are several or none). */
export function onlySession(store) {
  const ids = sessionIds(store);
  if (ids.length !== 1) throw new Error(`expected one session, found ${ids.length}: ${ids.join(', ')}`);
  return readSession(store, ids[0]);
}

export function hookLog(store) {
  const file = path.join(store, '.hooks.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/** Payloads of one delegation flow in a Claude Code session, built from the real fixtures. */
export function flow({
  session = 'sess-1',
  toolUseId = 'toolu_1',
  agentId = 'a1',
  type = 'general-purpose',
  prompt = 'Do the task',
  description = 'A task',
  background = true,
  caller,
} = {}) {
  const common = { session_id: session };
  const input = { description, prompt, subagent_type: type, ...(background ? {} : { run_in_background: false }) };
  return {
    pre: fixture('pretooluse-task', {
      ...common,
      tool_use_id: toolUseId,
      tool_input: input,
      ...(caller ? { agent_id: caller, agent_type: type } : {}),
    }),
    post: fixture(background ? 'posttooluse-task-background' : 'posttooluse-task', {
      ...common,
      tool_use_id: toolUseId,
      tool_input: input,
      tool_response: { status: background ? 'async_launched' : 'completed', agentId, agentType: type },
    }),
    start: fixture('subagentstart', { ...common, agent_id: agentId, agent_type: type }),
    stop: (message, extra = {}) =>
      fixture('subagentstop', {
        ...common,
        agent_id: agentId,
        agent_type: type,
        last_assistant_message: message,
        ...extra,
      }),
  };
}
