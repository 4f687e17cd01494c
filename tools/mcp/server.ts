import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod';
import { SessionError, toSessionError } from '../errors.js';
import { Sessions } from '../sessions.js';
import { McpSessions } from './context.js';
import { Tokens } from './token.js';
import { TOOLS, type ToolDef } from './tools.js';

export interface McpServerOptions {
  /** The store directory (`--dir`); else found from the environment as the CLI finds it. */
  dir?: string;
  cwd: string;
  env: Record<string, string | undefined>;
  version: string;
}

/** Progress is sent at most this often. */
const PROGRESS_EVERY_MS = 200;

const INSTRUCTIONS =
  'Sessions of Claude Code subagents (agent-session). scope defaults to "conversation": the sessions of ' +
  'this Claude Code conversation only; "project" widens it to every session of the project, and is ' +
  'needed to change a session of another conversation. delete_session and cleanup_sessions preview ' +
  'first and act only when called again with the confirm_token of the preview.';

/** The server, its tools registered; the caller connects it to a transport. */
export function createServer(options: McpServerOptions): Server {
  const server = new Server(
    { name: 'agent-session', version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  const tokens = new Tokens();
  const conversation = conversationId(options.env);
  // Opened on the first call, so that connecting reads nothing from disk.
  let sessions: McpSessions | undefined;
  const open = () =>
    (sessions ??= new McpSessions(
      Sessions.open({ dir: options.dir, cwd: options.cwd, env: options.env, actor: 'mcp' }),
      conversation,
    ));
  let listing: Tool[] | undefined;
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: (listing ??= TOOLS.map(describeTool)) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${JSON.stringify(request.params.name)}`);
    const token = request.params._meta?.progressToken;
    let last = 0;
    const progress = (done: number, total: number) => {
      const now = Date.now();
      if (token === undefined || (now - last < PROGRESS_EVERY_MS && done < total)) return;
      last = now;
      void extra
        .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: done, total } })
        .catch(() => undefined);
    };
    try {
      const args = parseArgs(tool, request.params.arguments ?? {});
      const confirm = (message: string) => ask(server, message, extra.signal);
      const result = await tool.run(args as never, {
        sessions: open(),
        tokens,
        signal: extra.signal,
        progress,
        confirm,
      });
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    } catch (err) {
      return toolError(err);
    }
  });
  return server;
}

/** A yes/no question to the person, through the client's form elicitation (see ToolCall.confirm). */
async function ask(server: Server, message: string, signal: AbortSignal) {
  if (!server.getClientCapabilities()?.elicitation) return 'unsupported' as const;
  try {
    const answer = await server.elicitInput(
      {
        message,
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', title: 'Go ahead' } },
          required: ['confirm'],
        },
      },
      { signal },
    );
    if (answer.action === 'accept')
      return answer.content?.confirm === true ? ('accept' as const) : ('decline' as const);
    return answer.action;
  } catch {
    return 'cancel' as const;
  }
}

/** The conversation that started the server (Claude Code sets it for its MCP servers), if any. */
function conversationId(env: Record<string, string | undefined>): string | null {
  const value = env.CLAUDE_CODE_SESSION_ID;
  return value && value.length <= 200 ? value : null;
}

function parseArgs(tool: ToolDef, raw: unknown): unknown {
  const parsed = tool.input.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? issue.path.join('.') : 'arguments';
  throw new SessionError('EINVALID', `${tool.name}: ${where}: ${issue.message}`, {
    details: { issues: parsed.error.issues.slice(0, 5).map((i) => ({ path: i.path.join('.'), message: i.message })) },
  });
}

/** A failure as an MCP tool error: the library's code, its message and details, as JSON text. */
function toolError(err: unknown): CallToolResult {
  const e = toSessionError(err, 'agent-session mcp');
  const details = clip(e.details) as Record<string, unknown>;
  const error = { code: e.code, message: clip(e.message), ...(Object.keys(details).length ? { details } : {}) };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }] };
}

/** A text in an error is cut to this many characters. */
const MAX_ERROR_TEXT = 300;

/** Cuts long strings: an error echoes what the model sent (a 100 KB id), and all of it lands in its context. */
function clip(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length > MAX_ERROR_TEXT ? `${value.slice(0, MAX_ERROR_TEXT)}… (${value.length} characters)` : value;
  if (Array.isArray(value)) return value.map(clip);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clip(v)]));
}

function describeTool(tool: ToolDef): Tool {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: jsonSchema(tool.input, 'input') as Tool['inputSchema'],
    outputSchema: jsonSchema(tool.output, 'output') as Tool['outputSchema'],
    annotations: {
      readOnlyHint: tool.readOnly,
      destructiveHint: tool.destructive,
    },
  };
}

/** The JSON Schema of a tool's input or output, without what only costs bytes of the model's context. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return compact(rest, io) as Record<string, unknown>;
}

const SAFE = Number.MAX_SAFE_INTEGER;

/** Drops the safe-integer bounds of every integer, string key names and what is the default anyway. */
function compact(node: unknown, io: 'input' | 'output'): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, io));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'minimum' && value === -SAFE) || (key === 'maximum' && value === SAFE)) continue;
    if (key === 'propertyNames') continue;
    // An open object's `{}` is the default; an output may grow fields, an input refuses unknown ones.
    if (key === 'additionalProperties' && (isEmpty(value) || (io === 'output' && value === false))) continue;
    out[key] = compact(value, io);
  }
  return out;
}

function isEmpty(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}
