import {
  attachAgent,
  recordStart,
  recordStop,
  type StartChange,
  type StopChange,
} from '../../policy/claude-transitions.js';
import { soleWaitingSpawn } from '../../policy/spawns.js';
import type { AgentEntry, BufferedEvent, ClaudeIndexData } from '../../store/claude-index.js';
import { formatTimestamp, parseTimestamp } from '../../time.js';
import type { AgentStart, AgentStop, Spawned } from '../payload.js';
import { changeSession, type HookContext } from './hook-context.js';

/** What subagent_stop did with one lifecycle event (for the debug output and the tests). */
export type AgentEventResult =
  | { kind: 'applied'; session: string; changes: (StartChange | StopChange)[] }
  | { kind: 'buffered'; why: string }
  | { kind: 'ignored'; why: string };

/** Keeps the index of one conversation bounded even if bindings never arrive. */
const MAX_BUFFERED = 8;

/**
 * PostToolUse(Agent): the exact join of spawn and agent. Events of the agent that arrived before it
 * (a foreground agent starts and stops before PostToolUse fires) are replayed on its session now.
 */
export async function onSpawned(ctx: HookContext, e: Spawned): Promise<AgentEventResult> {
  // Lock-free first look: a spawn we never recorded costs one read and writes nothing.
  if (!(await ctx.index.read(e.claudeSession)).spawns[e.toolUseId])
    return { kind: 'ignored', why: `no delegation ${e.toolUseId} was recorded` };
  return ctx.index.update<AgentEventResult>(e.claudeSession, async (data) => {
    const spawn = data.spawns[e.toolUseId];
    if (!spawn) return { data, result: { kind: 'ignored', why: `no delegation ${e.toolUseId} was recorded` } as const };
    const agent = data.agents[e.agentId];
    const spawns = { ...data.spawns };
    // An agent guessed (`sole`) for another spawn: the exact join wins and that spawn waits again.
    for (const [id, s] of Object.entries(spawns))
      if (s.agent_id === e.agentId && id !== e.toolUseId) spawns[id] = { ...s, agent_id: undefined };
    spawns[e.toolUseId] = { ...spawn, agent_id: e.agentId };
    const entry: AgentEntry = {
      agent_type: agent?.agent_type ?? spawn.agent_type,
      session: spawn.session,
      bound: 'exact',
      ...(agent?.last ? { last: agent.last } : {}),
    };
    const next = { ...data, spawns, agents: { ...data.agents, [e.agentId]: entry } };
    if (agent?.session === spawn.session)
      return { data: next, result: { kind: 'applied', session: spawn.session, changes: [] } as const };
    await ctx.index.bindAgent(e.agentId, spawn.session);
    const changes = await replay(ctx, spawn.session, e.agentId, agent?.buffered ?? []);
    return { data: next, result: { kind: 'applied', session: spawn.session, changes } as const };
  });
}

/** SubagentStart: bind the agent if it is not yet (the only waiting spawn of its type), then executing. */
export async function onAgentStart(ctx: HookContext, e: AgentStart): Promise<AgentEventResult> {
  // A conversation with no recorded delegation: the agent was not spawned through pre_delegate.
  const peek = await ctx.index.read(e.claudeSession);
  if (Object.keys(peek.spawns).length === 0)
    return { kind: 'ignored', why: 'no delegation was recorded in this Claude Code session' };
  return ctx.index.update<AgentEventResult>(e.claudeSession, async (data) => {
    const event: BufferedEvent = {
      kind: 'start',
      at: formatTimestamp(ctx.sessions.now()),
      ...(e.cwd ? { cwd: e.cwd } : {}),
    };
    const known = data.agents[e.agentId];
    if (known?.session) {
      const changes = await replay(ctx, known.session, e.agentId, [event]);
      const agents = { ...data.agents, [e.agentId]: { ...known, last: 'start' as const } };
      return { data: { ...data, agents }, result: { kind: 'applied', session: known.session, changes } as const };
    }
    const waiting = soleWaitingSpawn(data, e.agentType, ctx.sessions.now());
    if (!waiting) return buffer(data, e.agentId, e.agentType, event);
    const [toolUseId, spawn] = waiting;
    const spawns = { ...data.spawns, [toolUseId]: { ...spawn, agent_id: e.agentId } };
    const entry: AgentEntry = { agent_type: e.agentType, session: spawn.session, bound: 'sole', last: 'start' };
    await ctx.index.bindAgent(e.agentId, spawn.session);
    const changes = await replay(ctx, spawn.session, e.agentId, [...(known?.buffered ?? []), event]);
    return {
      data: { ...data, spawns, agents: { ...data.agents, [e.agentId]: entry } },
      result: { kind: 'applied', session: spawn.session, changes } as const,
    };
  });
}

