// The web console in a real Chromium against a real server with a demo tenant: each page's main
// task, through the pages as a user works them (labels, buttons), checked against the API.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import ExcelJS from 'exceljs';
import type { Locator, Page } from 'playwright-core';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { type ConsoleFixture, signIn, startConsoleFixture } from './console-browser.ts';
import { appHeaders } from './helpers.ts';
import { type Receiver, startReceiver } from './webhooks-helpers.ts';

let fx: ConsoleFixture;
let tenant: TenantCredentials;
let page: Page;
let receiver: Receiver;

before(async () => {
  fx = await startConsoleFixture();
  tenant = await fx.server.createTenant('Console Agency', { demoData: true, scale: 0.05 });
  receiver = await startReceiver();
  ({ page } = await signIn(fx.browser, fx.server.baseUrl, { tenant: tenant.slug, username: tenant.username, password: tenant.password }));
});

after(async () => {
  await receiver?.close();
  await fx?.close();
});

/** Waits for `done`, or fails with the text of the alert the page showed instead. */
async function expectShown(done: Locator): Promise<void> {
  const alert = page.getByRole('alert').first();
  await done.or(alert).first().waitFor();
  if (!(await done.count())) assert.fail(`the page showed an error: ${await alert.textContent({ timeout: 1000 }).catch(() => '(gone)')}`);
}

const nav = (name: string) => page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name });

test('query explorer: a filtered, sorted query shows its rows and JSON, and exports them as CSV', async () => {
  await page.getByLabel('Named query').selectOption('DE-Users');
  await page.getByRole('button', { name: 'Add filter' }).click();
  await page.getByLabel('Field 1').selectOption('IsActive');
  await page.getByLabel('Operation 1').selectOption('=');
  await page.getByLabel('Value 1').selectOption('true');
  await page.getByRole('button', { name: 'Add sort' }).click();
  await page.getByLabel('Sort field 1').selectOption('User');
  await page.getByLabel('Direction 1').selectOption('desc');
  await page.getByRole('button', { name: 'Run query' }).click();
  const status = await page.getByTestId('result-status').textContent();
  const shown = Number(/^([\d,]+) rows/.exec(status ?? '')?.[1].replace(/,/g, ''));

  const body = { queryBuilder: { filters: ['IsActive', '=', true], orderBy: [{ field: 'User', direction: 'desc' }] } };
  assert.deepEqual(JSON.parse((await page.getByTestId('query-builder-json').textContent()) ?? ''), body);
  const api = await fx.server.request('POST', '/api/v3/analytics/named-query/DE-Users/dynamic-execute', { headers: appHeaders(tenant), json: body });
  assert.equal(api.status, 200);
  assert.ok(api.body.totalCount > 0);
  assert.equal(shown, api.body.totalCount);
  // The first rows in view are the API's first rows, in its order (the first column shown: names come before ids).
  const region = page.getByRole('region', { name: 'Rows of DE-Users' });
  const firstCell = region.locator('tbody tr').first().locator('td').first();
  const firstColumn = (await region.locator('thead th').first().textContent())?.replace(/[ ▲▼]+$/, '') ?? '';
  assert.equal(await firstCell.textContent(), String(api.body.data[0][firstColumn] ?? ''));

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  assert.match(download.suggestedFilename(), /\.csv$/);
  const csv = await readFile((await download.path()) as string, 'utf8');
  const lines = csv.trim().split(/\r?\n/);
  assert.equal(lines.length, api.body.totalCount + 1, 'a header and every filtered row');

  const [sheet] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export xlsx' }).click()]);
  assert.match(sheet.suggestedFilename(), /\.xlsx$/);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile((await sheet.path()) as string);
  assert.equal(wb.worksheets[0].rowCount, api.body.totalCount + 1, 'the workbook holds a header and every filtered row');
});

