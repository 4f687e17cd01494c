import { isValidId } from '../ids.js';
import type { SessionRecord } from '../record.js';
import type { Sessions } from '../sessions.js';
import { ClaudeIndex, emptyIndex, type ClaudeIndexData } from '../store/claude-index.js';

/**
 * Rebuilds the per-conversation index files and the agent files (agent id to session) from the records'
 * `claude` objects (one scan), adding what is missing and keeping what is there; an agent file naming
 * another session than the record that lists the agent is rewritten. Returns the Claude Code session ids written.
 */
export async function rebuildClaudeIndexes(sessions: Sessions): Promise<string[]> {
  const groups = new Map<string, ClaudeIndexData>();
  for (const record of sessions.store.scan().records) {
    const conversation = record.claude?.session_id;
    if (!isValidId(conversation)) continue;
    const data = groups.get(conversation) ?? emptyIndex();
    addRecord(data, record);
    groups.set(conversation, data);
  }
  const index = new ClaudeIndex(sessions.store.dir, { lockTimeoutMs: sessions.settings.lockTimeoutMs });
  for (const [conversation, rebuilt] of groups) {
    await index.update(conversation, async (current) => ({
      data: {
        ...current,
        spawns: { ...rebuilt.spawns, ...current.spawns },
        agents: { ...rebuilt.agents, ...current.agents },
      },
      result: null,
    }));
  }
  for (const data of groups.values()) {
    for (const [agentId, agent] of Object.entries(data.agents))
      if (agent.session && index.agentSession(agentId) !== agent.session) await index.bindAgent(agentId, agent.session);
  }
  return [...groups.keys()];
}

function addRecord(data: ClaudeIndexData, record: SessionRecord): void {
  const claude = record.claude ?? {};
  const agentId = isValidId(claude.agent_id) ? claude.agent_id : undefined;
  const spawns = [...(Array.isArray(claude.tool_use_ids) ? claude.tool_use_ids : []), claude.tool_use_id].filter(
    isValidId,
  );
  for (const toolUseId of spawns) {
    data.spawns[toolUseId] = {
      session: record.agent_id,
      agent_type: record.agent_name,
      at: record.created_at,
      ...(agentId ? { agent_id: agentId } : {}),
    };
  }
  const agents = (Array.isArray(claude.agent_ids) ? claude.agent_ids : []).filter(isValidId);
  for (const id of agents) {
    data.agents[id] = {
      agent_type: record.agent_name,
      session: record.agent_id,
      bound: 'exact',
      last: record.phase === 'executing' ? 'start' : 'stop',
    };
  }
}
