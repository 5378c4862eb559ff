// A console session is one tenant's: signed in to tenant A, every page shows A's data and none of
// tenant B's, B's records are not found by address, and A's token cannot be pointed at B.
// Also here (its tokens are short): the session's access token refreshes itself.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { type ConsoleFixture, signIn, startConsoleFixture } from './console-browser.ts';
import { appHeaders } from './helpers.ts';

let fx: ConsoleFixture;
let a: TenantCredentials;
let b: TenantCredentials;
let page: Page;
const bIds: Record<string, string> = {};

before(async () => {
  // Tokens of 63 s: the console refreshes a minute before expiry, so about 3 s after sign-in.
  fx = await startConsoleFixture({ ATRIUM_TOKEN_LIFETIME_SECONDS: '63' });
  a = await fx.server.createTenant('Agency A');
  b = await fx.server.createTenant('Agency B');
  const hb = appHeaders(b);
  const sub = await fx.server.request('POST', '/api/webhook-subscriptions', {
    headers: hb,
    json: { Name: 'B hook', ActionType: 'Created', DocumentType: 'Skill.Module.BusinessObjects.User', Url: 'https://b.example.com/hook', Active: true },
  });
  assert.equal(sub.status, 201, sub.text);
  bIds.subscription = sub.body.id;
  const schedule = await fx.server.request('POST', '/api/v3/analytics/schedules', {
    headers: hb,
    json: { Name: 'B schedule', Query: 'DE-Users', Format: 'csv', CronExpression: '0 1 * * *' },
  });
  assert.equal(schedule.status, 201, schedule.text);
  bIds.schedule = schedule.body.id;
  const token = await fx.server.request('POST', '/api/auth/token', { headers: hb });
  const table = await fx.server.request('POST', '/api/v3/custom-tables/BSecrets', {
    headers: { authorization: `Bearer ${token.body.accessToken}` },
    json: { KeyColumnName: 'Code', KeyDataTypeId: 5 },
  });
  assert.equal(table.status, 201, table.text);
  const app = await fx.server.request('POST', '/api/v3/apps', { headers: hb, json: { name: 'B only app' } });
  assert.equal(app.status, 201, app.text);
  bIds.app = app.body.appId;
  ({ page } = await signIn(fx.browser, fx.server.baseUrl, { tenant: a.slug, username: a.username, password: a.password }));
});

after(async () => {
  await fx?.close();
});

const nav = (name: string) => page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name });

test("tenant A's pages list nothing of tenant B", async () => {
  await nav('Webhooks').click();
  await page.getByText('No subscriptions yet.').waitFor();
  await nav('Scheduled extraction').click();
  await page.getByText('No schedules yet.').waitFor();
  await nav('Custom tables').click();
  await page.getByText('No custom tables you may read.').waitFor();
  await nav('Apps and users').click();
  const apps = page.getByRole('table', { name: 'Apps' });
  await apps.getByText(a.appId).waitFor();
  assert.equal(await apps.locator('tbody tr').count(), 1);
  assert.equal(await page.getByText(bIds.app).count(), 0);
  await nav('Query explorer').click();
  await page.getByLabel('Named query').selectOption('DE-Users');
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.getByTestId('result-status').waitFor();
  const cells = await page.getByRole('region', { name: 'Rows of DE-Users' }).locator('tbody td').allTextContents();
  assert.ok(cells.includes(a.userId) && !cells.includes(b.userId), "A's user and not B's");
});

test("tenant B's records are not found at their addresses in A's console", async () => {
  await page.goto(`/console/webhooks/${bIds.subscription}`);
  await page
    .getByRole('alert')
    .getByText(/not found|no webhook subscription/i)
    .waitFor();
  await page.goto(`/console/schedules/${bIds.schedule}`);
  await page.getByRole('alert').waitFor();
  await page.goto('/console/custom-tables/BSecrets');
  await page.getByRole('alert').waitFor();
  assert.equal(await page.getByRole('heading', { name: 'BSecrets' }).count(), 0);
});

test("A's session token is refused when a request names tenant B", async () => {
  const statuses = await page.evaluate(async (tenantB) => {
    const s = JSON.parse(sessionStorage.getItem('atrium.console.session') ?? '{}') as { accessToken: string };
    const ask = (path: string) => fetch(path, { headers: { authorization: `Bearer ${s.accessToken}`, 'x-apptenant': tenantB } }).then((r) => r.status);
    return [await ask('/api/webhook-subscriptions'), await ask('/api/v3/apps'), await ask('/api/v3/custom-tables')];
  }, b.tenantId);
  assert.deepEqual(statuses, [401, 401, 401]);
});

test('the access token refreshes itself before it expires, and the pages keep working', async () => {
  const token = () => page.evaluate(() => JSON.parse(sessionStorage.getItem('atrium.console.session') ?? '{}').accessToken as string);
  const first = await token();
  const until = Date.now() + 15_000;
  while ((await token()) === first) {
    assert.ok(Date.now() < until, 'a new access token within 15 s');
    await page.waitForTimeout(250);
  }
  await page.goto('/console/webhooks');
  await page.getByText('No subscriptions yet.').waitFor();
});
