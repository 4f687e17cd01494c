// A dashboard server run as the built CLI's child process, for the HTTP and browser tests.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { CLI, cleanEnv } from './run.mjs';
import { until } from './poll.mjs';

/**
 * Starts `agent-session dashboard` on the store `dir`; resolves {url, port, token, origin, child, stop()}
 * once it has printed its URL. `stop()` sends SIGTERM and resolves the exit code. `env` adds to the child's.
 */
export async function startDashboard(t, dir, args = [], env = {}) {
  const child = spawn(process.execPath, [CLI, '--dir', dir, 'dashboard', '--json', ...args], {
    cwd: path.dirname(dir),
    env: cleanEnv({ HOME: path.dirname(dir), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr })));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  t.after(stop);
  await until(() => stdout.includes('\n'), 'the dashboard URL', { running: exited });
  const { url, port } = JSON.parse(stdout);
  const token = new URL(url).searchParams.get('token');
  return { url, port, token, origin: `http://127.0.0.1:${port}`, child, stop, stderr: () => stderr };
}

/**
 * One HTTP request with full control of its headers (fetch would set Host and Origin itself):
 * resolves {status, headers, body, json}.
 */
export function request(port, pathname, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathname, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d) => (text += d));
      res.on('end', () => {
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode, headers: res.headers, body: text, json });
      });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * The events of the server's event stream until `done(events)` says enough; rejects after `timeoutMs`
 * (a missing event fails the test instead of stalling it).
 */
export function collectEvents(port, token, done, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`no such event within ${timeoutMs} ms`));
    }, timeoutMs);
    const req = http.get({ host: '127.0.0.1', port, path: `/api/events?token=${token}` }, (res) => {
      const events = [];
      let buffer = '';
      res.setEncoding('utf8').on('data', (d) => {
        buffer += d;
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop();
        for (const block of blocks) {
          const fields = Object.fromEntries(
            block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
          );
          events.push(fields);
        }
        if (done(events, res.headers)) {
          clearTimeout(timer);
          req.destroy();
          resolve({ events, headers: res.headers });
        }
      });
      // The server ended the stream (it stops): what came so far.
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ events, headers: res.headers, ended: true });
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
