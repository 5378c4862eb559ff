// OData links behind a reverse proxy: @odata.context and @odata.nextLink follow X-Forwarded-Proto/Host and
// Forwarded only when ATRIUM_TRUST_PROXY trusts the peer, and ATRIUM_PUBLIC_URL for requests on its host.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { startTestServer, type TestServer } from './helpers.ts';

const servers: TestServer[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

/** A server with these settings and a tenant with two users, so a page of one leaves a nextLink. */
async function serverWith(env: Record<string, string>) {
  const server = await startTestServer(env);
  servers.push(server);
  const tenant = await server.createTenant('Links');
  const user = await server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
    headers: { authorization: 'Bearer test-admin-token-0123456789' },
    json: { userName: 'second', password: 'a-long-password' },
  });
  assert.equal(user.status, 201, user.text);
  const basic = `Basic ${Buffer.from(`${tenant.tenantId}:${tenant.appId}:${tenant.appSecret}`).toString('base64')}`;
  return { server, basic, slug: tenant.slug };
}

/** GET with a Host of our choosing (fetch cannot set Host); answers the parsed JSON body. */
function get(server: TestServer, path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const url = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method: 'GET', headers: { prefer: 'odata.maxpagesize=1', ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

let untrusted: Awaited<ReturnType<typeof serverWith>>;
let trusted: Awaited<ReturnType<typeof serverWith>>;
let elsewhere: Awaited<ReturnType<typeof serverWith>>;

before(async () => {
  untrusted = await serverWith({ ATRIUM_PUBLIC_URL: 'https://bi.example.com/atrium' });
  trusted = await serverWith({ ATRIUM_TRUST_PROXY: 'true' });
  elsewhere = await serverWith({ ATRIUM_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7' });
});

const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'bi.example.com' };

test('without ATRIUM_TRUST_PROXY forwarded headers are ignored: links keep the request form', async () => {
  const { server, basic } = untrusted;
  const page = await get(server, '/odata/v4/DE_Users?$select=UserId', { authorization: basic, ...forwarded, forwarded: 'proto=https;host=evil.example' });
  assert.equal(page.status, 200, JSON.stringify(page.body));
  assert.equal(page.body['@odata.context'], `${server.baseUrl}/odata/v4/$metadata#DE_Users`);
  assert.ok(page.body['@odata.nextLink'].startsWith(`${server.baseUrl}/odata/v4/DE_Users?`), page.body['@odata.nextLink']);
});

test('a request on the host of ATRIUM_PUBLIC_URL is linked under ATRIUM_PUBLIC_URL (scheme and path)', async () => {
  const { server, basic } = untrusted;
  const page = await get(server, '/odata/v4/DE_Users?$select=UserId', { authorization: basic, host: 'bi.example.com' });
  assert.equal(page.status, 200, JSON.stringify(page.body));
  assert.equal(page.body['@odata.context'], 'https://bi.example.com/atrium/odata/v4/$metadata#DE_Users');
  assert.match(page.body['@odata.nextLink'], /^https:\/\/bi\.example\.com\/atrium\/odata\/v4\/DE_Users\?.*%24skip=1/);
});

test('a trusted proxy: X-Forwarded-Proto/Host, and Forwarded over them, name the links', async () => {
  const { server, basic } = trusted;
  const viaX = await get(server, '/odata/v4/DE_Users?$select=UserId', { authorization: basic, ...forwarded });
  assert.equal(viaX.status, 200, JSON.stringify(viaX.body));
  assert.equal(viaX.body['@odata.context'], 'https://bi.example.com/odata/v4/$metadata#DE_Users');
  assert.match(viaX.body['@odata.nextLink'], /^https:\/\/bi\.example\.com\/odata\/v4\/DE_Users\?/);

  const viaForwarded = await get(server, '/odata/v4/', {
    authorization: basic,
    forwarded: 'for=198.51.100.1;proto=http;host=first.example, for=192.0.2.60;proto=https;host="power.example.com:8443"',
    'x-forwarded-proto': 'http',
  });
  assert.equal(viaForwarded.body['@odata.context'], 'https://power.example.com:8443/odata/v4/$metadata');

  // The tenant base path stays in the links under the forwarded origin.
  const underSlug = await get(server, `/t/${trusted.slug}/odata/v4/`, { authorization: basic, ...forwarded });
  assert.equal(underSlug.body['@odata.context'], `https://bi.example.com/t/${trusted.slug}/odata/v4/$metadata`);

  // A malformed forwarded host is not written into links.
  const hostile = await get(server, '/odata/v4/', { authorization: basic, forwarded: 'proto=https;host="evil.example/<script>"' });
  assert.equal(hostile.body['@odata.context'], `https://${new URL(server.baseUrl).host}/odata/v4/$metadata`);
});

test('a peer outside the ATRIUM_TRUST_PROXY list is not believed', async () => {
  const { server, basic } = elsewhere;
  const page = await get(server, '/odata/v4/', { authorization: basic, ...forwarded, forwarded: 'proto=https;host=bi.example.com' });
  assert.equal(page.body['@odata.context'], `${server.baseUrl}/odata/v4/$metadata`);
});

test('ATRIUM_TRUST_PROXY accepts true, false, addresses, CIDRs and named ranges, and refuses anything else', () => {
  const base = { ATRIUM_SECRET_KEY: 'a'.repeat(64) };
  assert.equal(loadConfig(base).trustProxy, false);
  assert.equal(loadConfig({ ...base, ATRIUM_TRUST_PROXY: 'true' }).trustProxy, true);
  assert.deepEqual(loadConfig({ ...base, ATRIUM_TRUST_PROXY: '10.0.0.0/8, ::1, loopback' }).trustProxy, ['10.0.0.0/8', '::1', 'loopback']);
  assert.throws(() => loadConfig({ ...base, ATRIUM_TRUST_PROXY: 'proxy.internal' }), /ATRIUM_TRUST_PROXY must be .*"proxy.internal" is not an IP address/);
  assert.throws(() => loadConfig({ ...base, ATRIUM_TRUST_PROXY: '10.0.0.0/40' }), /invalid prefix length/);
});
