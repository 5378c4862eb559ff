// Web console benchmark on the demo generator at scale 50 (about 1.05M timesheets): in Chromium
// (headless, Debian's package), the query explorer runs DE-TimeSheets unfiltered (every row counted)
// and with a filter; measured from the click on "Run query" to the first 100 rows drawn in the
// table. The baseline is the same dynamic-execute call made by hand from this process (undici, JSON
// parsed), alternating with the console's runs; the rows shown are checked to be the API's.
// Also the first page load: JavaScript bytes gzip-compressed and the time to the sign-in form.
// Run: npm run bench -- console   (BENCH_SCALE=50, BENCH_RUNS=10)
import os from 'node:os';
import { chromium } from 'playwright-core';
import { request } from 'undici';
import { isStale } from '../console/build.ts';
import { benchDatabase, benchEnv, fmt, median, runCli, startServerProcess } from './lib.ts';

const SCALE = process.env.BENCH_SCALE ?? '50';
const RUNS = Number(process.env.BENCH_RUNS ?? 10);

if (isStale()) await (await import('../console/build.ts')).buildConsole();
const db = await benchDatabase('atrium_bench_console');
try {
  const env = benchEnv(db.url);
  const t0 = Date.now();
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--slug', 'bench', '--demo', '--scale', SCALE, '--json'], env));
  console.log(
    `demo data at scale ${SCALE}: ${fmt((Date.now() - t0) / 1000, 1)} s; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const server = await startServerProcess(env);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: server.baseUrl });
    const page = await context.newPage();
    let jsBytes = 0;
    page.on('response', async (res) => {
      if (res.url().endsWith('.js')) jsBytes += Number((await res.headerValue('content-length')) ?? 0);
    });
    const loadStart = performance.now();
    await page.goto('/console/');
    await page.getByLabel('Password').waitFor();
    const loadMs = performance.now() - loadStart;
    console.log(`first load: ${fmt(jsBytes / 1024, 1)} KB of JavaScript over the wire (gzip/br as the browser asked), sign-in form after ${fmt(loadMs)} ms`);
    await page.getByLabel('Tenant (slug or id)').fill('bench');
    await page.getByLabel('User name').fill(creds.username);
    await page.getByLabel('Password').fill(creds.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Named query').selectOption('DE-TimeSheets');
    await page.getByRole('button', { name: 'Add filter' }).waitFor();

    const token = (await page.evaluate(() => JSON.parse(sessionStorage.getItem('atrium.console.session') ?? '{}').accessToken)) as string;
    const byHand = async (qb: object) => {
      const started = performance.now();
      const res = await request(`${server.baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'x-apptenant': creds.tenantId, 'content-type': 'application/json' },
        body: JSON.stringify({ queryBuilder: { ...qb, skip: 0, take: 100 } }),
      });
      const text = await res.body.text();
      const ms = performance.now() - started;
      return { ms, page: JSON.parse(text) as { data: Record<string, unknown>[]; totalCount: number } };
    };
    let run = 0;
    const inConsole = async () => {
      const started = performance.now();
      await page.getByRole('button', { name: 'Run query' }).click();
      run++;
      const region = page.locator(`[data-run="${run}"]`).getByRole('region', { name: 'Rows of DE-TimeSheets' });
      // Drawn: the 100th row of the first page is in the table and shows data, not a placeholder.
      await region.locator('tbody tr[aria-rowindex="17"] td').first().filter({ hasNotText: '…' }).waitFor();
      const ms = performance.now() - started;
      const status = (await page.locator(`[data-run="${run}"]`).getByTestId('result-status').textContent()) ?? '';
      const first = await region.locator('tbody tr').first().locator('td').allTextContents();
      return { ms, status, first };
    };

    for (const [label, setup, qb] of [
      ['unfiltered (every row counted)', async () => {}, {}],
      [
        'filter Hours > 4, orderBy Day desc',
        async () => {
          await page.getByRole('button', { name: 'Add filter' }).click();
          await page.getByLabel('Field 1').selectOption('Hours');
          await page.getByLabel('Operation 1').selectOption('>');
          await page.getByLabel('Value 1').fill('4');
          await page.getByRole('button', { name: 'Add sort' }).click();
          await page.getByLabel('Sort field 1').selectOption('Day');
          await page.getByLabel('Direction 1').selectOption('desc');
        },
        { filters: ['Hours', '>', 4], orderBy: [{ field: 'Day', direction: 'desc' }] },
      ],
    ] as const) {
      await setup();
      const shown: number[] = [];
      const inPage: number[] = [];
      const hand: number[] = [];
      let last: Awaited<ReturnType<typeof inConsole>> | null = null;
      let api: Awaited<ReturnType<typeof byHand>> | null = null;
      for (let i = 0; i < RUNS; i++) {
        last = await inConsole();
        shown.push(last.ms);
        inPage.push(Number(/in (\d+) ms/.exec(last.status)?.[1]));
        api = await byHand(qb);
        hand.push(api.ms);
      }
      if (!last || !api) throw new Error('no runs');
      const firstKey = Object.keys(api.page.data[0])[0];
      if (last.first[0] !== String(api.page.data[0][firstKey] ?? '') || !last.status.startsWith(api.page.totalCount.toLocaleString('en')))
        throw new Error(
          `the console shows other rows than the API: ${last.status} / ${last.first[0]} vs ${api.page.totalCount} / ${api.page.data[0][firstKey]}`,
        );
      console.log(
        `${label}: ${fmt(api.page.totalCount)} rows; console click -> 100 rows drawn median ${fmt(median(shown))} ms (min ${fmt(Math.min(...shown))}, max ${fmt(Math.max(...shown))}), of which the page's own fetch of the first page median ${fmt(median(inPage))} ms; ` +
          `by hand (undici + JSON.parse) median ${fmt(median(hand))} ms; ratio ${fmt(median(shown) / median(hand), 2)}`,
      );
    }
  } finally {
    await browser.close();
    await server.stop();
  }
} finally {
  await db.stop();
}
