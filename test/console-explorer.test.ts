// The explorer's issue-36 features in a real Chromium: a chart of DE-TimeSheets hours by client against the
// aggregate API and hand-written SQL, a saved query reopened by its link in a new browser context, sorting by
// a header, the search box, names before ids and the remembered column choice; no console error on the way.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { Page } from 'playwright-core';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { type ConsoleFixture, signIn, startConsoleFixture } from './console-browser.ts';
import { appHeaders } from './helpers.ts';

let fx: ConsoleFixture;
let tenant: TenantCredentials;
let page: Page;
let owner: pg.Client;
const consoleErrors: string[] = [];

function watch(p: Page): void {
  p.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(`${p.url()}: ${m.text()}`);
  });
  p.on('pageerror', (e) => consoleErrors.push(`${p.url()}: ${e.message}`));
}

before(async () => {
  fx = await startConsoleFixture();
  tenant = await fx.server.createTenant('Chart Agency', { demoData: true, scale: 0.05 });
  owner = new pg.Client({ connectionString: fx.server.databaseUrl });
  await owner.connect();
  ({ page } = await signIn(fx.browser, fx.server.baseUrl, { tenant: tenant.slug, username: tenant.username, password: tenant.password }));
  watch(page);
});
after(async () => {
  await owner?.end();
  await fx?.close();
});

const who = () => ({ tenant: tenant.slug, username: tenant.username, password: tenant.password });
const aggregateApi = async (body: unknown) => {
  const res = await fx.server.request('POST', '/api/v3/analytics/named-query/DE-TimeSheets/aggregate', { headers: appHeaders(tenant), json: body });
  assert.equal(res.status, 200, res.text);
  return res.body as { data: { keys: unknown[]; value: number }[]; total: { value: number; count: number }; groupCount: number };
};

/** Hours by client over the timesheets from `from` on, as DE-TimeSheets computes them (time.ts), by hand. */
async function hoursByClientSql(from: string): Promise<Map<string, number>> {
  const { rows } = await owner.query(
    `select coalesce(cl.name, '(none)') as client, sum(round(t.duration_minutes / 60.0, 6))::float8 as hours
       from timesheets t
       left join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
       left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
       left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
      where t.tenant_id = $1 and t.deleted_on is null and t.date >= $2
      group by 1`,
    [tenant.tenantId, from],
  );
  return new Map(rows.map((r) => [r.client as string, r.hours as number]));
}

const near = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

let from = '';

test('a chart of DE-TimeSheets hours by client matches the aggregate API and hand-written SQL over the same filter', async () => {
  ({
    rows: [{ from }],
  } = await owner.query(`select percentile_disc(0.3) within group (order by date)::text as from from timesheets where tenant_id = $1 and deleted_on is null`, [
    tenant.tenantId,
  ]));
  await page.getByLabel('Named query').selectOption('DE-TimeSheets');
  await page.getByRole('button', { name: 'Add filter' }).click();
  await page.getByLabel('Field 1').selectOption('Day');
  await page.getByLabel('Operation 1').selectOption('>=');
  await page.getByLabel('Value 1').fill(from);
  await page.getByRole('button', { name: 'Chart' }).click();
  await page.getByLabel('Group by').selectOption('Client');
  await page.getByLabel('Aggregate').selectOption('sum');
  await page.getByLabel('Of field').selectOption('Hours');
  await page.getByLabel('Show as').selectOption('bars');
  await page.getByRole('button', { name: 'Draw chart' }).click();
  await page.getByTestId('chart-total').waitFor();

  const bars = await page
    .getByTestId('chart-bar')
    .evaluateAll((els) => els.map((e) => [e.getAttribute('data-key'), Number(e.getAttribute('data-value'))] as const));
  const api = await aggregateApi({
    queryBuilder: { filters: ['Day', '>=', from] },
    groupBy: [{ field: 'Client' }],
    aggregate: { function: 'sum', field: 'Hours' },
    take: 10_000,
  });
  const bySql = await hoursByClientSql(from);
  assert.ok(bars.length > 2, 'several clients are drawn');
  assert.equal(bars.length, Math.min(api.groupCount, 40), 'one bar per client (the 40 largest)');
  for (const [client, hours] of bars) {
    const fromApi = api.data.find((d) => (d.keys[0] ?? '(none)') === client);
    assert.ok(fromApi, `the API has ${client}`);
    near(hours, fromApi.value, `bar of ${client} vs the aggregate API`);
    near(hours, bySql.get(client as string) as number, `bar of ${client} vs SQL`);
  }
  const total = page.getByTestId('chart-total');
  const sqlTotal = [...bySql.values()].reduce((a, b) => a + b, 0);
  near(Number(await total.getAttribute('data-value')), sqlTotal, 'the chart total vs SQL');
  near(api.total.value, sqlTotal, 'the API total vs SQL');

  // The same aggregate as a table; and lines over Day by month.
  await page.getByLabel('Show as').selectOption('table');
  await page.getByRole('button', { name: 'Draw chart' }).click();
  await page.getByTestId('aggregate-row').first().waitFor();
  assert.equal(await page.getByTestId('aggregate-row').count(), api.groupCount);
  await page.getByLabel('Group by').selectOption('Day');
  await page.getByLabel('By', { exact: true }).selectOption('month');
  await page.getByLabel('Show as').selectOption('lines');
  await page.getByRole('button', { name: 'Draw chart' }).click();
  await page.locator('[data-testid=chart-line] circle').first().waitFor();
  const points = await page
    .locator('[data-testid=chart-line] circle')
    .evaluateAll((els) => els.map((e) => [e.getAttribute('data-key'), Number(e.getAttribute('data-value'))] as const));
  const monthly = await aggregateApi({
    queryBuilder: { filters: ['Day', '>=', from] },
    groupBy: [{ field: 'Day', interval: 'month' }],
    aggregate: { function: 'sum', field: 'Hours' },
  });
  assert.deepEqual(
    points.map(([k]) => k),
    monthly.data.map((d) => d.keys[0]),
  );
  for (const [i, [k, v]] of points.entries()) near(v, monthly.data[i].value, `month ${k}`);
});

