// App headers verified once per keep-alive connection (decision 0060): a rotated secret, a revoked app and a
// role change still take effect on the very next request of the same connection.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
// One socket for every request of this file, so each one after the first reuses the connection.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Connection Agency');
});
after(async () => {
  agent.destroy();
  await server.close();
});

/** GET on the shared connection: status, body, and whether the request went out on a connection used before. */
function get(path: string, headers: Record<string, string>): Promise<{ status: number; body: any; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.baseUrl}${path}`, { agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null, reused: req.reusedSocket }));
    });
    req.on('error', reject);
  });
}

async function createApp(roles: string[]): Promise<{ tenantId: string; appId: string; appSecret: string }> {
  const created = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, { headers: admin, json: { name: 'Connection app', roles } });
  assert.equal(created.status, 201);
  return { tenantId: tenant.tenantId, appId: created.body.appId, appSecret: created.body.appSecret };
}

test('on one connection, a rotated secret is refused and a revoked app too, on the next request', async () => {
  const creds = await createApp(['IntegrationRead']);
  assert.equal((await get('/api/v3/whoami', appHeaders(creds))).status, 200);
  const again = await get('/api/v3/whoami', appHeaders(creds));
  assert.equal(again.status, 200);
  assert.ok(again.reused, 'the second request went out on the same connection');
  const rotated = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps/${creds.appId}/rotate`, { headers: admin });
  assert.equal(rotated.status, 200);
  const old = await get('/api/v3/whoami', appHeaders(creds));
  assert.ok(old.reused);
  assert.equal(old.status, 401, 'the old secret is refused on the connection it was verified on');
  const fresh = { ...creds, appSecret: rotated.body.appSecret };
  assert.equal((await get('/api/v3/whoami', appHeaders(fresh))).status, 200);
  assert.equal((await get('/api/v3/whoami', appHeaders(fresh))).status, 200);
  assert.equal((await server.request('DELETE', `/admin/tenants/${tenant.tenantId}/apps/${creds.appId}`, { headers: admin })).status, 200);
  const revoked = await get('/api/v3/whoami', appHeaders(fresh));
  assert.ok(revoked.reused);
  assert.equal(revoked.status, 401);
});

test('on one connection, a wrong secret after a right one is refused', async () => {
  const creds = await createApp(['IntegrationRead']);
  assert.equal((await get('/api/v3/whoami', appHeaders(creds))).status, 200);
  const wrong = `${creds.appSecret.slice(0, -1)}${creds.appSecret.endsWith('A') ? 'B' : 'A'}`;
  const res = await get('/api/v3/whoami', appHeaders({ ...creds, appSecret: wrong }));
  assert.ok(res.reused);
  assert.equal(res.status, 401);
  assert.equal((await get('/api/v3/whoami', appHeaders(creds))).status, 200);
});

test('on one connection, a change of the app roles applies to the next request', async () => {
  const creds = await createApp(['IntegrationRead']);
  const lookup = '/api/usertypes/name?name=Temporary';
  assert.equal((await get(lookup, appHeaders(creds))).status, 200);
  assert.deepEqual((await get('/api/v3/whoami', appHeaders(creds))).body.roles, ['IntegrationRead']);
  const owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  try {
    // The role taken away as an operator would in SQL: the trigger notifies every process (NOTIFY atrium_auth).
    await owner.query(`delete from app_roles where app_id = (select id from apps where app_id = $1)`, [creds.appId]);
    // This process drops its verifications when the notification arrives, well within the app cache's 30 s.
    const until = Date.now() + 10_000;
    let res = await get(lookup, appHeaders(creds));
    while (res.status === 200 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      res = await get(lookup, appHeaders(creds));
    }
    assert.ok(res.reused);
    assert.equal(res.status, 403, 'without the role the lookup is forbidden');
    const me = await get('/api/v3/whoami', appHeaders(creds));
    assert.deepEqual(me.body.roles, []);
    // Given back, and this process told at once (as rotate and revoke do): the very next request has it.
    await owner.query(
      `insert into app_roles (tenant_id, app_id, role_id) select a.tenant_id, a.id, r.id from apps a join roles r on r.tenant_id = a.tenant_id and r.name = 'IntegrationRead' where a.app_id = $1`,
      [creds.appId],
    );
    server.runtime.ctx.auth.invalidateCaches();
    const back = await get(lookup, appHeaders(creds));
    assert.ok(back.reused);
    assert.equal(back.status, 200);
  } finally {
    await owner.end();
  }
});
