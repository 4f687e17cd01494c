// Hooks registered twice (a user install and a project install at once, say) run twice on every
// event, with the same payload: each delegation still gets one session, changed once per event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flow, hookLog, life, pre, project, sessionIds, readSession } from './helpers/hooks.mjs';

/** Runs each payload through its hook twice in a row, as Claude Code does with two registrations. */
async function twice(proj, steps) {
  const answers = [];
  for (const [hook, payload] of steps) {
    const first = await hook(proj, payload);
    const second = await hook(proj, payload);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(second.code, 0, second.stderr);
    answers.push([first.stdout, second.stdout]);
  }
  return answers;
}

for (const background of [false, true]) {
  test(`a ${background ? 'background' : 'foreground'} delegation every hook sees twice: one session`, async (t) => {
    const proj = project(t);
    const f = flow({ background });
    const order = background
      ? [
          [pre, f.pre],
          [life, f.post],
          [life, f.start],
          [life, f.stop('Done.')],
        ]
      : [
          [pre, f.pre],
          [life, f.start],
          [life, f.stop('Done.')],
          [life, f.post],
        ];
    const answers = await twice(proj, order);
    // Both runs of pre_delegate answer the same: the same session in the same footer.
    assert.match(answers[0][0], /Your session: agent-/);
    assert.equal(answers[0][1], answers[0][0]);
    const ids = sessionIds(proj.store);
    assert.equal(ids.length, 1, `sessions: ${ids.join(', ')}`);
    const record = readSession(proj.store, ids[0]);
    assert.equal(record.phase, 'completed');
    assert.deepEqual(
      record.history.map((h) => h.event),
      ['started', 'finalized'],
    );
    assert.equal(hookLog(proj.store), '');
  });
}

test('a pause reported in a stop seen twice pauses the session once', async (t) => {
  const proj = project(t);
  const f = flow({ background: false });
  await twice(proj, [
    [pre, f.pre],
    [life, f.start],
    [life, f.stop('Waiting for a decision.\nsession-phase: approval')],
    [life, f.post],
  ]);
  const ids = sessionIds(proj.store);
  assert.equal(ids.length, 1);
  const record = readSession(proj.store, ids[0]);
  assert.equal(record.phase, 'approval');
  assert.deepEqual(
    record.history.map((h) => `${h.event} ${h.to_phase}`),
    ['started executing', 'stopped approval'],
  );
});