test('a saved chart and a saved table reopen from their links in a new browser context', async () => {
  // The lines chart of the test before is on screen: saved as it is.
  await page.getByText(/^Saved queries/).click();
  await page.getByLabel('Save as').fill('Hours by month');
  await page.getByRole('button', { name: 'Save query' }).click();
  const chartLink = (await page.getByTestId('saved-link').getAttribute('href')) as string;
  assert.match(chartLink, /^\/console\/explorer\/saved\/[0-9a-f-]{36}$/);
  const shownTotal = await page.getByTestId('chart-total').getAttribute('data-value');

  const other = await signIn(fx.browser, fx.server.baseUrl, who());
  watch(other.page);
  await other.page.goto(chartLink);
  await other.page.getByTestId('chart-total').waitFor();
  assert.equal(await other.page.getByTestId('chart-total').getAttribute('data-value'), shownTotal, 'the reopened chart draws the same total');
  assert.equal(await other.page.getByLabel('Named query').inputValue(), 'DE-TimeSheets');
  assert.equal(await other.page.getByLabel('Value 1').inputValue(), from, 'with its filter');
  await other.context.close();

  // A table: sorted by a header, saved, reopened with its order and its count.
  await page.getByRole('button', { name: 'Table' }).click();
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.getByTestId('result-status').waitFor();
  const hoursHeader = page.getByRole('region', { name: 'Rows of DE-TimeSheets' }).getByRole('button', { name: 'Hours', exact: true });
  await hoursHeader.click();
  await page.locator('th[aria-sort=ascending]').waitFor();
  await hoursHeader.click();
  await page.locator('th[aria-sort=descending]').waitFor();
  const body = JSON.parse((await page.getByTestId('query-builder-json').textContent()) ?? '');
  assert.deepEqual(body.queryBuilder.orderBy, [{ field: 'Hours', direction: 'desc' }], 'two clicks on a header: descending, on the server');
  const status = (await page.getByTestId('result-status').textContent()) as string;
  await page.getByLabel('Save as').fill('Longest entries');
  await page.getByRole('button', { name: 'Save query' }).click();
  await page.getByText('Saved as Longest entries').waitFor();
  const tableLink = (await page.getByTestId('saved-link').getAttribute('href')) as string;
  assert.notEqual(tableLink, chartLink);

  const again = await signIn(fx.browser, fx.server.baseUrl, who());
  watch(again.page);
  await again.page.goto(tableLink);
  await again.page.getByTestId('result-status').waitFor();
  assert.equal(((await again.page.getByTestId('result-status').textContent()) as string).split(' rows')[0], status.split(' rows')[0]);
  assert.equal(await again.page.locator('th[aria-sort=descending]').textContent(), 'Hours ▼');
  const api = await fx.server.request('POST', '/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute', {
    headers: appHeaders(tenant),
    json: { queryBuilder: { ...body.queryBuilder, take: 1 } },
  });
  const hoursColumn = await again.page.locator('.vtable thead th').evaluateAll((ths) => ths.findIndex((th) => th.textContent?.startsWith('Hours')));
  const firstHours = await again.page.locator('.vtable tbody tr').first().locator('td').nth(hoursColumn).textContent();
  assert.equal(firstHours, String(api.body.data[0].Hours));
  await again.context.close();
});

