import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { followAudit } from '../audit/follow.js';
import { isSessionError, SessionError } from '../errors.js';
import type { Sessions } from '../sessions.js';
import { DashboardSessions } from './dashboard-sessions.js';
import { readPage } from './page-file.js';
import { SessionIndex } from './session-index.js';
import { EventHub } from './events.js';
import { PAGE_LIMIT, Views } from './views.js';

export interface DashboardOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  readOnly?: boolean;
  /** How often the audit trail is read for new entries (default 50 ms). */
  intervalMs?: number;
}

export interface Dashboard {
  url: string;
  /**
   * A URL for a browser opener's command line, which any local user can read (`ps`): it carries a code
   * good once, within a minute, that redirects to `url`, so the token itself never appears there.
   */
  launchUrl(): string;
  port: number;
  token: string;
  readOnly: boolean;
  /** Stops serving: ends the event streams, stops following the audit trail, closes the server. */
  close(): Promise<void>;
}

const TOKEN_HEADER = 'x-agent-session-token';
const BODY_LIMIT = 64 * 1024;

/**
 * Serves the dashboard for one store on 127.0.0.1. Every request needs the token and a loopback `Host`;
 * changes are POSTs from the page's own origin; nothing is cached; the page may load nothing from
 * the network (SESSION_README.md, "Dashboard").
 */
export async function startDashboard(base: Sessions, options: DashboardOptions = {}): Promise<Dashboard> {
  const sessions = new DashboardSessions(base);
  const index = new SessionIndex(sessions);
  index.load();
  const views = new Views(sessions, index);
  const token = randomBytes(32).toString('base64url');
  const page = readPage();
  const readOnly = options.readOnly ?? false;
  const hub = new EventHub();
  const stop = new AbortController();
  let port = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => sendError(res, err));
  });

  // Launch codes (launchUrl) not yet used, with when each stops being good.
  const launches = new Map<string, number>();

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const host = req.headers.host ?? '';
    // A browser leaves the port out of Host when it is the scheme's default.
    const names = [`127.0.0.1:${port}`, `localhost:${port}`, ...(port === 80 ? ['127.0.0.1', 'localhost'] : [])];
    if (!names.includes(host))
      return refuse(res, 403, 'host', `Host ${JSON.stringify(host)} is not this dashboard's address`);
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://127.0.0.1');
    } catch {
      return refuse(res, 400, 'url', 'the request names no valid path');
    }
    const launch = url.pathname === '/' ? url.searchParams.get('launch') : null;
    if (launch !== null && req.method === 'GET') {
      const until = launches.get(launch);
      launches.delete(launch);
      if (until === undefined || Date.now() > until)
        return refuse(res, 403, 'token', 'this launch link was used or is too old: open the URL the dashboard printed');
      res.writeHead(303, { ...BASE_HEADERS, Location: `/?token=${token}` });
      return res.end();
    }
    // The page and the event stream take the token from the URL (EventSource sends no headers); the rest
    // from the header the page's script sets, which another site's page cannot.
    const urlToken = url.pathname === '/' || url.pathname === '/api/events';
    const given = header(req, TOKEN_HEADER) ?? (urlToken ? (url.searchParams.get('token') ?? undefined) : undefined);
    if (given === undefined) return refuse(res, 401, 'token', 'the dashboard token is missing');
    if (!sameSecret(given, token)) return refuse(res, 403, 'token', 'the dashboard token is wrong');
    const action = ACTIONS.has(url.pathname);
    if (action && req.method !== 'POST') return refuse(res, 405, 'method', `${url.pathname} takes POST only`);
    if (!action && req.method !== 'GET') return refuse(res, 405, 'method', `${url.pathname} takes GET only`);
    if (action) {
      if (header(req, TOKEN_HEADER) === undefined)
        return refuse(res, 403, 'token', 'a change needs the token in its header');
      const origin = header(req, 'origin');
      if (origin !== `http://${host}`) return refuse(res, 403, 'origin', 'a change must come from the page itself');
      if (readOnly) return refuse(res, 403, 'read-only', 'this dashboard is read-only');
      const body = await readBody(req);
      return sendJson(res, 200, await act(url.pathname, body));
    }
    switch (url.pathname) {
      case '/':
        return sendPage(res);
      case '/api/events':
        return hub.add(req, res);
      case '/api/roots':
        return sendJson(res, 200, views.roots(offsetOf(url), limitOf(url)));
      case '/api/children':
        return sendJson(res, 200, views.children(param(url, 'id'), offsetOf(url), limitOf(url)));
      case '/api/rows':
        return sendJson(res, 200, views.rows(param(url, 'ids').split(',').slice(0, PAGE_LIMIT)));
      case '/api/session':
        return sendJson(res, 200, await views.detail(param(url, 'id')));
      case '/api/waiting':
        return sendJson(res, 200, await views.waiting(limitOf(url)));
      case '/api/trash':
        return sendJson(res, 200, await views.trash());
      case '/api/stats':
        return sendJson(res, 200, await views.stats());
      default:
        return sendError(res, new SessionError('ENOTFOUND', `no such page: ${url.pathname}`));
    }
  }

  function act(path: string, body: Record<string, unknown>) {
    switch (path) {
      case '/api/delete-preview':
        return views.previewDelete(body.id as string);
      case '/api/delete':
        return views.delete(body.id as string);
      default:
        return views.restore(body.target as string);
    }
  }

  function sendPage(res: ServerResponse) {
    const nonce = randomBytes(16).toString('base64');
    const config = JSON.stringify({ token, readOnly, pageSize: 50 }).replaceAll('<', '\\u003c');
    const html = page.replaceAll('__NONCE__', nonce).replace('__CONFIG__', () => config);
    res.writeHead(200, {
      ...BASE_HEADERS,
      'Content-Type': 'text/html; charset=utf-8',
      // Inline script and style only (this response's nonce), requests only to this server, no frames.
      'Content-Security-Policy':
        `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` +
        `connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    });
    res.end(html);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((err) => {
    throw listenError(err, options.port ?? 0);
  });
  port = (server.address() as AddressInfo).port;

  // The audit trail says which sessions changed: they are re-read and the pages told to re-fetch them.
  const following = followAudit(sessions, {
    signal: stop.signal,
    intervalMs: options.intervalMs ?? 50,
    onEntry: (entry) => {
      hub.queue(async () => {
        const changed = await index.refresh(entry.ids);
        hub.send({ action: entry.action, ids: changed, trash: TRASH_ACTIONS.has(entry.action) });
        // A restore (or import) records itself before its sessions are back: they are read again shortly.
        if (LATE_ACTIONS.has(entry.action)) hub.later(entry.ids, (ids) => index.refresh(ids));
      });
    },
  }).catch(() => undefined);

  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    launchUrl: () => {
      const code = randomBytes(16).toString('base64url');
      launches.set(code, Date.now() + 60_000);
      return `http://127.0.0.1:${port}/?launch=${code}`;
    },
    port,
    token,
    readOnly,
    close: async () => {
      stop.abort();
      hub.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections of the page would hold the close back.
      server.closeAllConnections();
      await closed;
      await following;
    },
  };
}

