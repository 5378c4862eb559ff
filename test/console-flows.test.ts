// The console's drawings and comfort in a real Chromium: an automation's flow diagram (every action and
// arrow of a 12-action definition with a sub-workflow; a run on it; a failed run's failing action), a
// webhook's signing secret shown once verifying a real delivery (standardwebhooks), dark mode, and every
// page walked in light and dark with axe-core (0 violations) and no console error.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { type ConsoleFixture, signIn, startConsoleFixture } from './console-browser.ts';
import { FAILS, FLOW, MAIN_EDGES } from './console-flow-fixtures.ts';
import { appHeaders } from './helpers.ts';
import { type Receiver, startReceiver } from './webhooks-helpers.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let fx: ConsoleFixture;
let tenant: TenantCredentials;
let page: Page;
let receiver: Receiver;
const problems: string[] = [];
const ids: Record<string, string> = {};

before(async () => {
  fx = await startConsoleFixture();
  tenant = await fx.server.createTenant('Flow Agency', { demoData: true, scale: 0.02 });
  receiver = await startReceiver();
  const h = appHeaders(tenant);
  const post = async (url: string, json: unknown, headers = h) => {
    const res = await fx.server.request('POST', url, { headers, json });
    assert.ok(res.status < 300, `${url}: ${res.status} ${res.text}`);
    return res.body;
  };
  ids.flow = (await post('/api/v3/automations', FLOW)).id;
  ids.fails = (await post('/api/v3/automations', FAILS)).id;
  ids.schedule = (await post('/api/v3/analytics/schedules', { Name: 'Nightly users', Query: 'DE-Users', Format: 'csv', CronExpression: '5 0 * * *' })).id;
  const token = (await post('/api/auth/token', undefined)).accessToken;
  await post(
    '/api/v3/custom-tables/Budgets',
    { KeyColumnName: 'Code', KeyDataTypeId: 5, Columns: [{ ColumnName: 'Amount', ColumnDataTypeId: 4 }] },
    { authorization: `Bearer ${token}` },
  );
  ({ page } = await signIn(fx.browser, fx.server.baseUrl, { tenant: tenant.slug, username: tenant.username, password: tenant.password }));
  // Every console error and uncaught exception of any page, failed loads (a missing favicon) included.
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${page.url()}: console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${page.url()}: ${r.status()} for ${r.url()}`);
  });
});

after(async () => {
  await receiver?.close();
  await fx?.close();
});

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
const overlaps = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test('the automation diagram shows every action and labelled arrow of a 12-action definition with a sub-workflow, boxes apart', async () => {
  await page.goto(`/console/automations/${ids.flow}`);
  const main = page.locator('figure[data-workflow=""]');
  const sub = page.locator('figure[data-workflow="PerItem"]');
  await main.locator('g[data-action]').first().waitFor();
  const actions = async (fig: typeof main) => (await fig.locator('g[data-action]').evaluateAll((els) => els.map((e) => e.getAttribute('data-action')))).sort();
  assert.deepEqual(await actions(main), ['Check', 'Done', 'Each', 'Prepare', 'Recover', 'Route', 'Shape', 'Start', 'Tally']);
  assert.deepEqual(await actions(sub), ['Double', 'ItemDone', 'ItemStart']);
  const edges = async (fig: typeof main) =>
    (
      await fig
        .locator('path[data-edge]')
        .evaluateAll((els) =>
          els.map(
            (e) =>
              `${e.getAttribute('data-edge')} ${e.getAttribute('data-kind')}${e.getAttribute('data-kind') === 'next' ? '' : ` ${e.getAttribute('data-label')}`}`,
          ),
        )
    ).sort();
  assert.deepEqual(await edges(main), [...MAIN_EDGES].sort());
  assert.deepEqual(await edges(sub), ['Double>ItemDone next', 'ItemStart>Double next']);
  // Each arrow's label is drawn, and the boxes are all visible and none covers another.
  for (const label of ['= "each"', 'default', 'on error']) await main.locator('g.edge-label', { hasText: label }).first().waitFor();
  const boxes = await main.locator('g[data-action] rect').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON() as Box));
  assert.equal(boxes.length, 9);
  for (const b of boxes) assert.ok(b.width > 100 && b.height > 30, 'a box is drawn at its size');
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) assert.ok(!overlaps(boxes[i], boxes[j]), `boxes ${i} and ${j} overlap`);
  // No arrow runs through a box it does not join, and no two labels cover each other.
  const crossings = await main.locator('svg').evaluate((svg) => {
    const found: string[] = [];
    const boxes = [...svg.querySelectorAll('g[data-action]')].map((g) => ({
      name: g.getAttribute('data-action'),
      r: (g.querySelector('rect') as SVGRectElement).getBBox(),
      g: g as SVGGElement,
    }));
    for (const path of svg.querySelectorAll<SVGPathElement>('path[data-edge]')) {
      const [from, to] = (path.getAttribute('data-edge') ?? '').split('>');
      const length = path.getTotalLength();
      for (let i = 1; i < 60; i++) {
        const p = path.getPointAtLength((length * i) / 60);
        for (const b of boxes) {
          if (b.name === from || b.name === to) continue;
          const m = b.g.transform.baseVal.consolidate()?.matrix;
          const x = p.x - (m?.e ?? 0);
          const y = p.y - (m?.f ?? 0);
          if (x > 1 && y > 1 && x < b.r.width - 1 && y < b.r.height - 1) found.push(`${from}>${to} through ${b.name}`);
        }
      }
    }
    const labels = [...svg.querySelectorAll('g.edge-label rect')].map((r) => (r as SVGRectElement).getBBox());
    for (let i = 0; i < labels.length; i++)
      for (let j = i + 1; j < labels.length; j++) {
        const [a, c] = [labels[i], labels[j]];
        if (a.x < c.x + c.width && c.x < a.x + a.width && a.y < c.y + c.height && c.y < a.y + a.height) found.push(`labels ${i} and ${j} overlap`);
      }
    return [...new Set(found)];
  });
  assert.deepEqual(crossings, []);
  // The Loop names the sub-workflow it runs.
  assert.match((await main.locator('g[data-action="Each"]').textContent()) ?? '', /Loop → PerItem/);
  // Keyboard: a box is a button; Enter opens its definition.
  await main.locator('g[data-action="Check"]').focus();
  await page.keyboard.press('Enter');
  assert.match((await page.getByTestId('flow-details').textContent()) ?? '', /"nextOnError": "Recover"/);
});

test('a run on the diagram: each action’s status, duration, input and output on click; the arrows it took', async () => {
  await page.getByLabel('Run input (JSON)').fill('{"mode":"each","items":[2,3]}');
  await page.getByRole('button', { name: 'Run now' }).click();
  const main = page.locator('figure[data-workflow=""]');
  await main.locator('g[data-action="Done"][data-status="succeeded"]').waitFor();
  const status = async (name: string, fig = main) => fig.locator(`g[data-action="${name}"]`).getAttribute('data-status');
  for (const ran of ['Start', 'Prepare', 'Route', 'Each', 'Tally', 'Check', 'Done']) assert.equal(await status(ran), 'succeeded', ran);
  for (const skipped of ['Shape', 'Recover']) assert.equal(await status(skipped), 'not run', skipped);
  assert.equal(await page.locator('g[data-failing]').count(), 0);
  const taken = await main.locator('path.taken').evaluateAll((els) => els.map((e) => e.getAttribute('data-edge')).sort());
  assert.deepEqual(taken, ['Check>Done', 'Each>Tally', 'Prepare>Route', 'Route>Each', 'Start>Prepare', 'Tally>Check']);
  const sub = page.locator('figure[data-workflow="PerItem"]');
  assert.equal(await status('Double', sub), 'succeeded');

  await main.locator('g[data-action="Prepare"]').click();
  const details = page.getByTestId('flow-details');
  assert.match((await details.textContent()) ?? '', /Ran once/);
  assert.deepEqual(JSON.parse((await page.getByTestId('flow-output').textContent()) ?? ''), [2, 3]);
  assert.match((await page.getByTestId('flow-duration').textContent()) ?? '', /^\d+(\.\d)? m?s$/);
  await sub.locator('g[data-action="Double"]').click();
  assert.match((await details.textContent()) ?? '', /Ran 2 times/);
  assert.equal(JSON.parse((await page.getByTestId('flow-output').textContent()) ?? ''), 3, 'the last iteration');
  // The same as the runs API answers.
  const runs = await fx.server.request('GET', `/api/v3/automations/${ids.flow}/runs`, { headers: appHeaders(tenant) });
  const run = await fx.server.request('GET', `/api/v3/automations/${ids.flow}/runs/${runs.body[0].id}`, { headers: appHeaders(tenant) });
  assert.deepEqual(run.body.actions.find((a: { name: string }) => a.name === 'Prepare').output, [2, 3]);
});

test('a failed run highlights the action that failed it, with its error', async () => {
  await page.goto(`/console/automations/${ids.fails}`);
  await page.getByLabel('Run input (JSON)').fill('{"order":1}');
  await page.getByRole('button', { name: 'Run now' }).click();
  const failing = page.locator('g[data-failing="true"]');
  await failing.waitFor();
  assert.equal(await page.locator('g[data-failing]').count(), 1);
  assert.equal(await failing.getAttribute('data-action'), 'Check');
  assert.match((await failing.getAttribute('class')) ?? '', /\bfailing\b/);
  assert.match((await failing.getAttribute('aria-label')) ?? '', /failed the run/);
  // Drawn heavier in the danger colour than any other box.
  const stroke = (name: string) => page.locator(`g[data-action="${name}"] rect`).evaluate((r) => Number.parseFloat(getComputedStyle(r).strokeWidth));
  assert.ok((await stroke('Check')) > (await stroke('Start')));
  assert.equal(await page.locator('g[data-action="Done"]').getAttribute('data-status'), 'not run');
  await failing.click();
  assert.match((await page.getByTestId('flow-error').textContent()) ?? '', /customer/);
});

test('webhooks: the secret shown once on creation verifies a real delivery (standardwebhooks); reveal on demand; the log filters', async () => {
  await page.goto('/console/webhooks');
  await page.getByRole('button', { name: 'New subscription' }).click();
  const dialog = page.getByRole('dialog', { name: 'New webhook subscription' });
  await dialog.getByLabel('Name').fill('Stages to ERP');
  await dialog.getByLabel('Document type').locator('option').nth(1).waitFor({ state: 'attached' });
  await dialog.getByLabel('Document type').selectOption({ label: 'User' });
  await dialog.getByLabel('Action type').fill('Created');
  await dialog.getByLabel('URL').fill(receiver.url);
  await dialog.getByRole('button', { name: 'Save' }).click();
  const secret = (await page.getByTestId('created-secret').textContent()) ?? '';
  assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  receiver.secret = secret;
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('heading', { name: 'Stages to ERP' }).waitFor();
  // Not on the page until asked for.
  assert.ok(!((await page.content()) ?? '').includes(secret.slice(6)), 'the secret is not in the page before Reveal');
  await page.getByRole('button', { name: 'Send example' }).click();
  await page.getByTestId('sent-example').waitFor();
  const [got] = await receiver.waitFor(1);
  assert.ok(got.verified, `standardwebhooks verified the delivery with the secret shown once: ${got.verifyError}`);
  assert.equal(got.payload.action, 'test');
  await page.getByRole('button', { name: 'Reveal secret' }).click();
  assert.equal(await page.getByTestId('revealed-secret').textContent(), secret);
  await page.getByRole('button', { name: 'Hide secret' }).click();
  ids.subscription = page.url().split('/').pop() ?? '';

  // A failing delivery, then the log filtered by status.
  receiver.answer = () => ({ status: 500, body: 'down' });
  await page.getByRole('button', { name: 'Send test' }).click();
  const history = page.getByRole('table', { name: 'Invocation history' });
  const until = Date.now() + 20_000;
  while (!(await history.locator('tr[data-status="Failed"]').count()) || !(await history.locator('tr[data-status="Succeeded"]').count())) {
    assert.ok(Date.now() < until, 'one delivery succeeded and one failed');
    await page.waitForTimeout(300);
    await page.getByRole('button', { name: 'Refresh history' }).click();
  }
  receiver.answer = () => ({ status: 200, body: 'ok' });
  await page.getByLabel('Status').selectOption('Failed');
  assert.equal(await history.locator('tbody tr[data-status]').count(), 1);
  assert.equal(await history.locator('tbody tr[data-status="Failed"]').count(), 1);
  assert.equal(await page.getByTestId('history-count').textContent(), '1 of 2 newest invocations');
  await page.getByLabel('Status').selectOption('');
  await page.getByLabel('Event', { exact: true }).selectOption('test');
  assert.equal(await history.locator('tbody tr[data-status]').count(), 2);
  await page.getByLabel('Event', { exact: true }).selectOption('');
});

test('the event catalogue lists every event and shows an example payload per document type', async () => {
  await page.goto('/console/webhooks/events');
  const events = page.getByRole('table', { name: 'Events' });
  await events.locator('tbody tr').first().waitFor();
  const api = await fx.server.request('GET', '/api/v3/webhook-events', { headers: appHeaders(tenant) });
  assert.equal(await events.locator('tbody tr').count(), api.body.events.length);
  await page.getByLabel('Document type').selectOption({ label: 'User' });
  await page.getByLabel('Event', { exact: true }).selectOption('Created');
  await page.getByTestId('example-payload').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid="example-payload"]')?.textContent?.includes('Skill.Module.BusinessObjects.User'));
  const shown = JSON.parse((await page.getByTestId('example-payload').textContent()) ?? '');
  const example = await fx.server.request('GET', '/api/v3/webhook-events/example?documentType=User&actionType=Created', { headers: appHeaders(tenant) });
  assert.deepEqual(shown, example.body.payload);
});

test('dark mode follows the system setting, the toggle overrides it and is remembered; screenshots of both', async () => {
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto(`/console/automations/${ids.flow}`);
  await page.locator('g[data-action="Start"]').waitFor();
  assert.equal(await bg(), 'rgb(255, 255, 255)');
  const dir = path.join(tmpdir(), `atrium-console-dark-${process.pid}`);
  try {
    const light = await page.screenshot({ path: path.join(dir, 'automation-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await bg(), 'rgb(17, 24, 39)', 'the system says dark');
    const dark = await page.screenshot({ path: path.join(dir, 'automation-dark.png') });
    assert.ok(light.length > 1000 && dark.length > 1000 && !light.equals(dark));
  } finally {
    await rm(dir, { recursive: true, force: true }); // the screenshots were for the comparison only
  }
  await page.getByLabel('Colour theme').selectOption('light');
  assert.equal(await bg(), 'rgb(255, 255, 255)', 'the toggle wins over the system');
  await page.reload();
  await page.locator('g[data-action="Start"]').waitFor();
  assert.equal(await bg(), 'rgb(255, 255, 255)', 'remembered across a reload');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.getByLabel('Colour theme').selectOption('dark');
  assert.equal(await bg(), 'rgb(17, 24, 39)');
  await page.getByLabel('Colour theme').selectOption('system');
  assert.equal(await bg(), 'rgb(255, 255, 255)');
});

test('arrow keys move through the navigation menu and down a table’s column', async () => {
  await page.goto('/console/webhooks');
  const nav = page.getByRole('navigation', { name: 'Pages' });
  await nav.getByRole('link').first().focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Webhooks');
  await page.keyboard.press('End');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Apps and users');
  await page.keyboard.press('Home');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Query explorer');
  await page.goto(`/console/automations`);
  const table = page.getByRole('table', { name: 'Automations' });
  await table.getByRole('link').nth(1).waitFor();
  await table.getByRole('link').first().focus();
  const first = await page.evaluate(() => document.activeElement?.textContent);
  await page.keyboard.press('ArrowDown');
  const second = await page.evaluate(() => document.activeElement?.textContent);
  assert.notEqual(first, second);
  assert.deepEqual([first, second].sort(), [FAILS.name, FLOW.name].sort());
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), first);
});

test('the error banner shows the problem’s title, status, detail and trace id', async () => {
  const missing = '0b7e6c6e-0000-4000-8000-000000000000';
  const before = problems.length;
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/api/webhook-subscriptions/${missing}`)),
    page.goto(`/console/webhooks/${missing}`),
  ]);
  const problem = await answer.json();
  assert.equal(answer.status(), 404);
  assert.ok(problem.traceId);
  const banner = page.getByRole('alert');
  await banner.getByTestId('trace-id').waitFor();
  assert.equal(await banner.getByTestId('trace-id').textContent(), problem.traceId);
  assert.match((await banner.textContent()) ?? '', new RegExp(`\\(404\\) No webhook subscription ${missing}`));
  // The 404 was this test's own doing; any other problem stays for the walk below to report.
  problems.splice(before, problems.length - before, ...problems.slice(before).filter((p) => !p.includes(missing)));
});

