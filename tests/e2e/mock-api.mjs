// A scripted Anthropic Messages API on 127.0.0.1 for driving the real Claude Code CLI offline.
//
//   const api = await startMockApi({ script: (req) => ({ text: 'hi' }) });
//   ... run claude with ANTHROPIC_BASE_URL=api.url ...
//   api.requests  // every request received, classified
//   await api.close();
//
// `script(req)` is called for every model turn of the main agent or a subagent and returns
// a reply: { text } | { toolUse: { name, input, id? } } | { content: [block, ...] }
// where a block is { type: 'text', text } or { type: 'tool_use', name, input, id? }.
// Optional: stopReason, usage (the message's token figures, merged over the defaults), delayMs (answer
// that much later, as a real model takes its time),
// streamGapMs (stream each further content block that much later, as a real model writing long tool
// inputs does), or { error: { status, type, message } } to answer with an API error.
// Each request passed to the script (and kept in `requests`) is
//   { seq, at, method, url, pathname, query, headers, body, agentId, kind }
// with kind 'main' | 'subagent' | 'side'; the helpers below read it.
// Side requests (anything that is neither a main-agent nor a subagent turn, e.g. a title
// generation or quota probe without tools) get a short text without reaching the script
// unless `scriptSideRequests: true`. With CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
// Claude Code 2.1.330 sent none in our runs (see NOTES.md).
import { createServer } from 'node:http';

let idCounter = 0;
const nextId = (prefix) => `${prefix}_mock${Date.now().toString(36)}${(idCounter++).toString(36)}`;

// ---------- classification helpers (usable by scripts on any recorded request) ----------

export const AGENT_ID_HEADER = 'x-claude-code-agent-id';

const toolNames = (req) => (req.body?.tools ?? []).map((t) => t.name);

/** The subagent id from the request header, or null for the main thread / side requests. */
export const agentIdOf = (req) => req.headers?.[AGENT_ID_HEADER] ?? null;

/** A model turn of a subagent (the CLI tags its requests with the agent id header). */
export const isSubagent = (req) => isMessages(req) && agentIdOf(req) !== null;

/** A model turn of the main agent: it offers the Agent (formerly Task) tool and has no agent id. */
export const isMainAgent = (req) =>
  isMessages(req) && agentIdOf(req) === null && toolNames(req).some((n) => n === 'Agent' || n === 'Task');

/** Anything else: side calls such as title generation or quota probes. */
export const isSideRequest = (req) => !isMainAgent(req) && !isSubagent(req);

export const kindOf = (req) => (isMainAgent(req) ? 'main' : isSubagent(req) ? 'subagent' : 'side');

function isMessages(req) {
  return req.method === 'POST' && req.pathname === '/v1/messages' && Array.isArray(req.body?.messages);
}

/** The last message with role "user" (a prompt or tool results), or null. */
export function lastUserMessage(req) {
  const msgs = req.body?.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i].role === 'user') return msgs[i];
  return null;
}

const blocksOf = (message) =>
  typeof message?.content === 'string' ? [{ type: 'text', text: message.content }] : (message?.content ?? []);

/** Flattens tool_result / message content (string or blocks) to plain text. */
export function contentText(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join('');
}

/** Concatenated text blocks of the last user message ('' if none). */
export const lastUserText = (req) =>
  blocksOf(lastUserMessage(req))
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n');

/** tool_result blocks of the last user message as { toolUseId, text, isError, raw }. */
export function toolResults(req) {
  return blocksOf(lastUserMessage(req))
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({ toolUseId: b.tool_use_id, text: contentText(b.content), isError: b.is_error === true, raw: b }));
}

/** The first tool_result of the last user message, or null. */
export const lastToolResult = (req) => toolResults(req)[0] ?? null;

/** All tool_use blocks the model made so far in this conversation (assistant history). */
export function toolUsesInHistory(req) {
  return (req.body?.messages ?? [])
    .filter((m) => m.role === 'assistant')
    .flatMap(blocksOf)
    .filter((b) => b.type === 'tool_use');
}

/** The tool_use (from history) that a given tool_result answers. */
export const toolUseFor = (req, result) => toolUsesInHistory(req).find((u) => u.id === result?.toolUseId) ?? null;

/**
 * The subagent id in the text of an Agent tool_result as the main agent sees it:
 * "...agentId: a1b2c3d4e5f6a7b8c (use SendMessage with to: '...' ...)". Null if absent.
 */
export const agentIdInText = (text) => /agentId: ([\w-]+)/.exec(text ?? '')?.[1] ?? null;

/** A main-agent turn triggered by a background task finishing (<task-notification> prompt). */
export const isTaskNotification = (req) => lastUserText(req).includes('<task-notification>');

/** Every text of the conversation (system + all messages), for marker searches. */
export function allText(req) {
  const system = Array.isArray(req.body?.system) ? contentText(req.body.system) : (req.body?.system ?? '');
  const msgs = (req.body?.messages ?? []).flatMap(blocksOf).map((b) => b.text ?? contentText(b.content));
  return [system, ...msgs].join('\n');
}

// ---------- SSE encoding ----------

function normalizeReply(reply) {
  if (reply.content) return reply.content;
  if (reply.toolUse) return [{ type: 'tool_use', ...reply.toolUse }];
  return [{ type: 'text', text: reply.text ?? '' }];
}