const ACTIONS = new Set(['/api/delete-preview', '/api/delete', '/api/restore']);
const TRASH_ACTIONS = new Set(['delete', 'restore', 'cleanup', 'recover', 'import']);
const LATE_ACTIONS = new Set(['restore', 'recover', 'import', 'import-recover']);
const BASE_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function param(url: URL, name: string): string {
  const value = url.searchParams.get(name);
  if (value === null || value === '') throw new SessionError('EINVALID', `${name} is needed`);
  return value;
}

function offsetOf(url: URL): number {
  return bounded(url.searchParams.get('offset'), 0, Number.MAX_SAFE_INTEGER, 0);
}

function limitOf(url: URL): number {
  return bounded(url.searchParams.get('limit'), 1, PAGE_LIMIT, 50);
}

function bounded(text: string | null, min: number, max: number, fallback: number): number {
  if (text === null) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new SessionError('EINVALID', `${text} is not a number from ${min}`);
  return Math.min(n, max);
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new SessionError('EINVALID', 'the request body is too large');
    chunks.push(chunk as Buffer);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    // Reported below, as any body that is not an object.
  }
  throw new SessionError('EINVALID', 'the request body is not a JSON object');
}

function sendJson(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { ...BASE_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

function refuse(res: ServerResponse, status: number, reason: string, message: string) {
  sendJson(res, status, { error: { code: 'EREFUSED', message, details: { reason } } });
}

const STATUS: Record<string, number> = {
  EINVALID: 400,
  ENOTFOUND: 404,
  EEXIST: 409,
  EFINAL: 409,
  EREFUSED: 409,
  ELOCKED: 423,
};

function sendError(res: ServerResponse, err: unknown) {
  if (res.headersSent) return void res.end();
  const e = isSessionError(err) ? err : new SessionError('EIO', err instanceof Error ? err.message : String(err));
  sendJson(res, STATUS[e.code] ?? 500, { error: { code: e.code, message: e.message, details: e.details } });
}

function listenError(err: unknown, port: number): SessionError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new SessionError('EREFUSED', `port ${port} is in use: choose another with --port, or leave it out`, {
      details: { port, reason: 'port_in_use' },
    });
  if (code === 'EACCES')
    return new SessionError('EREFUSED', `port ${port} needs privileges: choose one above 1023`, {
      details: { port, reason: 'port_denied' },
    });
  return new SessionError('EIO', `cannot listen on 127.0.0.1:${port}: ${String(err)}`, { cause: err });
}