test('webhooks: a new subscription receives its test delivery, shown in the invocation history, and is deactivated', async () => {
  await nav('Webhooks').click();
  await page.getByRole('button', { name: 'New subscription' }).click();
  const dialog = page.getByRole('dialog', { name: 'New webhook subscription' });
  await dialog.getByLabel('Name').fill('Users to CRM');
  // The picker fills from the document-type lookup.
  await dialog.getByLabel('Document type').locator('option').nth(1).waitFor({ state: 'attached' });
  const types = await dialog.getByLabel('Document type').locator('option').allTextContents();
  await dialog.getByLabel('Document type').selectOption({ label: types.find((t) => t === 'User') ?? types[1] });
  await dialog.getByLabel('Action type').fill('Created');
  await dialog.getByLabel('URL').fill(receiver.url);
  await dialog.getByRole('button', { name: 'Add detail filter' }).click();
  await dialog.getByLabel('Property 1').fill('UserName');
  await dialog.getByLabel('Condition 1').selectOption('Contains');
  await dialog.getByLabel('Value 1').fill('a');
  await dialog.getByRole('button', { name: 'Save' }).click();
  // The signing secret is shown once, then the subscription's page.
  await expectShown(page.getByTestId('created-secret'));
  await page.getByRole('button', { name: 'Done' }).click();
  await expectShown(page.getByRole('heading', { name: 'Users to CRM' }));

  await page.getByRole('button', { name: 'Send test' }).click();
  await receiver.waitFor(1);
  const history = page.getByRole('table', { name: 'Invocation history' });
  const until = Date.now() + 15_000;
  while (!(await history.locator('tr[data-status="Succeeded"]').count())) {
    assert.ok(Date.now() < until, 'the test delivery shows as Succeeded');
    await page.waitForTimeout(250);
    await page.getByRole('button', { name: 'Refresh history' }).click();
  }
  const row = history.locator('tr[data-status="Succeeded"]').first();
  assert.match((await row.textContent()) ?? '', /test/);
  assert.match((await row.textContent()) ?? '', /200/);
  await row.getByRole('button', { name: 'Attempts' }).click();
  await history.getByText(/200 · \d+ ms/).waitFor();

  // Deactivated from the list's switch: the whole subscription is sent back with Active false.
  await page.getByRole('link', { name: '← Webhooks' }).click();
  await page.getByRole('checkbox', { name: /Active: Users to CRM/ }).uncheck();
  await page
    .getByRole('checkbox', { name: /Active: Users to CRM/ })
    .and(page.locator(':not([disabled])'))
    .waitFor();
  const subs = await fx.server.request('GET', '/api/webhook-subscriptions', { headers: appHeaders(tenant) });
  assert.equal(subs.body[0].active, false);
  assert.deepEqual(
    subs.body.map((s: { name: string; url: string; detailFilters: unknown[] }) => [s.name, s.url, s.detailFilters]),
    [['Users to CRM', receiver.url, [{ groupCondition: 'And', jsonPathExpression: 'UserName', condition: 'Contains', value: 'a' }]]],
  );
});

test('scheduled extraction: a new schedule previews its fire times, runs now and its file downloads', async () => {
  await nav('Scheduled extraction').click();
  await page.getByRole('button', { name: 'New schedule' }).click();
  const dialog = page.getByRole('dialog', { name: 'New schedule' });
  await dialog.getByLabel('Name').fill('Nightly users');
  await dialog.getByLabel('Query', { exact: true }).selectOption('DE-Users');
  await dialog.getByLabel('Cron expression (UTC)').fill('5 0 * * *');
  await dialog.getByText('At 00:05').waitFor();
  assert.equal(await dialog.locator('#cron-preview li').count(), 5);
  await dialog.getByLabel('Cron expression (UTC)').fill('61 0 * * *');
  await dialog.getByRole('alert').waitFor();
  await dialog.getByLabel('Cron expression (UTC)').fill('5 0 * * *');
  await dialog.getByText('At 00:05').waitFor();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expectShown(page.getByRole('heading', { name: 'Nightly users' }));

  await page.getByRole('button', { name: 'Run now' }).click();
  const runs = page.getByRole('table', { name: 'Runs' });
  await runs.locator('tr[data-status="Succeeded"]').waitFor({ timeout: 20_000 });
  const [download] = await Promise.all([page.waitForEvent('download'), runs.getByRole('button', { name: /^Download / }).click()]);
  assert.match(download.suggestedFilename(), /^DE-Users_.*\.csv$/);
  const csv = await readFile((await download.path()) as string, 'utf8');
  const users = await fx.server.request('POST', '/api/v3/analytics/named-query/DE-Users/dynamic-execute', { headers: appHeaders(tenant), json: {} });
  assert.equal(csv.trim().split(/\r?\n/).length, users.body.totalCount + 1);
});

test('automations: a new definition is refused with its error path, then saved, run now, and its run log shows each action', async () => {
  await nav('Automations').click();
  await page.getByRole('button', { name: 'New automation' }).click();
  const dialog = page.getByRole('dialog', { name: 'New automation' });
  const definition = dialog.getByLabel('Definition (JSON)');
  const template = JSON.parse(await definition.inputValue());
  // A Result with a next is refused, the error naming where.
  await definition.fill(JSON.stringify({ ...template, name: 'Echo', actions: [template.actions[0], { ...template.actions[1], next: 'Start' }] }));
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.getByRole('alert').getByText('/actions/1', { exact: false }).first().waitFor();
  await definition.fill(JSON.stringify({ ...template, name: 'Echo' }));
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expectShown(page.getByRole('heading', { name: 'Echo' }));

  await page.getByLabel('Run input (JSON)').fill('{"hello":"console"}');
  await page.getByRole('button', { name: 'Run now' }).click();
  const log = page.getByRole('table', { name: 'Actions of the run' });
  await expectShown(log);
  assert.deepEqual(await log.locator('tbody tr td:first-child').allTextContents(), ['Start', 'Answer']);
  await page.getByRole('table', { name: 'Runs' }).locator('tr[data-status="Succeeded"]').waitFor();
  const listed = await fx.server.request('GET', '/api/v3/automations', { headers: appHeaders(tenant) });
  const echo = (listed.body as { id: string; name: string }[]).find((a) => a.name === 'Echo');
  assert.ok(echo, 'the automation is saved through the API');
  const runs = await fx.server.request('GET', `/api/v3/automations/${echo.id}/runs`, { headers: appHeaders(tenant) });
  assert.equal(runs.body[0].status, 'Succeeded');
  assert.deepEqual(runs.body[0].result.body, { received: { hello: 'console' } });
});