test('names before ids, ids on hover; the search box filters text fields; the column choice is remembered per query', async () => {
  await page.goto('/console/explorer');
  await page.getByLabel('Named query').selectOption('DE-Users');
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.getByTestId('result-status').waitFor();
  const headers = await page.locator('.vtable thead th').allTextContents();
  const meta = await fx.server.request('GET', '/api/v3/analytics/named-query/DE-Users/metadata', { headers: appHeaders(tenant) });
  const types = new Map((meta.body.fields as { name: string; dataType: string }[]).map((f) => [f.name, f.dataType]));
  const firstGuid = headers.findIndex((h) => types.get(h) === 'guid');
  assert.ok(firstGuid > 0 && headers.slice(firstGuid).every((h) => types.get(h) === 'guid'), `names come before ids: ${headers.join(', ')}`);
  assert.ok(!headers.includes('UserId') || !headers.includes('User'), 'an id beside its name is not a column of its own');
  const userCell = page.locator('.vtable tbody tr').first().locator('td').nth(headers.indexOf('User'));
  assert.match((await userCell.getAttribute('title')) ?? '', /\(UserId [0-9a-f-]{36}\)$/, 'the id is shown on hover of the name');
  await page.getByText(/^Fields \(/).click();
  await page.getByLabel('Show id columns').check();
  assert.ok((await page.locator('.vtable thead th').allTextContents()).includes('UserId'), 'ids on demand');

  const [{ name }] = (await owner.query(`select name from users where tenant_id = $1 and length(name) > 3 order by 1 limit 1`, [tenant.tenantId])).rows;
  const needle = String(name).slice(0, 3).toLowerCase();
  await page.getByLabel('Search text fields').fill(needle);
  await page.getByRole('button', { name: 'Run query' }).click();
  await page.getByTestId('result-status').waitFor();
  const body = JSON.parse((await page.getByTestId('query-builder-json').textContent()) ?? '');
  const api = await fx.server.request('POST', '/api/v3/analytics/named-query/DE-Users/dynamic-execute', { headers: appHeaders(tenant), json: body });
  assert.equal(api.status, 200, api.text);
  assert.ok(api.body.totalCount > 0);
  const shown = Number(/^([\d,]+) rows/.exec((await page.getByTestId('result-status').textContent()) ?? '')?.[1].replace(/,/g, ''));
  assert.equal(shown, api.body.totalCount);
  const all = await fx.server.request('POST', '/api/v3/analytics/named-query/DE-Users/dynamic-execute', {
    headers: appHeaders(tenant),
    json: { queryBuilder: { take: 10_000 } },
  });
  const text = (meta.body.fields as { name: string; dataType: string }[]).filter((f) => f.dataType === 'string').map((f) => f.name);
  const expected = (all.body.data as Record<string, unknown>[]).filter((r) =>
    text.some((f) =>
      String(r[f] ?? '')
        .toLowerCase()
        .includes(needle),
    ),
  );
  assert.equal(api.body.totalCount, expected.length, 'the rows where any text field contains the search');

  // Tick two fields, leave for another query and come back: still ticked, in that order.
  await page.getByLabel('Search text fields').fill('');
  await page.getByRole('checkbox', { name: /^Email\b/ }).check();
  await page.getByRole('checkbox', { name: /^User\b/ }).check();
  await page.getByLabel('Named query').selectOption('DE-Jobs');
  await page.getByLabel('Named query').selectOption('DE-Users');
  // The query builder JSON (in a closed details) shows the remembered choice once DE-Users' fields are in.
  await page.waitForFunction(() => document.querySelector('[data-testid=query-builder-json]')?.textContent?.includes('"fields"'));
  assert.ok(await page.getByRole('checkbox', { name: /^Email\b/, includeHidden: true }).isChecked());
  const json = JSON.parse((await page.getByTestId('query-builder-json').textContent()) ?? '');
  assert.deepEqual(json.queryBuilder.fields, ['Email', 'User']);
});

test('no console error on the explorer, its chart and saved queries', () => {
  assert.deepEqual(consoleErrors, []);
});
