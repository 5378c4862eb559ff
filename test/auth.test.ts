// Authentication through the HTTP API: app headers, password logins, tokens, refresh, delegates,
// and the login events they leave in the outbox.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let other: Awaited<ReturnType<TestServer['createTenant']>>;
const lookup = '/api/usertypes/name?name=Temporary';

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Auth Agency');
  other = await server.createTenant('Other Agency');
});
after(() => server.close());

async function loginEvents(tenantId: string): Promise<{ action_type: string; detail: Record<string, unknown> }[]> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    const res = await client.query(
      `select action_type, detail from events where tenant_id = $1 and action_type in ('LoginSucceeded','LoginFailed') order by seq`,
      [tenantId],
    );
    return res.rows;
  } finally {
    await client.end();
  }
}

describe('app headers', () => {
  test('good credentials reach the tenant', async () => {
    const res = await server.request('GET', lookup, { headers: appHeaders(tenant) });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Temporary');
  });

  test('missing, wrong secret, unknown app, unknown tenant and wrong tenant all answer the same 401', async () => {
    const cases: Record<string, string>[] = [
      {},
      { 'x-apptenant': tenant.tenantId, 'x-appid': tenant.appId },
      { ...appHeaders(tenant), 'x-appsecret': 'wrong' },
      { ...appHeaders(tenant), 'x-appid': 'app_unknown' },
      { ...appHeaders(tenant), 'x-apptenant': '00000000-0000-4000-8000-000000000000' },
      { ...appHeaders(tenant), 'x-apptenant': other.tenantId },
      { ...appHeaders(tenant), 'x-apptenant': 'not-a-uuid' },
    ];
    const bodies = new Set<string>();
    for (const headers of cases) {
      const res = await server.request('GET', lookup, { headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(res.body.status, 401);
      bodies.add(res.body.detail);
    }
    assert.equal(bodies.size, 1, 'every failure says the same thing');
  });

  test('X-AppUser that is not a user of the tenant is a 401', async () => {
    const res = await server.request('GET', lookup, { headers: { ...appHeaders(tenant), 'x-appuser': other.userId } });
    assert.equal(res.status, 401);
    const ok = await server.request('GET', lookup, { headers: { ...appHeaders(tenant), 'x-appuser': tenant.userId } });
    assert.equal(ok.status, 200);
  });

  test('a revoked app is refused and a rotated secret replaces the old one', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const created = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, {
      headers: admin,
      json: { name: 'ETL', roles: ['IntegrationRead'] },
    });
    assert.equal(created.status, 201);
    const creds = { tenantId: tenant.tenantId, appId: created.body.appId, appSecret: created.body.appSecret };
    assert.equal((await server.request('GET', lookup, { headers: appHeaders(creds) })).status, 200);
    const rotated = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps/${creds.appId}/rotate`, { headers: admin });
    assert.equal(rotated.status, 200);
    assert.equal((await server.request('GET', lookup, { headers: appHeaders(creds) })).status, 401);
    const fresh = { ...creds, appSecret: rotated.body.appSecret };
    assert.equal((await server.request('GET', lookup, { headers: appHeaders(fresh) })).status, 200);
    assert.equal((await server.request('DELETE', `/admin/tenants/${tenant.tenantId}/apps/${creds.appId}`, { headers: admin })).status, 200);
    assert.equal((await server.request('GET', lookup, { headers: appHeaders(fresh) })).status, 401);
  });
});

describe('access tokens', () => {
  test('client credentials give a token accepted in X-AccessToken and Authorization: Bearer', async () => {
    const res = await server.request('POST', '/api/auth/token', { headers: appHeaders(tenant) });
    assert.equal(res.status, 200);
    assert.equal(res.body.tokenType, 'Bearer');
    assert.equal(res.body.expiresIn, 3600);
    assert.equal(res.body.UserId, null);
    const token = res.body.accessToken;
    for (const headers of [{ 'x-accesstoken': token }, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const me = await server.request('GET', '/api/v3/whoami', { headers });
      assert.equal(me.status, 200);
      assert.equal(me.body.tenantId, tenant.tenantId);
      assert.ok(me.body.roles.includes('Administrator'));
    }
    assert.equal((await server.request('GET', lookup, { headers: { 'x-accesstoken': token } })).status, 401, 'the lookup takes app headers only');
  });

  test('password login with the platform body (any letter case) answers UserId and User', async () => {
    const res = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': tenant.tenantId },
      json: { username: 'ADMIN', PASSWORD: tenant.password, Persistent: true },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.UserId, tenant.userId);
    assert.deepEqual(res.body.User, { Id: tenant.userId, UserName: 'admin', Name: 'Administrator' });
    assert.ok(res.body.refreshToken);
  });

  test('a bad password and an unknown user fail with 401 and leave LoginFailed', async () => {
    const bad = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': tenant.tenantId },
      json: { UserName: 'admin', Password: 'wrong-password' },
    });
    assert.equal(bad.status, 401);
    const wrongTenant = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': other.tenantId },
      json: { UserName: 'admin', Password: tenant.password },
    });
    assert.equal(wrongTenant.status, 401, 'the admin of one tenant cannot log in to another');
    const events = await loginEvents(tenant.tenantId);
    const failed = events.filter((e) => e.action_type === 'LoginFailed');
    assert.ok(failed.some((e) => e.detail.Username === 'admin' && e.detail.LoginType === 'Token' && typeof e.detail.FailureReason === 'string'));
    assert.ok(events.some((e) => e.action_type === 'LoginSucceeded' && e.detail.LoginType === 'Token'));
  });

  test('refresh tokens rotate and are single use', async () => {
    const login = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': tenant.tenantId },
      json: { UserName: 'admin', Password: tenant.password },
    });
    const refreshed = await server.request('POST', '/api/auth/token/refresh', { json: { refreshToken: login.body.refreshToken } });
    assert.equal(refreshed.status, 200);
    assert.notEqual(refreshed.body.refreshToken, login.body.refreshToken);
    assert.equal(refreshed.body.UserId, tenant.userId);
    const me = await server.request('GET', '/api/v3/whoami', { headers: { 'x-accesstoken': refreshed.body.accessToken } });
    assert.equal(me.status, 200);
    assert.equal(me.body.userId, tenant.userId);
    const replay = await server.request('POST', '/api/auth/token/refresh', { json: { refreshToken: login.body.refreshToken } });
    assert.equal(replay.status, 401);
    const garbage = await server.request('POST', '/api/auth/token/refresh', { json: { refreshToken: 'nonsense' } });
    assert.equal(garbage.status, 401);
    const events = await loginEvents(tenant.tenantId);
    assert.ok(events.some((e) => e.action_type === 'LoginSucceeded' && e.detail.LoginType === 'RefreshToken'));
    assert.ok(events.some((e) => e.action_type === 'LoginFailed' && e.detail.LoginType === 'RefreshToken'));
  });

  test('tampered and garbage tokens are refused', async () => {
    const res = await server.request('POST', '/api/auth/token', { headers: appHeaders(tenant) });
    const [h, p, s] = res.body.accessToken.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    claims.tid = other.tenantId;
    const forged = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
    for (const token of [forged, 'garbage', `${h}.${p}.`]) {
      const r = await server.request('GET', '/api/v3/whoami', { headers: { 'x-accesstoken': token } });
      assert.equal(r.status, 401);
    }
  });

  test('LoginAsDelegate lets an Administrator act as another user; others may not', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const u = await server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
      headers: admin,
      json: { userName: 'jane', password: 'jane-password-1', name: 'Jane Doe' },
    });
    assert.equal(u.status, 201);
    const asJane = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': tenant.tenantId },
      json: { UserName: 'admin', Password: tenant.password, LoginAsDelegate: true, DelegatedUserName: 'jane' },
    });
    assert.equal(asJane.status, 200, asJane.text);
    assert.equal(asJane.body.UserId, u.body.userId);
    assert.equal(asJane.body.User.UserName, 'jane');
    const janeTries = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': tenant.tenantId },
      json: { UserName: 'jane', Password: 'jane-password-1', LoginAsDelegate: true, DelegatedUserName: 'admin' },
    });
    assert.equal(janeTries.status, 401);
    const events = await loginEvents(tenant.tenantId);
    assert.ok(events.some((e) => e.action_type === 'LoginSucceeded' && e.detail.LoginAsDelegate === true && e.detail.DelegatedUserName === 'jane'));
  });
});

describe('expiry', () => {
  test('an expired access token is a 401', async () => {
    const short = await startTestServer({ ATRIUM_TOKEN_LIFETIME_SECONDS: '1' });
    try {
      const t = await short.createTenant('Short-lived');
      const res = await short.request('POST', '/api/auth/token', { headers: appHeaders(t) });
      assert.equal(res.body.expiresIn, 1);
      const token = res.body.accessToken;
      const ok = await short.request('POST', '/api/auth/token/refresh', { json: { refreshToken: res.body.refreshToken } });
      assert.equal(ok.status, 200);
      await new Promise((r) => setTimeout(r, 2100));
      const late = await short.request('GET', '/api/v3/whoami', { headers: { 'x-accesstoken': token } });
      assert.equal(late.status, 401);
      assert.match(late.body.detail, /expired/);
    } finally {
      await short.close();
    }
  });
});
