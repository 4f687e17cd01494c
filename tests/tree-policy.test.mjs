// The pure rules behind delete and cleanup: records, a clock and settings in, a decision with reasons out.
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { DIST } from './helpers/run.mjs';

const { judgeSession, planCleanup } = await import(
  pathToFileURL(path.join(DIST, 'tools', 'policy', 'cleanup-plan.js')).href
);
const { planDelete, runningReason } = await import(
  pathToFileURL(path.join(DIST, 'tools', 'policy', 'tree-guard.js')).href
);

const NOW = Date.parse('2026-11-22T12:00:00Z');
const H = 3_600_000;
const RULES = {
  cutoffMs: 24 * H,
  runningMs: 10 * 60_000,
  resumeWindowMs: 30 * 60_000,
  stuckMs: 72 * H,
  clockSkewMs: 60_000,
};

function rec(id, phase, hoursAgo, parent = null) {
  const at = new Date(NOW - hoursAgo * H).toISOString();
  const final = ['completed', 'failed', 'abandoned'].includes(phase);
  return {
    agent_id: id,
    agent_name: 'w',
    phase,
    last_updated: at,
    created_at: at,
    parent_session_id: parent,
    metadata: {},
    history: [],
    ...(final ? { finalized_at: at, outcome: phase } : {}),
  };
}

test('judgeSession: a paused session is kept while the resume window of its phase lasts', () => {
  const rules = { ...RULES, phaseWindowsMs: { approval: 72 * H } };
  assert.equal(judgeSession(rec('a', 'approval', 48), NOW, rules).kind, 'recent');
  assert.equal(judgeSession(rec('a', 'approval', 73), NOW, rules).kind, 'purge');
  assert.equal(judgeSession(rec('a', 'planning', 48), NOW, rules).kind, 'purge');
});

test('judgeSession: final, paused, running, stuck, recent', () => {
  assert.equal(judgeSession(rec('a', 'completed', 25), NOW, RULES).kind, 'purge');
  assert.equal(judgeSession(rec('a', 'failed', 23), NOW, RULES).kind, 'recent');
  assert.equal(judgeSession(rec('a', 'approval', 25), NOW, RULES).kind, 'purge');
  assert.equal(judgeSession(rec('a', 'approval', 1), NOW, RULES).kind, 'recent');
  assert.equal(judgeSession(rec('a', 'executing', 30), NOW, RULES).kind, 'running');
  assert.equal(judgeSession(rec('a', 'initializing', 73), NOW, RULES).kind, 'abandon');
  assert.equal(judgeSession(rec('a', 'executing', 0.01), NOW, RULES).kind, 'recent');
  // A last_updated from the future beyond the clock skew is reported, never taken as recent forever nor purged.
  assert.equal(judgeSession(rec('a', 'completed', -2), NOW, RULES).kind, 'future');
  assert.equal(judgeSession(rec('a', 'completed', -0.01), NOW, RULES).kind, 'recent');
  const plan = planCleanup([rec('a', 'completed', -200)], [], NOW, RULES);
  assert.deepEqual([plan.purge.length, plan.skipped.map((s) => s.id)], [0, ['a']]);
  // With a zero cutoff, a session updated a minute ago is kept, not purged or abandoned; one paused just now is
  // said to be waiting, not running.
  const zero = { ...RULES, cutoffMs: 0, stuckMs: RULES.runningMs };
  assert.deepEqual(judgeSession(rec('a', 'planning', 1 / 60), NOW, zero), {
    kind: 'running',
    reason: 'paused (planning, updated 60 s ago)',
  });
  assert.deepEqual(judgeSession(rec('a', 'executing', 1 / 60), NOW, zero), {
    kind: 'running',
    reason: 'running (executing, updated 60 s ago)',
  });
});

test('planCleanup: whole subtrees only, protected by any live descendant; orphans judged as roots', () => {
  const records = [
    rec('p', 'completed', 48),
    rec('c1', 'completed', 48, 'p'),
    rec('g1', 'completed', 48, 'c1'),
    rec('c2', 'completed', 48, 'p'),
    rec('g2', 'executing', 0.01, 'c2'),
    rec('o', 'completed', 48, 'missing'),
    rec('o2', 'completed', 1, 'missing'),
  ];
  const plan = planCleanup(records, [], NOW, RULES);
  assert.deepEqual(
    plan.purge.map((r) => [r.id, r.ids, r.depths]),
    [
      ['c1', ['c1', 'g1'], [0, 1]],
      ['o', ['o'], [0]],
    ],
  );
  assert.deepEqual(plan.skipped.map((s) => s.id).sort(), ['c2', 'p']);
  assert.match(plan.skipped.find((s) => s.id === 'p').reason, /g2/);
  assert.deepEqual(
    plan.orphans.map((o) => [o.id, o.action.startsWith('purged')]),
    [
      ['o', true],
      ['o2', false],
    ],
  );
  assert.equal(plan.kept, 2);
  // An unreadable parent is present: its children are not orphans.
  assert.deepEqual(planCleanup([rec('k', 'completed', 48, 'bad')], [{ id: 'bad' }], NOW, RULES).orphans, []);
});

test('planDelete: running sessions block unless forced; --no-cascade blocks a parent even when forced', () => {
  const nodes = [
    { id: 'r', parent: null, depth: 0, record: rec('r', 'completed', 5) },
    { id: 'c', parent: 'r', depth: 1, record: rec('c', 'planning', 0.05, 'r') },
    { id: 'g', parent: 'c', depth: 2, record: rec('g', 'validating', 5, 'c') },
  ];
  const input = { cascade: true, force: false, now: NOW, runningMs: RULES.runningMs };
  const plan = planDelete(nodes, input);
  assert.deepEqual(
    plan.blocked.map((b) => b.id),
    ['c', 'g'],
  );
  assert.deepEqual(
    plan.order.map((n) => n.id),
    ['g', 'c', 'r'],
  );
  assert.deepEqual(plan.countsByDepth, { 0: 1, 1: 1, 2: 1 });
  const forced = planDelete(nodes, { ...input, force: true });
  assert.deepEqual(forced.blocked, []);
  assert.deepEqual(
    forced.forced.map((b) => b.id),
    ['c', 'g'],
  );
  assert.deepEqual(
    planDelete(nodes, { ...input, force: true, cascade: false }).blocked.map((b) => b.id),
    ['r'],
  );
  assert.equal(runningReason(rec('x', 'approval', 1), NOW, RULES.runningMs), null);
  assert.equal(runningReason(rec('x', 'failed', 0), NOW, RULES.runningMs), null);
});
