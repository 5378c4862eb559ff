// Screenshots of every console page for docs/console.md, taken the way the browser tests drive it:
// a throwaway server with a small demo tenant, some webhooks, schedules and a custom table made
// through the API, then each page in headless Chromium at 1280x800 (and the explorer at phone width).
// Run: node console/screenshots.ts   (writes docs/console/*.png)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { benchDatabase, benchEnv, runCli, startServerProcess } from '../bench/lib.ts';
import { FAILS, FLOW } from '../test/console-flow-fixtures.ts';
import { buildConsole, isStale } from './build.ts';

const out = path.resolve(import.meta.dirname, '..', 'docs', 'console');
if (isStale()) await buildConsole();

// A receiver that accepts deliveries, and refuses every third so the history and chart show failures.
let hits = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    hits++;
    res.writeHead(hits % 3 === 0 ? 503 : 200, { 'content-type': 'application/json' }).end(hits % 3 === 0 ? '{"error":"busy"}' : '{"ok":true}');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/atrium`;

const db = await benchDatabase('atrium_console_screenshots');
try {
  const env = benchEnv(db.url, { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s,2s' });
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Demo Agency', '--slug', 'demo', '--demo', '--scale', '0.2', '--json'], env));
  const server = await startServerProcess(env);
  const api = async (method: string, url: string, body?: unknown, token?: string) => {
    const headers: Record<string, string> = token
      ? { authorization: `Bearer ${token}` }
      : { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${server.baseUrl}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    const sub = await api('POST', '/api/webhook-subscriptions', {
      Name: 'Users to CRM',
      ActionType: 'Created',
      DocumentType: 'Skill.Module.BusinessObjects.User',
      Url: receiverUrl,
      Active: true,
      DetailFilters: [{ groupCondition: 'And', jsonPathExpression: 'Mail', condition: 'Contains', value: '@agency.example' }],
    });
    await api('POST', '/api/webhook-subscriptions', {
      Name: 'Project stages to ERP',
      ActionType: 'StageUpdated',
      DocumentType: 'Skill.Module.BusinessObjects.Project',
      Url: 'https://erp.example.com/hooks',
      Active: false,
    });
    for (let i = 0; i < 6; i++) await api('POST', `/api/webhook-subscriptions/${sub.id}/test`);
    const schedule = await api('POST', '/api/v3/analytics/schedules', {
      Name: 'Nightly approved timesheets',
      Query: 'DE-TimeSheets',
      Format: 'csv',
      CronExpression: '5 0 * * *',
      queryBuilder: { filters: [['Hours', '>', 4]] },
    });
    await api('POST', '/api/v3/analytics/schedules', { Name: 'Weekly users', Query: 'DE-Users', Format: 'xlsx', CronExpression: '0 6 * * 1' });
    await api('POST', `/api/v3/analytics/schedules/${schedule.id}/run?wait=20`);
    await api('POST', '/api/v3/automations', {
      name: 'Greeter',
      actions: [
        { name: 'Start', type: 'Start', next: 'Shout' },
        { name: 'Shout', type: 'SetParameter', value: "{{['#HttpRequest']$.Body.name | ToUpperCase}}", next: 'Done' },
        { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: { hello: "{{['Shout']}}" } } },
      ],
    });
    const flow = await api('POST', '/api/v3/automations', { ...FLOW, name: 'Order intake' });
    const fails = await api('POST', '/api/v3/automations', FAILS);
    const token = (await api('POST', '/api/auth/token')).accessToken;
    await api(
      'POST',
      '/api/v3/custom-tables/Budgets',
      {
        KeyColumnName: 'Code',
        KeyDataTypeId: 5,
        Columns: [
          { ColumnName: 'Client', ColumnDataTypeId: 6 },
          { ColumnName: 'Amount', ColumnDataTypeId: 4 },
          { ColumnName: 'Approved', ColumnDataTypeId: 0 },
          { ColumnName: 'ValidFrom', ColumnDataTypeId: 1 },
        ],
      },
      token,
    );
    const rows = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli'].map((client, i) => ({
      KeyValue: `B-${i + 1}`,
      Columns: [
        { ColumnName: 'Client', Value: client },
        { ColumnName: 'Amount', Value: (i + 1) * 1250.5 },
        { ColumnName: 'Approved', Value: i % 2 === 0 },
        { ColumnName: 'ValidFrom', Value: `2026-0${i + 1}-01` },
      ],
    }));
    await api('PUT', '/api/v3/custom-tables/Budgets/rows', { OperationType: 'UpsertMany', UpsertManyModel: rows }, token);
    await api('POST', '/api/v3/apps', { name: 'Power BI', roles: ['ScheduleRead'] });
    await new Promise((r) => setTimeout(r, 4000));

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: server.baseUrl });
    const page = await context.newPage();
    const shot = (name: string, p: Page = page) => p.screenshot({ path: path.join(out, `${name}.png`), fullPage: false });
    await page.goto('/console/');
    await page.getByLabel('Tenant (slug or id)').fill('demo');
    await page.getByLabel('User name').fill(creds.username);
    await shot('01-sign-in');
    await page.getByLabel('Password').fill(creds.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Named query').selectOption('DE-TimeSheets');
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByLabel('Field 1').selectOption('Hours');
    await page.getByLabel('Operation 1').selectOption('>');
    await page.getByLabel('Value 1').fill('4');
    await page.getByRole('button', { name: 'Add sort' }).click();
    await page.getByLabel('Sort field 1').selectOption('Day');
    await page.getByLabel('Direction 1').selectOption('desc');
    await page.getByRole('button', { name: 'Run query' }).click();
    await page.getByTestId('result-status').waitFor();
    await page.getByTestId('result-status').scrollIntoViewIfNeeded();
    await shot('02-explorer');
    await page.getByText('Query builder JSON, curl and OData URL').click();
    await page.getByTestId('query-builder-json').scrollIntoViewIfNeeded();
    await shot('03-explorer-json-curl-odata');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: 'Users to CRM' }).waitFor();
    await shot('04-webhooks');
    await page.getByRole('link', { name: 'Users to CRM' }).click();
    await page.getByRole('table', { name: 'Invocation history' }).locator('tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'Attempts' }).first().click();
    await shot('05-webhook-history');
    await page.getByRole('button', { name: 'Edit' }).click();
    await shot('06-webhook-edit');
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Scheduled extraction' }).click();
    await page.getByRole('link', { name: 'Nightly approved timesheets' }).waitFor();
    await shot('07-schedules');
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByLabel('Cron expression (UTC)').fill('30 7 * * 1-5');
    await page.getByText('At 07:30').waitFor();
    await shot('08-schedule-new-preview');
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Nightly approved timesheets' }).click();
    await page.getByRole('table', { name: 'Runs' }).locator('tbody tr').first().waitFor();
    await shot('09-schedule-runs');
    await page.getByRole('link', { name: 'Custom tables' }).click();
    await page.getByRole('link', { name: 'Budgets' }).click();
    await page.getByLabel('B-2 Amount').fill('4100.25');
    await shot('10-custom-table-rows');
    await page.getByRole('link', { name: 'Apps and users' }).click();
    await page.getByRole('table', { name: 'Users' }).locator('tbody tr').first().waitFor();
    await shot('11-apps-users');
    await page.getByRole('link', { name: 'Automations' }).click();
    await page.getByRole('link', { name: 'Greeter' }).click();
    await page.getByLabel('Run input (JSON)').fill('{"name":"ada"}');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByRole('table', { name: 'Actions of the run' }).waitFor();
    await shot('13-automation-run-log');
    // The flow of a 12-action automation with a run on it, its editor, and a failed run.
    await page.goto(`/console/automations/${flow.id}`);
    await page.getByLabel('Run input (JSON)').fill('{"mode":"each","items":[2,3]}');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.locator('g[data-action="Done"][data-status="succeeded"]').waitFor();
    await page.locator('figure[data-workflow=""] g[data-action="Prepare"]').click();
    await page.setViewportSize({ width: 1280, height: 1400 });
    await page.locator('figure[data-workflow=""]').scrollIntoViewIfNeeded();
    await page.evaluate(() => document.querySelector('figure[data-workflow=""]')?.scrollIntoView({ block: 'start' }));
    await shot('15-automation-flow-run');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Edit definition' }).click();
    await page.getByRole('dialog', { name: 'Edit automation' }).locator('g[data-action="Check"]').waitFor();
    await shot('16-automation-editor-diagram');
    await page.keyboard.press('Escape');
    await page.goto(`/console/automations/${fails.id}`);
    await page.getByLabel('Run input (JSON)').fill('{"order":1}');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.locator('g[data-failing="true"]').click();
    await page.evaluate(() => document.querySelector('h2 + p, figure')?.scrollIntoView({ block: 'start' }));
    await shot('17-automation-failed-run');
    await page.goto('/console/webhooks/events');
    await page.getByLabel('Document type').selectOption({ label: 'User' });
    await page.getByTestId('example-payload').waitFor();
    await page.getByRole('heading', { name: 'Example payload' }).scrollIntoViewIfNeeded();
    await shot('18-webhook-event-catalogue');
    // Dark mode (the system's setting): the explorer and a run on the flow.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`/console/webhooks/${sub.id}`);
    await page.getByRole('table', { name: 'Invocation history' }).locator('tbody tr').first().waitFor();
    await shot('19-dark-webhook-history');
    await page.goto(`/console/automations/${fails.id}`);
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.locator('g[data-failing="true"]').waitFor();
    await page.evaluate(() => document.querySelector('figure')?.scrollIntoView({ block: 'center' }));
    await shot('20-dark-automation-failed-run');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.getByRole('link', { name: 'User feed' }).click();
    await page.getByLabel('Schedule (cron, UTC)').waitFor();
    await shot('14-user-feed');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, baseURL: server.baseUrl });
    const mobile = await phone.newPage();
    await mobile.goto('/console/');
    await mobile.getByLabel('Tenant (slug or id)').fill('demo');
    await mobile.getByLabel('User name').fill(creds.username);
    await mobile.getByLabel('Password').fill(creds.password);
    await mobile.getByRole('button', { name: 'Sign in' }).click();
    await mobile.getByRole('button', { name: 'Menu' }).click();
    await shot('12-phone-menu', mobile);
  } finally {
    await browser.close();
    await server.stop();
  }
} finally {
  await db.stop();
  receiver.close();
}
