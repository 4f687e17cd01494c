// The dashboard in a real browser: Debian's chromium, driven headless through puppeteer-core (no browser
// download). The page finds a session, shows a CLI change live, previews, cancels and confirms a delete,
// and restores the subtree from the trash. Screenshots are kept in the test's temp dir, whose path is printed.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { startDashboard } from './helpers/dashboard.mjs';
import { cliJson, tempDir } from './helpers/run.mjs';
import { build } from './helpers/trees.mjs';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
// In CI the browser is installed by .ci/run: its absence there is a failure, not a skip.
const skip = missing && process.env.CI !== 'true' ? `no chromium at ${CHROMIUM} (apt-get install chromium)` : false;

const ROOT = 'agent-20260101-000000-aaaaaaaa';
const CHILD = 'agent-20260101-000001-bbbbbbbb';
const OTHER = 'agent-20260101-000002-cccccccc';

test('the page shows the tree live, previews and confirms a delete, and restores it', { skip }, async (t) => {
  assert.ok(!missing, `no chromium at ${CHROMIUM}: .ci/run installs it`);
  const { default: puppeteer } = await import('puppeteer-core');
  const dir = path.join(tempDir(t, 'dashboard-browser-'), 'store');
  await build(dir, [
    { id: ROOT, agent: 'explorer', phase: 'planning', hoursAgo: 2 },
    { id: CHILD, parent: ROOT, phase: 'approval', hoursAgo: 1 },
    { id: OTHER, agent: 'builder', phase: 'investigating' },
  ]);
  // Kept after the test: the screenshots are its artefacts.
  const shots = mkdtempSync(path.join(tmpdir(), 'dashboard-screenshots-'));
  t.diagnostic(`screenshots: ${shots}`);
  const d = await startDashboard(t, dir);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  t.after(() => browser.close());
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const problems = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  const shot = (name) => page.screenshot({ path: path.join(shots, `${name}.png`) });
  const row = (id) => `#tree [data-row="${id}"]`;
  const badge = (id) => `${row(id)} > .line .phase`;

  await page.goto(d.url);
  await page.waitForSelector(badge(ROOT), { timeout: 10_000 });
  await page.waitForFunction(() => document.getElementById('live').textContent === 'live', { timeout: 10_000 });
  assert.equal(await page.$eval(badge(ROOT), (el) => el.textContent), 'planning');
  assert.match(await page.$eval(`${row(ROOT)} > .line`, (el) => el.textContent), /1 child(?!ren)/);
  assert.equal(await page.$(row(CHILD)), null, 'children come on expand');
  await page.click(`${row(ROOT)} > .line .toggle`);
  await page.waitForSelector(badge(CHILD));
  assert.deepEqual(await page.$$eval('#waiting [data-waiting]', (els) => els.map((el) => el.dataset.waiting)), [
    CHILD,
    OTHER,
    ROOT,
  ]);
  const cards = await page.$eval('#stats', (el) => el.textContent);
  assert.match(cards, /sessions\s*3/, cards);
  assert.doesNotMatch(cards, /not available/);
  assert.match(cards, /trash: 0 entries/);
  await shot('1-tree');

  // A change through the CLI reaches the badge within a second, with no reload.
  await page.evaluate(() => (window.notReloaded = true));
  await cliJson(dir, ['update', CHILD, '--phase', 'executing']);
  await page.waitForFunction(
    (sel) => document.querySelector(sel)?.textContent === 'executing',
    { timeout: 1000 },
    badge(CHILD),
  );
  assert.equal(await page.evaluate(() => window.notReloaded), true);
  assert.deepEqual(await page.$$eval('#waiting [data-waiting]', (els) => els.map((el) => el.dataset.waiting)), [
    OTHER,
    ROOT,
  ]);

  await page.click(`${row(ROOT)} > .line`);
  await page.waitForSelector(`#detail [data-detail="${ROOT}"]`);
  const detail = await page.$eval('#detail', (el) => el.textContent);
  assert.match(detail, /initializing -> planning/);
  assert.match(detail, /children \(1\)/);
  assert.match(detail, /create by api/);
  await shot('2-detail');

  await page.click('#delete-btn');
  await page.waitForSelector('#delete-preview');
  const preview = await page.$eval('#delete-preview', (el) => el.textContent);
  assert.match(preview, /Would delete 2 session\(s\), [\d,]+ bytes/);
  assert.match(preview, new RegExp(CHILD));
  // The running child blocks the delete: the preview says so and offers no confirmation.
  assert.match(preview, /Blocked: /);
  // and the way forward the CLI would give.
  assert.match(preview, new RegExp(`agent-session delete ${ROOT} --force-running`));
  assert.equal(await page.$('#delete-confirm'), null);
  await shot('3-blocked');
  await page.click('#delete-cancel');
  await page.waitForFunction(() => !document.getElementById('delete-preview'));
  await cliJson(dir, ['update', CHILD, '--phase', 'validating']);
  await cliJson(dir, ['finalize', CHILD, 'completed']);
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent === 'completed', {}, badge(CHILD));
  // The detail shows the child's change too (rendered again: the old delete button is gone).
  await page.waitForSelector('#detail .phase[data-phase="completed"]');

  await page.click('#delete-btn');
  await page.waitForSelector('#delete-confirm');
  assert.match(await page.$eval('#delete-preview', (el) => el.textContent), /Nothing blocks it/);
  await shot('4-preview');
  await page.click('#delete-confirm');
  await page.waitForFunction((sel) => !document.querySelector(sel), {}, row(ROOT));
  // The stats cards follow the delete too, still without a reload.
  await page.waitForFunction(() => /trash: 1 entry,/.test(document.getElementById('stats').textContent), {
    timeout: 5000,
  });
  assert.equal(await page.evaluate(() => window.notReloaded), true);
  assert.equal(await page.$(row(CHILD)), null);
  await page.waitForSelector(`#trash [data-root="${ROOT}"] button[data-restore]`);
  assert.match(await page.$eval(`#trash [data-root="${ROOT}"]`, (el) => el.textContent), /2 session\(s\)/);
  assert.deepEqual(
    (await cliJson(dir, ['list'])).sessions.map((s) => s.agent_id),
    [OTHER],
  );
  await shot('5-trash');

  await page.click(`#trash [data-root="${ROOT}"] button[data-restore]`);
  await page.waitForSelector(badge(ROOT));
  await page.waitForFunction(() => !document.querySelector('#trash [data-restore]'));
  assert.equal((await cliJson(dir, ['list'])).sessions.length, 3);
  const audit = await cliJson(dir, ['audit', '--session', ROOT]);
  assert.deepEqual(
    audit.entries.filter((e) => ['delete', 'restore'].includes(e.action)).map((e) => e.actor),
    ['dashboard', 'dashboard'],
  );
  await shot('6-restored');

  // A narrow window: one column, nothing of the header cut off.
  await page.setViewport({ width: 420, height: 800 });
  const narrow = await page.evaluate(() => ({
    columns: getComputedStyle(document.querySelector('main')).gridTemplateColumns.split(' ').length,
    header: document.querySelector('header').scrollWidth <= document.querySelector('header').clientWidth,
    page: document.documentElement.scrollWidth <= 420,
  }));
  assert.deepEqual(narrow, { columns: 1, header: true, page: true });
  await shot('7-narrow');

  // The server stops: the page says so instead of reconnecting forever.
  await d.stop();
  await page.waitForFunction(() => /stopped or restarted/.test(document.getElementById('live').textContent), {
    timeout: 15_000,
  });
  assert.deepEqual(
    problems.filter((p) => !/ERR_CONNECTION_REFUSED/.test(p)),
    [],
  );
});
