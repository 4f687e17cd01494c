// The status line a subagent ends its final message with (SESSION_README.md, "The status line").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadLibrary } from './helpers/run.mjs';

const { parseStatusLine, buildResumeBrief, buildFooter } = await loadLibrary();

test('the status line is read from the last non-empty lines, decorations tolerated', () => {
  const cases = [
    ['Done.\nsession-phase: approval', 'approval'],
    ['Done.\n\nSESSION-PHASE: Investigating\n\n', 'investigating'],
    ['Done.\n**session-phase: planning**', 'planning'],
    ['Done.\n`session-phase: failed`', 'failed'],
    ['Done.\n> session-phase: completed.', 'completed'],
    ['session-phase: approval\nline 2\nline 3\nline 4', null],
    ['Done.\nsession-phase: executing', null],
    ['We discussed the session-phase: approval idea.', null],
    ['Done.\nsession-phase: approval (waiting for a decision)', 'approval'],
    ['Done.\nsession-phase: investigating - the logs are next', 'investigating'],
    ['Done.\nsession-phase: approvalish', null],
    ['Done.\nsession-phase: approval: ask Bob', 'approval'],
    ['Done.\nsession-phase: approval, waiting for Bob', 'approval'],
    ['Done.\nsession-phase: planning; step 2 next', 'planning'],
    ['Done.\nsession-phase: approval-ish', null],
    ['', null],
    [null, null],
  ];
  for (const [message, phase] of cases) assert.equal(parseStatusLine(message).phase, phase, JSON.stringify(message));
});

test('the footer names the session and the status line; the brief is deterministic and bounded', () => {
  const footer = buildFooter('agent-20261122-141500-1a2b3c4d');
  assert.match(
    footer,
    new RegExp(
      'agent-20261122-141500-1a2b3c4d[\\s\\S]*session-phase: <phase>' +
        '[\\s\\S]*agent-session update agent-20261122-141500-1a2b3c4d --phase',
    ),
  );
  assert.ok(footer.length < 500);
  const record = {
    agent_id: 'agent-20261122-141500-1a2b3c4d',
    agent_name: 'reviewer',
    purpose: 'Review',
    phase: 'approval',
    metadata: { big: 'x'.repeat(10_000) },
    history: Array.from({ length: 50 }, (_, i) => ({
      from_phase: 'executing',
      to_phase: 'approval',
      timestamp: `2026-11-22T14:${String(i).padStart(2, '0')}:00.000Z`,
    })),
    error_count: 1,
    last_error: { message: 'e'.repeat(5000), timestamp: '2026-11-22T14:00:00.000Z' },
    claude: { last_message: 'm'.repeat(50_000) },
  };
  const brief = buildResumeBrief(record);
  assert.equal(buildResumeBrief(structuredClone(record)), brief);
  assert.ok(brief.length <= 5000, String(brief.length));
  assert.match(brief, /Phase history:\n(- .*\n){8}/);
});
