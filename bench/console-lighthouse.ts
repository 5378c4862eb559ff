// Lighthouse (desktop) on the console's sign-in page and the query explorer, signed in. Lighthouse is not
// a dependency of the project (about 110 MB and 130 packages): install it anywhere and name its folder,
//   npm i --prefix /tmp/lh lighthouse@12.2.3
//   LIGHTHOUSE_DIR=/tmp/lh/node_modules node bench/console-lighthouse.ts
// Prints performance, accessibility, best practices and SEO per page; exits 1 below performance 95 or
// accessibility 100. A throwaway server with a small demo tenant, Debian's Chromium.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildConsole, isStale } from '../console/build.ts';
import { benchDatabase, benchEnv, runCli, startServerProcess } from './lib.ts';

const dir = process.env.LIGHTHOUSE_DIR;
if (!dir) {
  process.stderr.write('Set LIGHTHOUSE_DIR to a node_modules folder holding lighthouse (npm i --prefix /tmp/lh lighthouse@12.2.3).\n');
  process.exit(2);
}
const load = (name: string, file: string) => import(pathToFileURL(path.join(dir, name, file)).href);
const { startFlow, desktopConfig } = await load('lighthouse', 'core/index.js').then(async (m) => ({
  startFlow: m.startFlow,
  desktopConfig: (await load('lighthouse', 'core/config/desktop-config.js')).default,
}));
const puppeteer = (await load('puppeteer-core', 'lib/esm/puppeteer/puppeteer-core.js')).default;

if (isStale()) await buildConsole();
const db = await benchDatabase('atrium_console_lighthouse');
let failed = false;
try {
  const env = benchEnv(db.url);
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Demo Agency', '--slug', 'demo', '--demo', '--scale', '0.2', '--json'], env));
  const server = await startServerProcess(env);
  const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  try {
    const page = await browser.newPage();
    const flow = await startFlow(page, { config: desktopConfig, flags: { disableStorageReset: true } });
    await flow.navigate(`${server.baseUrl}/console/`, { name: 'Sign-in' });
    await page.type('#' + (await page.$eval('label ::-p-text(Tenant)', (l: HTMLLabelElement) => l.htmlFor)), 'demo');
    await page.type('#' + (await page.$eval('label ::-p-text(User name)', (l: HTMLLabelElement) => l.htmlFor)), creds.username);
    await page.type('#' + (await page.$eval('label ::-p-text(Password)', (l: HTMLLabelElement) => l.htmlFor)), creds.password);
    await Promise.all([page.waitForSelector('h1 ::-p-text(Query explorer)'), page.click('button[type=submit]')]);
    // The session is the tab's sessionStorage: a navigation in the same tab keeps it (storage is not reset).
    await flow.navigate(`${server.baseUrl}/console/explorer`, { name: 'Query explorer' });
    // Measured signed in: the explorer, not the sign-in page it would fall back to.
    await page.waitForSelector('h1 ::-p-text(Query explorer)', { timeout: 5000 });
    if (await page.$('label ::-p-text(Password)')) throw new Error('the explorer step was not signed in');
    const result = await flow.createFlowResult();
    for (const step of result.steps) {
      const c = step.lhr.categories;
      const score = (k: string) => Math.round((c[k]?.score ?? 0) * 100);
      process.stdout.write(
        `${step.name}: performance ${score('performance')}, accessibility ${score('accessibility')}, best practices ${score('best-practices')}, SEO ${score('seo')}` +
          ` (FCP ${Math.round(step.lhr.audits['first-contentful-paint'].numericValue)} ms, LCP ${Math.round(step.lhr.audits['largest-contentful-paint'].numericValue)} ms, TBT ${Math.round(step.lhr.audits['total-blocking-time'].numericValue)} ms)\n`,
      );
      for (const [id, a] of Object.entries(step.lhr.audits) as [string, { score: number | null; title: string; scoreDisplayMode: string }][])
        if (
          a.score !== null &&
          a.score < 1 &&
          a.scoreDisplayMode !== 'informative' &&
          step.lhr.categories.accessibility.auditRefs.some((r: { id: string }) => r.id === id)
        )
          process.stdout.write(`  accessibility: ${id}: ${a.title}\n`);
      if (score('performance') < 95 || score('accessibility') < 100) failed = true;
    }
  } finally {
    await browser.close();
    await server.stop();
  }
} finally {
  await db.stop();
}
process.exit(failed ? 1 : 0);
