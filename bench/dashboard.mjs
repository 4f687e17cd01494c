// The dashboard on a store of 10,000 sessions (trees of depth 4), in Debian's chromium through
// puppeteer-core: the page's first render (navigation to the tree painted) and the live update
// latency (an `agent-session update` to the changed badge on the page, through the audit trail and SSE).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadSerializer, writeStore } from './lib/fixtures.mjs';
import { median, round, target } from './lib/measure.mjs';

export const name = 'dashboard';
export const title = 'agent-session dashboard in chromium, 10,000 sessions';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SIZE = 10_000;
const LATENCY_TARGET_MS = 500;

export async function run({ dist, cli, tmp, quick, env }) {
  if (!existsSync(CHROMIUM)) return { skipped: `no chromium at ${CHROMIUM}` };
  if (!existsSync(path.join(dist, 'tools', 'dashboard', 'dashboard-server.js')))
    return { skipped: 'no dashboard in the build' };
  const { default: puppeteer } = await import('puppeteer-core');
  const dir = path.join(tmp, 'store');
  writeStore(await loadSerializer(dist), dir, SIZE, { shape: 'trees', index: true });

  const started = performance.now();
  const server = await startServer(cli, dir, env);
  const serverStart = performance.now() - started;
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    const renders = [];
    for (let i = 0; i < (quick ? 3 : 7) + 1; i++) {
      await page.goto(server.url, { waitUntil: 'domcontentloaded' });
      // The page marks the frame that first paints the tree; its time counts from the navigation's start.
      const handle = await page.waitForFunction(() => performance.getEntriesByName('tree-painted')[0]?.startTime, {
        timeout: 30_000,
      });
      const ms = await handle.jsonValue();
      if (i > 0) renders.push(ms);
    }
    await page.waitForFunction(() => document.getElementById('live').textContent === 'live');
    const rows = await page.$$eval('#tree > .row', (els) => els.length);

    const id = await page.$eval('#tree > .row .phase:is([data-phase=planning],[data-phase=investigating])', (el) =>
      el.closest('.row').getAttribute('data-row'),
    );
    const fromStart = [];
    const fromExit = [];
    for (let i = 0; i < (quick ? 10 : 20) + 1; i++) {
      const phase = i % 2 === 0 ? 'executing' : 'planning';
      const seen = page.waitForFunction(
        (sel, want) => document.querySelector(sel)?.textContent === want && Date.now(),
        { polling: 'mutation', timeout: 10_000 },
        `#tree [data-row="${id}"] > .line .phase`,
        phase,
      );
      const before = Date.now();
      const exit = await runCli(cli, ['update', id, '--phase', phase, '--dir', dir], env);
      const at = await (await seen).jsonValue();
      if (i === 0) continue;
      fromStart.push(at - before);
      fromExit.push(at - exit);
    }
    // What one refresh of the stats cards costs the server (computeStats over the store, for the day
    // and the week): the page asks for it at most every 2 s after changes.
    const statsMs = [];
    for (let i = 0; i < (quick ? 3 : 5) + 1; i++) {
      const ms = await page.evaluate(async (token) => {
        const t0 = performance.now();
        const res = await fetch('/api/stats', { headers: { 'X-Agent-Session-Token': token }, cache: 'no-store' });
        await res.json();
        return performance.now() - t0;
      }, new URL(server.url).searchParams.get('token'));
      if (i > 0) statsMs.push(ms);
    }
    const render = median(renders);
    const latency = median(fromExit);
    return {
      figures: [
        { label: 'server start (store of 10,000 read, URL printed)', value: round(serverStart, 1), unit: 'ms' },
        { label: 'first render: navigation to tree painted (median)', value: round(render, 1), unit: 'ms' },
        { label: 'rows on the first page of the tree', value: rows, unit: '' },
        { label: 'update latency: CLI exit to badge changed (median)', value: round(latency, 1), unit: 'ms' },
        {
          label: 'update latency: CLI start to badge changed (median)',
          value: round(median(fromStart), 1),
          unit: 'ms',
        },
        { label: 'update latency samples', value: fromExit.length, unit: '' },
        { label: 'stats cards: GET /api/stats, day and week (median)', value: round(median(statsMs), 1), unit: 'ms' },
      ],
      targets: [target('update latency (CLI exit to badge) / 500 ms', latency / LATENCY_TARGET_MS, 1)],
    };
  } finally {
    await browser.close();
    await server.stop();
  }
}

function startServer(cli, dir, env) {
  const child = spawn(process.execPath, [cli, 'dashboard', '--json', '--dir', dir], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.stdout.setEncoding('utf8').on('data', (d) => {
      stdout += d;
      if (!stdout.includes('\n')) return;
      const { url } = JSON.parse(stdout);
      resolve({ url, stop: () => (child.kill('SIGTERM'), exited) });
    });
    exited.then((code) => reject(new Error(`the dashboard exited (${code}): ${stderr}`)));
  });
}

/** Runs the CLI to completion; resolves the time (Date.now()) it exited. */
function runCli(cli, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('close', (code) =>
      code === 0 ? resolve(Date.now()) : reject(new Error(`agent-session ${args.join(' ')}: ${code} ${stderr}`)),
    );
  });
}
