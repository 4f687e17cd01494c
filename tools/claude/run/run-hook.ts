import { SessionError } from '../../errors.js';
import { JsonTooDeepError, parseJson } from '../../json.js';
import { isPlainObject, type JsonObject } from '../../merge-patch.js';
import { isLegacy, type LegacyFailureReason } from '../payload.js';
import { readStdin, STDIN_MAX_BYTES, writeAllSync, type StdinResult } from '../../stdio.js';
import { HookRun } from './hook-process.js';

/** What makes one hook executable: its name, its payloads, their handler and its protocol. */
export interface HookSpec<Input, Outcome extends { kind: string }> {
  name: string;
  /** Parses the payload once: a Claude Code event, or the legacy format (throws EINVALID). */
  parse(payload: JsonObject): Input;
  /** Dispatches the input to its event handler. */
  handle(run: HookRun, input: Input): Promise<Outcome>;
  /** What a caller using the legacy format is told when its payload cannot be handled. */
  legacyFailure(reason: LegacyFailureReason, detail: string): Outcome;
  /** The one place an outcome becomes stdout (an exhaustive switch): null prints nothing. */
  answer(outcome: Outcome): object | null;
  /** Runs once the answer is written (never throws). */
  afterAnswer?(run: HookRun, outcome: Outcome): Promise<void>;
}

/**
 * Runs a hook process: read stdin, parse, dispatch, answer. Fails open: any problem is one line in
 * the store's hook log and no output, so Claude Code proceeds as if the hook were absent. Returns
 * whether everything is written (then the process may exit at once).
 */
export async function runHook<Input, Outcome extends { kind: string }>(
  hook: HookSpec<Input, Outcome>,
): Promise<boolean> {
  const run = new HookRun(hook.name, process.env, process.cwd());
  // Serialized inside the chain: a failure there is logged like any other, not lost.
  const answered = await readStdin()
    .then((stdin) => respond(run, hook, stdin))
    .catch(async (err) => {
      await run.problem(err);
      return null;
    });
  const written = [answered?.output ? writeAllSync(1, answered.output) : true];
  if (answered && hook.afterAnswer) await hook.afterAnswer(run, answered.outcome);
  run.finished(answered?.outcome.kind);
  if (run.diagnostics.length > 0) written.push(writeAllSync(2, `${run.diagnostics.join('\n')}\n`));
  return written.every(Boolean);
}

async function respond<Input, Outcome extends { kind: string }>(
  run: HookRun,
  hook: HookSpec<Input, Outcome>,
  stdin: StdinResult,
): Promise<{ outcome: Outcome; output: string | null }> {
  const outcome = await dispatch(run, hook, stdin);
  const answer = hook.answer(outcome);
  return { outcome, output: answer && `${JSON.stringify(answer)}\n` };
}

/** Problems with a Claude Code payload throw (the hook fails open); a legacy caller gets an answer. */
async function dispatch<Input, Outcome extends { kind: string }>(
  run: HookRun,
  hook: HookSpec<Input, Outcome>,
  stdin: StdinResult,
): Promise<Outcome> {
  if (!stdin.ok)
    throw new SessionError('EINVALID', `stdin is ${stdin.bytes}+ bytes, over the ${STDIN_MAX_BYTES}-byte cap`);
  const json = parsePayload(stdin.text);
  // Not a JSON object: Claude Code always sends one, so this is a legacy caller unless CLAUDECODE=1 says otherwise.
  if (!json.ok || !isPlainObject(json.value)) {
    const error = json.ok ? new SessionError('EINVALID', 'the payload is not a JSON object') : json.error;
    if (run.underClaude) throw error;
    await run.problem(error);
    return hook.legacyFailure('invalid_json', error.message);
  }
  const payload = json.value;
  run.event = typeof payload.hook_event_name === 'string' ? payload.hook_event_name : 'legacy';
  try {
    const outcome = await hook.handle(run, hook.parse(payload));
    if (outcome.kind !== 'none' && outcome.kind !== 'ignored') markRunWorthCaching();
    return outcome;
  } catch (err) {
    if (!isLegacy(payload)) throw err;
    await run.problem(err);
    return hook.legacyFailure('error', err instanceof Error ? err.message : String(err));
  }
}

type JsonResult = { ok: true; value: unknown } | { ok: false; error: SessionError };

function parsePayload(text: string): JsonResult {
  try {
    return { ok: true, value: parseJson(text) };
  } catch (err) {
    // Deep nesting would overflow the stack later (writing the answer), outside any catch.
    if (err instanceof JsonTooDeepError)
      return { ok: false, error: new SessionError('EINVALID', `stdin is ${err.message}`, { cause: err }) };
    const what = text.trim() === '' ? 'stdin is empty' : `stdin is not valid JSON (${(err as Error).message})`;
    return { ok: false, error: new SessionError('EINVALID', what, { cause: err }) };
  }
}

/**
 * Tells the launcher (scripts/launcher.cjs) that this run did a hook's real work (a delegation
 * recorded, an event applied). V8's code cache holds what the run that wrote it compiled, so the
 * launcher writes it only after such a run: a first run that merely ignored an event would otherwise
 * leave every later run compiling most of the library anew.
 */
function markRunWorthCaching(): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for('agent-session.run-worth-caching')] = true;
}