/** axe-core's violations on the page as it is: rule, impact and the first elements. */
async function axe(p: Page): Promise<string[]> {
  // Injected over the DevTools protocol: the console's Content-Security-Policy allows no inline script.
  if (!(await p.evaluate(() => 'axe' in window))) await p.evaluate(AXE);
  return p.evaluate(async () => {
    const w = window as unknown as {
      axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
    };
    const r = await w.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
  });
}

test('every page, light and dark: axe-core finds no violation, and no page logs a console error or a failed load', async () => {
  const pages: [string, (p: Page) => Promise<unknown>][] = [
    ['/console/explorer', (p) => p.getByLabel('Named query').locator('option').nth(1).waitFor({ state: 'attached' })],
    ['/console/webhooks', (p) => p.getByRole('link', { name: 'Stages to ERP' }).waitFor()],
    [`/console/webhooks/${ids.subscription}`, (p) => p.getByRole('table', { name: 'Invocation history' }).locator('tbody tr').first().waitFor()],
    ['/console/webhooks/events', (p) => p.getByTestId('example-payload').waitFor()],
    ['/console/schedules', (p) => p.getByRole('link', { name: 'Nightly users' }).waitFor()],
    [`/console/schedules/${ids.schedule}`, (p) => p.getByRole('heading', { name: 'Nightly users' }).waitFor()],
    ['/console/custom-tables', (p) => p.getByRole('link', { name: 'Budgets' }).waitFor()],
    ['/console/custom-tables/Budgets', (p) => p.getByRole('heading', { name: 'Budgets' }).waitFor()],
    ['/console/automations', (p) => p.getByRole('link', { name: FLOW.name }).waitFor()],
    [`/console/automations/${ids.flow}`, (p) => p.locator('g[data-action="Start"]').waitFor()],
    ['/console/user-feed', (p) => p.getByLabel('Schedule (cron, UTC)').waitFor()],
    ['/console/apps', (p) => p.getByRole('table', { name: 'Users' }).locator('tbody tr').first().waitFor()],
  ];
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [url, ready] of pages) {
      await page.goto(url);
      await ready(page);
      await page.waitForLoadState('networkidle');
      for (const v of await axe(page)) found.push(`${scheme} ${url}: ${v}`);
    }
    // A run drawn on the diagram, and a dialog open.
    await page.goto(`/console/automations/${ids.fails}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.locator('g[data-failing="true"]').waitFor();
    for (const v of await axe(page)) found.push(`${scheme} failed run: ${v}`);
    await page.getByRole('button', { name: 'Edit definition' }).click();
    await page.getByRole('dialog', { name: 'Edit automation' }).locator('g[data-action="Check"]').waitFor();
    for (const v of await axe(page)) found.push(`${scheme} editor: ${v}`);
    await page.keyboard.press('Escape');
  }
  // The sign-in page, in a context of its own (no session).
  for (const scheme of ['light', 'dark'] as const) {
    const context = await fx.browser.newContext({ colorScheme: scheme, baseURL: fx.server.baseUrl });
    const signInPage = await context.newPage();
    signInPage.on('console', (m) => {
      if (m.type() === 'error') problems.push(`sign-in: console error: ${m.text()}`);
    });
    signInPage.on('response', (r) => {
      if (r.status() >= 400) problems.push(`sign-in: ${r.status()} for ${r.url()}`);
    });
    await signInPage.goto('/console/');
    await signInPage.getByLabel('Tenant (slug or id)').waitFor();
    await signInPage.waitForLoadState('networkidle');
    for (const v of await axe(signInPage)) found.push(`${scheme} sign-in: ${v}`);
    await context.close();
  }
  assert.deepEqual(found, []);
  assert.deepEqual(problems, []);
});