function sse(event, data) {
  return `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
}

function blockEvents(block, index) {
  if (block.type === 'tool_use') {
    const start = { type: 'tool_use', id: block.id ?? nextId('toolu'), name: block.name, input: {} };
    const json = JSON.stringify(block.input ?? {});
    return [
      sse('content_block_start', { index, content_block: start }),
      sse('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: json } }),
      sse('content_block_stop', { index }),
    ];
  }
  return [
    sse('content_block_start', { index, content_block: { type: 'text', text: '' } }),
    sse('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }),
    sse('content_block_stop', { index }),
  ];
}

const USAGE = { input_tokens: 12, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

function defaultStopReason(blocks) {
  return blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
}

/** The stream in parts: the start with the first block, each further block, the end. */
function streamParts(blocks, model, stopReason, usage) {
  const message = {
    id: nextId('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...usage, output_tokens: 1 },
  };
  const parts = blocks.map((block, index) => blockEvents(block, index).join(''));
  parts[0] = sse('message_start', { message }) + (parts[0] ?? '');
  parts.push(
    sse('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage }) + sse('message_stop', {}),
  );
  return parts;
}

function jsonMessage(blocks, model, stopReason, usage) {
  const content = blocks.map((b) =>
    b.type === 'tool_use' ? { type: 'tool_use', id: b.id ?? nextId('toolu'), name: b.name, input: b.input ?? {} } : b,
  );
  return {
    id: nextId('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}

// ---------- server ----------

function readBody(httpReq) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    httpReq.on('data', (c) => chunks.push(c));
    httpReq.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    httpReq.on('error', reject);
  });
}

function parseJson(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': nextId('req') });
  res.end(JSON.stringify(body));
}

function sendError(res, { status = 500, type = 'api_error', message = 'mock error' }) {
  sendJson(res, status, { type: 'error', error: { type, message } });
}

function sendMessage(res, req, reply) {
  if (reply.error) return sendError(res, reply.error);
  const blocks = normalizeReply(reply);
  const model = req.body.model ?? 'claude-mock';
  const stopReason = reply.stopReason ?? defaultStopReason(blocks);
  const usage = { ...USAGE, ...reply.usage };
  if (!req.body.stream) return sendJson(res, 200, jsonMessage(blocks, model, stopReason, usage));
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': nextId('req') });
  const parts = streamParts(blocks, model, stopReason, usage);
  if (!reply.streamGapMs) return res.end(parts.join(''));
  // Each further block streamed streamGapMs later, as a real model takes seconds to write a long tool input.
  const next = (i) =>
    i === parts.length - 1
      ? res.end(parts[i])
      : (res.write(parts[i]), setTimeout(() => next(i + 1), reply.streamGapMs));
  next(0);
}

function decide(req, script, scriptSideRequests, sideReply) {
  if (req.kind === 'side' && !scriptSideRequests) return sideReply;
  try {
    return script(req) ?? sideReply;
  } catch (err) {
    // A script bug must be visible in the test, not hang the CLI on retries.
    req.scriptError = err;
    return { text: `MOCK SCRIPT ERROR: ${err.message}` };
  }
}

function route(req, res, options) {
  // Connectivity probe; only sent when CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is unset.
  if (req.pathname === '/api/hello') return sendJson(res, 200, {});
  if (req.pathname === '/v1/messages/count_tokens') {
    return sendJson(res, 200, { input_tokens: 100 });
  }
  if (req.method === 'POST' && req.pathname === '/v1/messages') {
    const reply = decide(req, options.script, options.scriptSideRequests, options.sideReply);
    req.reply = reply;
    // A model's time to answer, where a scenario depends on it being realistic (over a second).
    if (reply.delayMs) return void setTimeout(() => sendMessage(res, req, reply), reply.delayMs);
    return sendMessage(res, req, reply);
  }
  if (options.log) options.log(`mock-api: unhandled ${req.method} ${req.url}`);
  return sendError(res, {
    status: 404,
    type: 'not_found_error',
    message: `mock: no route ${req.method} ${req.pathname}`,
  });
}

/**
 * Starts the mock on 127.0.0.1 (random port).
 * @param {object} o
 * @param {(req) => object} o.script  decides each model turn's reply
 * @param {boolean} [o.scriptSideRequests=false]  also pass side requests to the script
 * @param {object} [o.sideReply={text:'OK'}]  reply for side requests
 * @param {(line: string) => void} [o.log]  receives a line for each unhandled endpoint
 */
export async function startMockApi({ script, scriptSideRequests = false, sideReply = { text: 'OK' }, log } = {}) {
  if (typeof script !== 'function') throw new TypeError('startMockApi: script must be a function');
  const requests = [];
  const options = { script, scriptSideRequests, sideReply, log };

  const server = createServer(async (httpReq, res) => {
    const raw = await readBody(httpReq).catch(() => '');
    const url = new URL(httpReq.url, 'http://127.0.0.1');
    const req = {
      seq: requests.length,
      at: Date.now(),
      method: httpReq.method,
      url: httpReq.url,
      pathname: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: httpReq.headers,
      body: parseJson(raw),
    };
    req.agentId = agentIdOf(req);
    req.kind = kindOf(req);
    requests.push(req);
    route(req, res, options);
  });

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    /** Errors thrown by the script (also visible on each request as `scriptError`). */
    scriptErrors: () => requests.filter((r) => r.scriptError).map((r) => r.scriptError),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