test('custom tables: a new table takes a row, and an inline edit of it is saved', async () => {
  await nav('Custom tables').click();
  await page.getByRole('button', { name: 'New table' }).click();
  const dialog = page.getByRole('dialog', { name: 'New custom table' });
  await dialog.getByLabel('Table name').fill('Budgets');
  await dialog.getByLabel('Key column').fill('Code');
  await dialog.getByRole('button', { name: 'Add column' }).click();
  await dialog.getByLabel('Column 1 name').fill('Amount');
  await dialog.getByLabel('Column 1 type').selectOption({ label: 'Money' });
  await dialog.getByRole('button', { name: 'Add column' }).click();
  await dialog.getByLabel('Column 2 name').fill('Approved');
  await dialog.getByLabel('Column 2 type').selectOption({ label: 'Boolean' });
  await dialog.getByRole('button', { name: 'Create table' }).click();
  await expectShown(page.getByRole('heading', { name: 'Budgets' }));

  await page.getByRole('button', { name: 'Add row' }).click();
  await page.getByLabel('New row Code').fill('B-1');
  await page.getByLabel('New row Amount').fill('1200.5');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByLabel('B-1 Amount').waitFor();
  assert.equal(await page.getByLabel('B-1 Amount').inputValue(), '1200.5000');

  await page.getByLabel('B-1 Amount').fill('99.25');
  await page.getByLabel('B-1 Approved').check();
  await page.getByRole('button', { name: 'Save B-1' }).click();
  await page.locator('tr.editing').waitFor({ state: 'detached' });

  const token = await fx.server.request('POST', '/api/auth/token', { headers: appHeaders(tenant) });
  const row = await fx.server.request('GET', '/api/v3/custom-tables/Budgets/row?keyValue=B-1', {
    headers: { authorization: `Bearer ${token.body.accessToken}` },
  });
  assert.equal(row.status, 200);
  assert.deepEqual(
    row.body.Columns.map((c: { ColumnName: string; Value: unknown }) => [c.ColumnName, c.Value]),
    [
      ['Amount', '99.2500'],
      ['Approved', true],
    ],
  );
});

test('apps: rotating an app secret shows the new secret once; it works and the old one does not', async () => {
  await nav('Apps and users').click();
  const apps = page.getByRole('table', { name: 'Apps' });
  await apps.getByText(tenant.appId).waitFor();
  await page.getByRole('table', { name: 'Users' }).getByRole('cell', { name: tenant.username, exact: true }).waitFor();
  await apps
    .getByRole('row')
    .filter({ hasText: tenant.appId })
    .getByRole('button', { name: /^Rotate secret/ })
    .click();
  const secret = (await page.getByTestId('app-secret').textContent()) ?? '';
  assert.ok(secret.length >= 32);
  await page.getByRole('button', { name: 'Done' }).click();

  const withNew = await fx.server.request('GET', '/api/v3/whoami', { headers: appHeaders({ ...tenant, appSecret: secret }) });
  assert.equal(withNew.status, 200);
  const withOld = await fx.server.request('GET', '/api/v3/whoami', { headers: appHeaders(tenant) });
  assert.equal(withOld.status, 401);
  tenant.appSecret = secret;
});

test('at phone width the pages are behind a menu button, and sign-out returns to sign-in', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  const menu = page.getByRole('button', { name: 'Menu' });
  assert.ok(await menu.isVisible());
  assert.ok(!(await nav('Webhooks').isVisible()));
  await menu.click();
  await nav('Webhooks').click();
  await page.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `no sideways scrolling of the page (${width} px)`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to the Atrium console' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
});

test('the keyboard alone signs in and reaches a page: labelled fields in order, Enter submits, a skip link', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByLabel('Tenant (slug or id)').focus();
  await page.keyboard.type(tenant.slug);
  await page.keyboard.press('Tab');
  await page.keyboard.type(tenant.username);
  await page.keyboard.press('Tab');
  await page.keyboard.type(tenant.password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Query explorer' }).waitFor();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
});
