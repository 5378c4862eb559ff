// The console's user-feed page in a real Chromium: settings saved, a dry run that changes nothing, then a
// run over a real OpenSSH server whose file's rows show per row, checked against the API.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { type ConsoleFixture, signIn, startConsoleFixture } from './console-browser.ts';
import { appHeaders } from './helpers.ts';
import { type SftpServer, SSHD, startSftpServer } from './sftp-server.ts';
import { configureFeed, csv, type FeedFolders, type FeedRow, list, put } from './user-feed-helpers.ts';

let fx: ConsoleFixture;
let sftp: SftpServer;
let tenant: TenantCredentials;
let folders: FeedFolders;
let page: Page;

before(async () => {
  assert.ok(existsSync(SSHD), 'openssh-server is installed (.ci/run installs it)');
  sftp = await startSftpServer();
  fx = await startConsoleFixture();
  tenant = await fx.server.createTenant('Feed Console');
  folders = await configureFeed(fx.server, appHeaders(tenant), sftp, 'console');
  ({ page } = await signIn(fx.browser, fx.server.baseUrl, { tenant: tenant.slug, username: tenant.username, password: tenant.password }));
});

after(async () => {
  await fx?.close();
  await sftp?.close();
});

const row = (externalId: string, userType: string): FeedRow => ({
  externalId,
  name: `User ${externalId}`,
  username: externalId.toLowerCase(),
  email: `${externalId.toLowerCase()}@agency.example`,
  companyCode: tenant.companyCode,
  departmentid: tenant.departmentExternalId,
  userTypologyGroup: 'Engineering',
  resourceType: 'Developer',
  userType,
  weeklyRequiredHours: '40',
  hireDate: '2024-01-15',
  isActive: 'true',
});

test('user feed: settings are saved, a dry run changes nothing, a run shows each row of the file', async () => {
  await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'User feed' }).click();
  await page.getByLabel('Schedule (cron, UTC)').fill('30 5 * * *');
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().endsWith('/api/v3/user-feed') && r.ok()),
    page.getByRole('button', { name: 'Save settings' }).click(),
  ]);
  const saved = await fx.server.request('GET', '/api/v3/user-feed', { headers: appHeaders(tenant) });
  assert.equal(saved.body.schedule, '30 5 * * *');

  await put(folders.data, 'AD_UserAccounts_20260101040000.csv', csv([row('CON-1', 'Regular/Permanent'), row('CON-2', 'No Such Type')]));
  await page.getByRole('button', { name: 'Dry run' }).click();
  const dry = page.getByRole('region', { name: 'Feed run' });
  await dry.getByText('(dry run)').first().waitFor();
  assert.deepEqual(await list(folders.data), ['AD_UserAccounts_20260101040000.csv'], 'the dry run moves nothing');

  await page.getByRole('button', { name: 'Run now' }).click();
  // The real run's detail replaces the dry run's once it ends: its file has moved.
  await dry.getByText(/moved to .*Failure/).waitFor();
  const rows = page.getByRole('table', { name: 'Rows of AD_UserAccounts_20260101040000.csv' });
  await rows.locator('tr[data-outcome="Failed"]').waitFor();
  assert.equal(await rows.locator('tr[data-outcome="Created"] td').nth(1).textContent(), 'CON-1');
  assert.equal(await rows.locator('tr[data-outcome="Failed"] td').nth(1).textContent(), 'CON-2');
  const runs = await fx.server.request('GET', '/api/v3/user-feed/runs', { headers: appHeaders(tenant) });
  assert.equal(runs.status, 200);
  assert.equal(
    runs.body.length,
    2,
    `the dry run and the run are listed: ${JSON.stringify(runs.body.map((r: { dryRun: boolean; status: string; startedOnUtc: string }) => [r.dryRun, r.status, r.startedOnUtc]))}`,
  );
  await page.getByRole('table', { name: 'Feed runs' }).locator('tbody tr').nth(1).waitFor();
  // A copy of the results file is kept in the export store and served by the API.
  const real = runs.body.find((r: { dryRun: boolean }) => !r.dryRun);
  const copy = await fx.server.request('GET', `/api/v3/user-feed/runs/${real.id}/results/SR_UserAccounts_20260101040000.json`, { headers: appHeaders(tenant) });
  assert.equal(copy.status, 200, copy.text);
  assert.equal(copy.body.data_results.status, 'FAILED');
  assert.deepEqual(
    copy.body.data_results.errors.map((e: { uid: string }) => e.uid),
    ['CON-2'],
  );
  const missing = await fx.server.request('GET', `/api/v3/user-feed/runs/${real.id}/results/SR_Other_20260101040000.json`, { headers: appHeaders(tenant) });
  assert.equal(missing.status, 404);
  const paged = await fx.server.request('GET', '/api/v3/user-feed/runs?take=1&skip=1', { headers: appHeaders(tenant) });
  assert.equal(paged.status, 200, paged.text);
  assert.deepEqual(
    paged.body.map((r: { id: string }) => r.id),
    [runs.body[1].id],
    'skip and take page the runs',
  );
  assert.deepEqual(await list(folders.data), ['Failure'], 'the file moved to the failure folder (a row failed)');
});
