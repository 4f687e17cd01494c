// What `stats` keeps of one record: where it stands, how long it took, how its pauses ended, and where its
// agents' transcripts are. Pure: record, clock and resume rules in; the records themselves are not kept
// (a store of 100,000 would not fit).
import { dirname, join } from 'node:path';
import { isFinalPhase, isResumablePhase, type Phase } from '../phases.js';
import { decideResume, resumeWindowMs, type ResumeRules } from '../policy/resume.js';
import type { SessionRecord } from '../record.js';
import { parseTimestamp } from '../time.js';

export type SessionState = 'running' | 'paused' | 'completed' | 'failed' | 'abandoned';

export interface SessionFacts {
  id: string;
  agent: string;
  parent: string | null;
  created: number;
  state: SessionState;
  /** From creation to finalizing, for a finished session. */
  toFinishMs: number | null;
  /** Time spent in each phase it left (a phase it is still in is not counted: that wait has no end yet). */
  phaseMs: Partial<Record<Phase, number>>;
  paused: boolean;
  /** Resumes by the same agent (SendMessage), by a new agent (the brief), and without an agent (the CLI). */
  sameAgent: number;
  newAgent: number;
  otherResumes: number;
  expired: boolean;
  errors: number;
  /** Where the transcript of each agent of the session may be. */
  transcripts: AgentTranscript[];
}

export interface AgentTranscript {
  /** Null for a transcript path the record keeps without an agent id that names it. */
  agent: string | null;
  /** The paths its transcript may have: the first that exists is read. */
  paths: string[];
  /** Project directories (`<projects>/<project>`) whose other conversations are searched when no path exists. */
  projects: string[];
}

/** Agent ids are opaque names (`a` + hex): anything with a separator is not used to build a path. */
const AGENT_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function sessionFacts(record: SessionRecord, now: number, rules: ResumeRules): SessionFacts {
  const created = parseTimestamp(record.created_at) ?? 0;
  const finalized = parseTimestamp(record.finalized_at);
  const facts: SessionFacts = {
    id: record.agent_id,
    agent: record.agent_name,
    parent: record.parent_session_id,
    created,
    state: stateOf(record),
    toFinishMs: finalized === undefined || !isFinalPhase(record.phase) ? null : Math.max(0, finalized - created),
    phaseMs: {},
    paused: isResumablePhase(record.phase),
    sameAgent: 0,
    newAgent: 0,
    otherResumes: 0,
    expired: false,
    errors: record.error_count,
    transcripts: transcriptCandidates(record),
  };
  walkHistory(record, created, rules, facts);
  if (facts.state === 'paused' && decideResume(record, now, rules).reason === 'expired') facts.expired = true;
  return facts;
}

function stateOf(record: SessionRecord): SessionState {
  if (isFinalPhase(record.phase)) return record.phase as SessionState;
  if (record.finalized_at) return 'abandoned';
  return isResumablePhase(record.phase) ? 'paused' : 'running';
}

/**
 * Phase spans, pauses and resumes from the phase changes of the history. A resume is a change from a
 * paused phase to a working one: recorded by SubagentStart as `event: resumed` with the agent's id, which is
 * an agent seen before when SendMessage continued it and a new one when a delegation got the brief.
 */
function walkHistory(record: SessionRecord, created: number, rules: ResumeRules, facts: SessionFacts): void {
  const agents = new Set<string>();
  let since = created;
  for (const entry of record.history) {
    const agent = typeof entry.claude_agent_id === 'string' ? entry.claude_agent_id : undefined;
    const at = parseTimestamp(entry.timestamp);
    const from = entry.from_phase;
    if (at !== undefined && from !== entry.to_phase) {
      if (from !== null && at >= since) facts.phaseMs[from] = (facts.phaseMs[from] ?? 0) + (at - since);
      if (isResumablePhase(entry.to_phase)) facts.paused = true;
      if (from !== null && isResumablePhase(from)) noteEndOfPause(entry.to_phase, from, at - since, agent, agents);
      since = at;
    }
    if (agent !== undefined) agents.add(agent);
  }

  function noteEndOfPause(to: Phase, from: Phase, waitedMs: number, agent: string | undefined, seen: Set<string>) {
    if (isResumablePhase(to)) return;
    if (isFinalPhase(to)) {
      // Ended while paused: it expired when nobody came back within its window.
      if (waitedMs > resumeWindowMs(rules, from)) facts.expired = true;
      return;
    }
    if (agent === undefined) facts.otherResumes += 1;
    else if (seen.has(agent)) facts.sameAgent += 1;
    else facts.newAgent += 1;
  }
}

/**
 * The record keeps the transcript path of its latest agent only (`claude.agent_transcript_path`) and the
 * ids of all its agents (`claude.agent_ids`). Claude Code writes a subagent's transcript as
 * `<project>/<conversation>/subagents/agent-<id>.jsonl`, so each earlier agent's is looked for beside the
 * latest one and under each conversation the record names (the current one and those of its resume
 * decisions). An agent of a conversation it no longer names (the session moved to another conversation by
 * a brief, which keeps no trace of the earlier one) is searched for in the project's directory.
 */
function transcriptCandidates(record: SessionRecord): AgentTranscript[] {
  const claude = record.claude;
  if (!claude) return [];
  const latest = typeof claude.agent_transcript_path === 'string' ? claude.agent_transcript_path : null;
  const main = typeof claude.transcript_path === 'string' ? claude.transcript_path : null;
  const projects = new Set<string>();
  if (main) projects.add(dirname(main));
  if (latest) projects.add(dirname(dirname(dirname(latest))));
  const conversations = new Set<string>();
  if (typeof claude.session_id === 'string') conversations.add(claude.session_id);
  for (const entry of record.history)
    if (typeof entry.claude_session_id === 'string') conversations.add(entry.claude_session_id);
  const dirs = new Set<string>();
  if (latest) dirs.add(dirname(latest));
  for (const project of projects)
    for (const c of conversations) if (AGENT_ID.test(c)) dirs.add(join(project, c, 'subagents'));
  const ids = Array.isArray(claude.agent_ids) ? claude.agent_ids : [];
  const agents = ids.filter((id): id is string => typeof id === 'string' && AGENT_ID.test(id));
  const searched = [...projects];
  const candidates: AgentTranscript[] = agents.map((agent) => ({
    agent,
    paths: [...dirs].map((dir) => join(dir, `agent-${agent}.jsonl`)),
    projects: searched,
  }));
  // A record from before agent_ids was kept, or a transcript named otherwise: its latest path still counts.
  if (latest && !candidates.some(({ paths }) => paths.includes(latest)))
    candidates.push({ agent: null, paths: [latest], projects: [] });
  return candidates;
}
