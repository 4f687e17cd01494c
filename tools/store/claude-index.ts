/**
 * One small index file per Claude Code session: `<store>/.claude-code/<claude session id>.json`.
 * It maps spawns (tool_use_id) and agents (agent_id) to session ids, so a hook finds its session
 * without scanning the store: the cost depends on one conversation, not on the number of sessions.
 * Besides, one file per agent bound to a session, `<store>/.claude-code/agents/<agent id>`, holds that
 * session's id: the CLI takes an agent id where a session id goes without knowing its conversation.
 * Both hold nothing that the session records do not (they can be rebuilt from their `claude` objects).
 */
import { readdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { SessionError, toSessionError } from '../errors.js';
import { assertValidId, isValidId } from '../ids.js';
import { JsonTooDeepError, parseJson } from '../json.js';
import { isPlainObject, type JsonObject } from '../merge-patch.js';
import { TEMP_SUFFIX, writeFileAtomic } from './atomic.js';
import { withLock } from './lock.js';
import { decodeUtf8, ensureAreaSync, readRegularFileSync } from './regular-file.js';
import { ensureStoreSync } from './store-root.js';

export const CLAUDE_DIR = '.claude-code';
export const AGENTS_DIR = `${CLAUDE_DIR}/agents`;
/** An agent's file holds one session id and a newline. */
const AGENT_FILE_MAX_BYTES = 1024;
/** An index maps one conversation's spawns: a few KiB. */
const INDEX_MAX_BYTES = 16 * 1024 * 1024;

export interface SpawnEntry {
  session: string;
  agent_type: string;
  at: string;
  agent_id?: string;
  /** A spawn given a paused session (a brief): the delegating subagent, if any, and its transcript mark. */
  caller?: string;
  transcript_offset?: number;
}

/** An event of an agent not yet bound to a session, kept until the binding is known. */
export interface BufferedEvent {
  kind: 'start' | 'stop';
  at: string;
  /** SubagentStart's cwd (the agent's worktree under `isolation: "worktree"`). */
  cwd?: string;
  message?: string;
  transcript?: string;
}

export interface AgentEntry {
  agent_type: string;
  session?: string;
  /** How the binding was made: `exact` from PostToolUse, `sole` from the only waiting spawn of its type. */
  bound?: 'exact' | 'sole';
  last?: 'start' | 'stop';
  buffered?: BufferedEvent[];
}

export interface ClaudeIndexData {
  spawns: Record<string, SpawnEntry>;
  agents: Record<string, AgentEntry>;
  /** pre_delegate's latest answers by tool_use_id, so a repeated PreToolUse gets the same one. */
  answers?: Record<string, JsonObject>;
}

export function emptyIndex(): ClaudeIndexData {
  return { spawns: {}, agents: {} };
}

export class ClaudeIndex {
  readonly dir: string;
  private readonly storeDir: string;
  private readonly lockTimeoutMs: number;

  constructor(storeDir: string, options: { lockTimeoutMs: number }) {
    this.storeDir = resolve(storeDir);
    this.dir = join(this.storeDir, CLAUDE_DIR);
    this.lockTimeoutMs = options.lockTimeoutMs;
  }

  /** Lock-free read; an absent file is an empty index. */
  async read(claudeSession: string): Promise<ClaudeIndexData> {
    const file = this.file(claudeSession);
    let data: Buffer | undefined;
    try {
      // A FIFO here would hang every hook of the conversation: regular files only (regular-file.ts).
      data = readRegularFileSync(file, { maxBytes: INDEX_MAX_BYTES });
    } catch (err) {
      throw toSessionError(err, `reading ${file}`);
    }
    return data === undefined ? emptyIndex() : parseIndex(decodeUtf8(data, file), file);
  }

  /** Lock, read, apply, write, unlock; `change` returns the same object for no write. */
  async update<T>(
    claudeSession: string,
    change: (data: ClaudeIndexData) => Promise<{ data: ClaudeIndexData; result: T }>,
  ): Promise<T> {
    const file = this.file(claudeSession);
    const lockPath = join(this.dir, '.locks', `${claudeSession}.lock`);
    ensureStoreSync(this.storeDir);
    ensureAreaSync(this.dir);
    ensureAreaSync(dirname(lockPath));
    return withLock(
      lockPath,
      { timeoutMs: this.lockTimeoutMs, what: `Claude Code session ${claudeSession}` },
      async (check) => {
        const current = await this.read(claudeSession);
        const { data, result } = await change(current);
        if (data !== current) {
          check();
          await writeFileAtomic(file, `${JSON.stringify(data)}\n`, { beforeRename: check }).catch((err) => {
            throw toSessionError(err, `writing ${file}`);
          });
        }
        return result;
      },
    );
  }

  /**
   * Records that `agentId` belongs to `session`, once per binding (not per event). No fsync: the
   * records' `claude.agent_ids` are the truth and rebuildClaudeIndexes writes these again.
   */
  async bindAgent(agentId: string, session: string): Promise<void> {
    const file = this.agentFile(agentId);
    assertValidId(session);
    ensureStoreSync(this.storeDir);
    ensureAreaSync(this.dir);
    ensureAreaSync(dirname(file));
    await writeFileAtomic(file, `${session}\n`, { sync: false }).catch((err) => {
      throw toSessionError(err, `writing ${file}`);
    });
  }

  /** The session an agent id was bound to, or undefined (unknown agent, or not a valid id in the file). */
  agentSession(agentId: string): string | undefined {
    const file = this.agentFile(agentId);
    let data: Buffer | undefined;
    try {
      data = readRegularFileSync(file, { maxBytes: AGENT_FILE_MAX_BYTES });
    } catch (err) {
      throw toSessionError(err, `reading ${file}`);
    }
    if (data === undefined) return undefined;
    const session = decodeUtf8(data, file).trim();
    return isValidId(session) ? session : undefined;
  }

  /** Removes the index files of conversations untouched for longer than `olderThanMs`; returns their ids. */
  async prune(now: number, olderThanMs: number): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const removed: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const file = join(this.dir, name);
      const info = await stat(file).catch(() => undefined);
      if (!info || now - info.mtimeMs <= olderThanMs) continue;
      await unlink(file).then(
        () => removed.push(name.slice(0, -'.json'.length)),
        () => undefined,
      );
    }
    return removed;
  }

  /**
   * Removes the agent files untouched for longer than `olderThanMs` whose session is gone (deleted and
   * past its trash time); returns their agent ids. An agent file of a live session stays: `show` by
   * agent id works as long as the session does.
   */
  async pruneAgents(now: number, olderThanMs: number, sessionExists: (id: string) => boolean): Promise<string[]> {
    const dir = join(this.storeDir, AGENTS_DIR);
    const names = await readdir(dir).catch(() => [] as string[]);
    const removed: string[] = [];
    for (const name of names.filter(isValidId)) {
      const info = await stat(join(dir, name)).catch(() => undefined);
      if (!info || now - info.mtimeMs <= olderThanMs) continue;
      const session = (() => {
        try {
          return this.agentSession(name);
        } catch {
          return undefined;
        }
      })();
      // A write temp left by a crashed hook goes too (the write renames it away within milliseconds).
      if (!name.endsWith(TEMP_SUFFIX) && session !== undefined && sessionExists(session)) continue;
      await unlink(join(dir, name)).then(
        () => removed.push(name),
        () => undefined,
      );
    }
    return removed;
  }

  private agentFile(agentId: string): string {
    assertValidId(agentId, 'Claude Code agent id');
    return join(this.storeDir, AGENTS_DIR, agentId);
  }

  private file(claudeSession: string): string {
    assertValidId(claudeSession, 'Claude Code session id');
    return join(this.dir, `${claudeSession}.json`);
  }
}

function parseIndex(text: string, file: string): ClaudeIndexData {
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch (err) {
    throw new SessionError(
      'ECORRUPT',
      `${file} is not valid JSON${err instanceof JsonTooDeepError ? ` (${err.message})` : ''}`,
      { cause: err },
    );
  }
  if (!isPlainObject(raw) || !isPlainObject(raw.spawns) || !isPlainObject(raw.agents)) {
    throw new SessionError('ECORRUPT', `${file} is not a Claude Code index`);
  }
  return raw as unknown as ClaudeIndexData;
}
