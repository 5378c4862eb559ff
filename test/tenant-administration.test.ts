// The tenant's own administration routes the console uses: apps (create, rotate, revoke) and users
// with roles, for Administrators only; and the schedules' cron preview.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: TenantCredentials;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Self Service');
});
after(async () => {
  await server?.close();
});

test('an Administrator creates an app whose secret works once shown, rotates it and revokes it', async () => {
  const h = appHeaders(tenant);
  const created = await server.request('POST', '/api/v3/apps', { headers: h, json: { name: 'BI tool', roles: ['ScheduleRead'] } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.body.roles, ['ScheduleRead']);
  const creds = { tenantId: tenant.tenantId, appId: created.body.appId, appSecret: created.body.appSecret };
  const who = await server.request('GET', '/api/v3/whoami', { headers: appHeaders(creds) });
  assert.deepEqual(who.body.roles, ['ScheduleRead']);

  const list = await server.request('GET', '/api/v3/apps', { headers: h });
  const listed = list.body.find((a: { appId: string }) => a.appId === creds.appId);
  assert.deepEqual(
    { ...listed, createdOnUtc: typeof listed.createdOnUtc },
    {
      appId: creds.appId,
      name: 'BI tool',
      roles: ['ScheduleRead'],
      createdOnUtc: 'string',
      rotatedOnUtc: null,
      revokedOnUtc: null,
    },
  );
  assert.ok(!JSON.stringify(list.body).includes(creds.appSecret), 'a listing never shows a secret');

  const rotated = await server.request('POST', `/api/v3/apps/${creds.appId}/rotate`, { headers: h });
  assert.equal(rotated.status, 200);
  assert.equal((await server.request('GET', '/api/v3/whoami', { headers: appHeaders(creds) })).status, 401);
  const fresh = { ...creds, appSecret: rotated.body.appSecret };
  assert.equal((await server.request('GET', '/api/v3/whoami', { headers: appHeaders(fresh) })).status, 200);

  assert.equal((await server.request('DELETE', `/api/v3/apps/${creds.appId}`, { headers: h })).status, 200);
  assert.equal((await server.request('GET', '/api/v3/whoami', { headers: appHeaders(fresh) })).status, 401);
  assert.equal((await server.request('POST', `/api/v3/apps/${creds.appId}/rotate`, { headers: h })).status, 404);
});

test('users with their roles are listed; a user without Administrator is refused every route', async () => {
  const user = await server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName: 'integrator', password: 'a-long-password', roles: ['WebhookSubscriptionGet'] },
  });
  assert.equal(user.status, 201, user.text);
  const listed = await server.request('GET', '/api/v3/users', { headers: appHeaders(tenant) });
  assert.equal(listed.status, 200);
  const integrator = listed.body.users.find((u: { userName: string }) => u.userName === 'integrator');
  assert.deepEqual(integrator.roles, ['WebhookSubscriptionGet']);
  assert.ok(listed.body.roles.some((r: { name: string }) => r.name === 'Administrator'));

  const token = await server.request('POST', '/api/auth/token', {
    headers: { 'x-apptenant': tenant.slug },
    json: { UserName: 'integrator', Password: 'a-long-password' },
  });
  const bearer = { authorization: `Bearer ${token.body.accessToken}` };
  for (const [method, path] of [
    ['GET', '/api/v3/apps'],
    ['POST', `/api/v3/apps/${tenant.appId}/rotate`],
    ['DELETE', `/api/v3/apps/${tenant.appId}`],
    ['GET', '/api/v3/users'],
  ]) {
    const res = await server.request(method, path, { headers: bearer });
    assert.equal(res.status, 403, `${method} ${path}`);
    assert.equal(res.body.requiredRole, 'Administrator');
  }
  const created = await server.request('POST', '/api/v3/apps', { headers: bearer, json: { name: 'sneaky' } });
  assert.equal(created.status, 403);
});

test('the cron preview answers the next five fire times and the words, or a 400 naming the problem', async () => {
  const h = appHeaders(tenant);
  const ok = await server.request('GET', `/api/v3/analytics/schedules/cron-preview?cronExpression=${encodeURIComponent('5 0 * * *')}`, { headers: h });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.nextRunsUtc.length, 5);
  for (const t of ok.body.nextRunsUtc) assert.match(t, /T00:05:00\.000Z$/);
  assert.match(ok.body.cronDescription, /00:05/);
  const bad = await server.request('GET', `/api/v3/analytics/schedules/cron-preview?cronExpression=${encodeURIComponent('61 0 * * *')}`, { headers: h });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.errors[0].path, '/querystring/cronExpression');
});
