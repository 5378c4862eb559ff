// The MCP authorization flow as a person meets it, in headless Chromium: an assistant's authorization URL
// leads to the console's sign-in (the tenant named by the address), then to the consent page showing the
// client, the tenant, the user and what it may do; Allow returns to the client with a code that the token
// endpoint exchanges (PKCE) for a token the MCP endpoint accepts. ATRIUM_MCP_SCREENSHOTS=1 writes the
// pages to docs/mcp/ for docs/mcp.md.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type ConsoleFixture, startConsoleFixture } from './console-browser.ts';
import { ADMIN_TOKEN } from './helpers.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';
const SHOTS = process.env.ATRIUM_MCP_SCREENSHOTS ? path.resolve(import.meta.dirname, '../docs/mcp') : null;
let f: ConsoleFixture;

before(async () => {
  f = await startConsoleFixture();
});
after(() => f?.close());

test('authorization URL -> sign-in -> consent (client, tenant, user, scopes) -> code -> token accepted by /t/{slug}/mcp', async () => {
  const tenant = await f.server.createTenant('Northwind Creative');
  const user = await f.server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName: 'maria', password: 'a-long-password-123', name: 'Maria Lopes', roles: ['JobRead', 'ProjectRead'] },
  });
  assert.equal(user.status, 201, user.text);
  const registered = await f.server.request('POST', '/oauth/register', { json: { client_name: 'Claude', redirect_uris: [REDIRECT] } });
  assert.equal(registered.status, 201, registered.text);
  const verifier = randomBytes(32).toString('base64url');
  const resource = `${f.server.baseUrl}/t/${tenant.slug}/mcp`;
  const authorize = new URL(`${f.server.baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: registered.body.client_id,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'st-123',
    scope: 'mcp:read mcp:write',
    resource,
  }))
    authorize.searchParams.set(k, v);

  const context = await f.browser.newContext({ viewport: { width: 900, height: 760 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  let returned: URL | null = null;
  await page.route(`${REDIRECT}**`, async (route) => {
    returned = new URL(route.request().url());
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' });
  });
  try {
    await page.goto(authorize.toString());
    assert.match(page.url(), new RegExp(`/t/${tenant.slug}/console/oauth/consent\\?`));
    assert.equal(await page.getByLabel('Tenant (slug or id)').inputValue(), tenant.slug, 'the address names the tenant');
    if (SHOTS) {
      await mkdir(SHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SHOTS, '01-sign-in.png') });
    }
    await page.getByLabel('User name').fill('maria');
    await page.getByLabel('Password').fill('a-long-password-123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Allow Claude to use Atrium?' }).waitFor();
    const text = await page.locator('main').innerText();
    assert.match(text, /Northwind Creative/);
    assert.match(text, /maria/);
    assert.match(text, /JobRead/);
    assert.match(text, /ProjectRead/);
    assert.match(text, /mcp:read/);
    assert.match(text, /mcp:write/);
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, '02-consent.png') });
    await page.getByRole('button', { name: 'Allow' }).click();
    for (let i = 0; i < 100 && !returned; i++) await new Promise((r) => setTimeout(r, 50));
  } finally {
    await context.close();
  }
  const back = returned as URL | null;
  assert.ok(back, 'the browser was sent back to the client');
  assert.equal(back.searchParams.get('state'), 'st-123');
  const token = await fetch(`${f.server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id: registered.body.client_id,
      redirect_uri: REDIRECT,
      resource,
    }),
  });
  assert.equal(token.status, 200);
  const { access_token } = (await token.json()) as { access_token: string };
  const init = await fetch(resource, {
    method: 'POST',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'b', version: '1' } },
    }),
  });
  assert.equal(init.status, 200);
  await init.text();
});
