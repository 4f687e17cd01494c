// `agent-session stats --json` over 10,000 sessions, a tenth of them with an agent transcript (the one
// captured from Claude Code, tests/fixtures/transcripts/), the token cache warm, against `list --json` of
// the same store: both read every record; stats also checks each transcript against its cache entry.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadSerializer, writeStore } from './lib/fixtures.mjs';
import { interleaveSamples, median, round, runProcess, target } from './lib/measure.mjs';

export const name = 'stats';
export const title = 'agent-session stats --json, warm token cache, against list --json (whole processes)';

const SIZE = 10_000;
const WITH_TRANSCRIPT = 10;

export async function run({ dist, cli, tmp, quick, root, env }) {
  if (!existsSync(path.join(dist, 'tools', 'stats', 'stats.js'))) return { skipped: 'no stats in this build' };
  const serialize = await loadSerializer(dist);
  const store = path.join(tmp, 'store');
  const ids = writeStore(serialize, store, SIZE);
  const transcripts = giveTranscripts(serialize, store, ids, path.join(tmp, 'projects'), root);
  const stats = [cli, 'stats', '--json', '--dir', store];
  const list = [cli, 'list', '--json', '--dir', store];
  // Once, untimed after the cold run: the report is complete, so the timing measures real work.
  const cold = runProcess(stats, { env });
  const report = JSON.parse(cold.stdout);
  if (report.totals.sessions.started !== SIZE || report.transcripts.read !== transcripts) {
    throw new Error(
      `stats over ${store}: ${JSON.stringify(report.totals.sessions)} ${JSON.stringify(report.transcripts)}`,
    );
  }
  const warm = JSON.parse(runProcess(stats, { env }).stdout);
  if (warm.transcripts.bytes_read !== 0) throw new Error(`a warm run read ${warm.transcripts.bytes_read} bytes`);

  const samples = await interleaveSamples(
    { stats: () => runProcess(stats, { env }).ms, list: () => runProcess(list, { env }).ms },
    { runs: quick ? 5 : 15 },
  );
  const m = { stats: median(samples.stats), list: median(samples.list) };
  return {
    figures: [
      { label: `stats --json, ${SIZE} sessions, cold cache (one run)`, value: round(cold.ms, 1), unit: 'ms' },
      { label: `stats --json, ${SIZE} sessions, warm cache`, value: round(m.stats, 1), unit: 'ms' },
      { label: `list --json, ${SIZE} sessions`, value: round(m.list, 1), unit: 'ms' },
      { label: 'agent transcripts in the store', value: transcripts, unit: '' },
    ],
    targets: [target(`stats --json (warm) / list --json at ${SIZE} sessions`, m.stats / m.list, 2)],
  };
}

/** Every WITH_TRANSCRIPT-th session gets an agent and a copy of the captured transcript; returns how many. */
function giveTranscripts(serialize, store, ids, projects, root) {
  const fixture = readFileSync(path.join(root, 'tests', 'fixtures', 'transcripts', 'subagent-2.1.330.jsonl'));
  const conversation = 'b3c1f1e2-0000-4000-8000-000000000001';
  const dir = path.join(projects, '-bench-project', conversation, 'subagents');
  mkdirSync(dir, { recursive: true });
  let count = 0;
  ids.forEach((id, i) => {
    if (i % WITH_TRANSCRIPT !== 0) return;
    const agent = `a${i.toString(16).padStart(16, '0')}`;
    const transcript = path.join(dir, `agent-${agent}.jsonl`);
    writeFileSync(transcript, fixture);
    const file = path.join(store, id, 'state.json');
    const record = JSON.parse(readFileSync(file, 'utf8'));
    record.claude = {
      session_id: conversation,
      agent_id: agent,
      agent_ids: [agent],
      transcript_path: path.join(projects, '-bench-project', `${conversation}.jsonl`),
      agent_transcript_path: transcript,
    };
    writeFileSync(file, serialize(record));
    count += 1;
  });
  return count;
}