/** SubagentStop: a stop right after a stop of the same agent is a repeat and changes nothing. */
export async function onAgentStop(ctx: HookContext, e: AgentStop): Promise<AgentEventResult> {
  // Lock-free first look: a stop of an agent we never saw (internal, or not delegated through us) costs one read.
  const peek = await ctx.index.read(e.claudeSession);
  if (!peek.agents[e.agentId]) return { kind: 'ignored', why: `no start or spawn is known for agent ${e.agentId}` };
  return ctx.index.update<AgentEventResult>(e.claudeSession, async (data) => {
    const known = data.agents[e.agentId];
    if (!known)
      return { data, result: { kind: 'ignored', why: `no start or spawn is known for agent ${e.agentId}` } as const };
    if (known.last === 'stop')
      return { data, result: { kind: 'ignored', why: `repeated stop of agent ${e.agentId}` } as const };
    const event: BufferedEvent = {
      kind: 'stop',
      at: formatTimestamp(ctx.sessions.now()),
      message: e.message ?? undefined,
      transcript: e.agentTranscriptPath ?? undefined,
    };
    if (!known.session) return buffer(data, e.agentId, e.agentType, event);
    const changes = await replay(ctx, known.session, e.agentId, [event]);
    return {
      data: { ...data, agents: { ...data.agents, [e.agentId]: { ...known, last: 'stop' } } },
      result: { kind: 'applied', session: known.session, changes } as const,
    };
  });
}

function buffer(
  data: ClaudeIndexData,
  agentId: string,
  agentType: string,
  event: BufferedEvent,
): { data: ClaudeIndexData; result: AgentEventResult } {
  const known = data.agents[agentId];
  const buffered = [...(known?.buffered ?? []), event].slice(-MAX_BUFFERED);
  const entry: AgentEntry = { agent_type: agentType, buffered, last: event.kind };
  const why = `agent ${agentId} is not bound to a delegation yet (waiting for PostToolUse)`;
  return {
    data: { ...data, agents: { ...data.agents, [agentId]: entry } },
    result: { kind: 'buffered', why } as const,
  };
}

async function replay(
  ctx: HookContext,
  session: string,
  agentId: string,
  events: BufferedEvent[],
): Promise<(StartChange | StopChange)[]> {
  if (events.length === 0) {
    await changeSession(ctx, session, 'hook.bind', (r) => ({ record: attachAgent(r, agentId), result: null }));
    return [];
  }
  const changes: (StartChange | StopChange)[] = [];
  for (const event of events) {
    const now = ctx.sessions.now();
    const change =
      event.kind === 'start'
        ? await changeSession(ctx, session, 'hook.start', (r) => {
            const next = recordStart(r, agentId, now, parseTimestamp(event.at), event.cwd);
            return { record: next.record, result: next.change };
          })
        : await changeSession(ctx, session, 'hook.stop', (r) => {
            const next = recordStop(
              r,
              { agentId, message: event.message ?? null, agentTranscriptPath: event.transcript ?? null },
              now,
            );
            return { record: next.record, result: next.change };
          });
    if (change) changes.push(change);
  }
  return changes;
}
