// The web console's browser tests share this: one headless Chromium (Debian's package, never a
// downloaded one) driven by playwright-core, a test server with a demo tenant, and sign-in.
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { isStale } from '../console/build.ts';
import { startTestServer, type TestServer } from './helpers.ts';

export const CHROMIUM = process.env.ATRIUM_CHROMIUM ?? '/usr/bin/chromium';

export async function ensureConsoleBuilt(): Promise<void> {
  // npm test builds first; a single file run by hand may find the build missing or stale.
  if (isStale()) {
    const { buildConsole } = await import('../console/build.ts');
    await buildConsole();
  }
}

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does when it is absent).`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export interface ConsoleFixture {
  server: TestServer;
  browser: Browser;
  close: () => Promise<void>;
}

export async function startConsoleFixture(env: Record<string, string> = {}): Promise<ConsoleFixture> {
  await ensureConsoleBuilt();
  const server = await startTestServer({ ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s,1s', ...env });
  let browser: Browser;
  try {
    browser = await launchBrowser();
  } catch (err) {
    await server.close();
    throw err;
  }
  return {
    server,
    browser,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

/** A fresh browser context (its own sessionStorage) signed in through the sign-in page. */
export async function signIn(
  browser: Browser,
  baseUrl: string,
  who: { tenant: string; username: string; password: string },
  viewport = { width: 1280, height: 800 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, acceptDownloads: true, baseURL: baseUrl });
  const page = await context.newPage();
  // Confirmations (rotate, delete) are accepted as a user would.
  page.on('dialog', (d) => void d.accept());
  page.setDefaultTimeout(10_000);
  await page.goto('/console/');
  await page.getByLabel('Tenant (slug or id)').fill(who.tenant);
  await page.getByLabel('User name').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Query explorer' }).waitFor();
  return { context, page };
}
