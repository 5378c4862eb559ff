// Tenants addressed without X-AppTenant, as the platform's own clients do: the base path /t/{slug} and a
// Host on ATRIUM_TENANT_HOST_PATTERN, through real HTTP. Slugs, conflicting names, and links that keep
// the form the caller used (Location, Link, OData, the reference, webhook document links).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, type Receiver, startReceiver, USER_TYPE } from './webhooks-helpers.ts';

const PUBLIC_URL = 'https://atrium.example.com';
const PATTERN = 'apiv2-{tenant}.atrium.example.com';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

let server: TestServer;
let receiver: Receiver;
let demo: Awaited<ReturnType<TestServer['createTenant']>>;
let other: Awaited<ReturnType<TestServer['createTenant']>>;
/** The demo tenant's users (its admin and two more), sorted: what every page-through must answer. */
let userIds: string[];

async function createTenant(json: Record<string, unknown>) {
  return server.request('POST', '/admin/tenants', { headers: admin, json });
}

/** A request with a Host of our choosing (fetch does not let a caller set Host). */
function viaHost(method: string, path: string, host: string, headers: Record<string, string> = {}, json?: unknown) {
  const url = new URL(server.baseUrl);
  const body = json === undefined ? undefined : JSON.stringify(json);
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }>((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, host, ...(body ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text && /json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : text,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

before(async () => {
  server = await startTestServer({ ATRIUM_PUBLIC_URL: PUBLIC_URL, ATRIUM_TENANT_HOST_PATTERN: PATTERN, ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  const created = await createTenant({ name: 'Demo Agency', slug: 'demo' });
  assert.equal(created.status, 201, created.text);
  demo = created.body;
  other = await server.createTenant('Other Agency');
  // Two more users, so that a page of two leaves a second page.
  userIds = [demo.userId];
  for (const userName of ['ana', 'bruno']) {
    const res = await server.request('POST', `/admin/tenants/${demo.tenantId}/users`, { headers: admin, json: { userName, password: 'a-long-password' } });
    assert.equal(res.status, 201, res.text);
    userIds.push(res.body.userId);
  }
  userIds.sort();
});
after(async () => {
  await receiver?.close();
  await server?.close();
});

describe('slugs', () => {
  test('a tenant gets the slug asked for, or one derived from its name and made unique; the answer carries its base URL', async () => {
    assert.equal(demo.slug, 'demo');
    assert.equal(demo.baseUrl, 'https://apiv2-demo.atrium.example.com');
    assert.equal(other.slug, 'other-agency');
    const again = await createTenant({ name: 'Other Agency' });
    assert.equal(again.status, 201, again.text);
    assert.equal(again.body.slug, 'other-agency-2');
    const accents = await createTenant({ name: '  Agência Ñandú & Co. ' });
    assert.equal(accents.body.slug, 'agencia-nandu-co');
    const list = await server.request('GET', '/admin/tenants', { headers: admin });
    assert.deepEqual(
      list.body.map((t: { slug: string }) => t.slug),
      ['demo', 'other-agency', 'other-agency-2', 'agencia-nandu-co'],
    );
  });

  test('a taken slug is 409 and a malformed one 400, naming it', async () => {
    const taken = await createTenant({ name: 'Copycat', slug: 'demo' });
    assert.equal(taken.status, 409, taken.text);
    for (const slug of ['Demo', '-demo', 'de mo', 'demo-', 'a'.repeat(64)]) {
      const res = await createTenant({ name: 'Bad', slug });
      assert.equal(res.status, 400, `${slug}: ${res.text}`);
      assert.ok(
        res.body.errors.some((e: { path: string }) => e.path === '/body/slug'),
        res.text,
      );
    }
  });
});

describe('the base path /t/{slug}', () => {
  test("the platform's login body with no X-AppTenant answers the user id; a paging client then reads a DE-* query as that user", async () => {
    const login = await server.request('POST', '/t/demo/api/auth/token', {
      json: { UserName: demo.username, Password: demo.password, Persistent: false, LoginAsDelegate: false, DelegatedUserName: null },
    });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.UserId, demo.userId);
    const headers = { 'x-appid': demo.appId, 'x-appsecret': demo.appSecret, 'x-appuser': login.body.UserId };
    const ids: string[] = [];
    let total = -1;
    for (let skip = 0; total < 0 || skip < total; skip += 2) {
      const page = await server.request('POST', '/t/demo/api/v3/analytics/named-query/DE-Users/dynamic-execute', {
        headers,
        json: { queryBuilder: { skip, take: 2, orderBy: [{ field: 'UserId' }] } },
      });
      assert.equal(page.status, 200, page.text);
      total = page.body.totalCount;
      ids.push(...page.body.data.map((r: { UserId: string }) => r.UserId));
    }
    assert.deepEqual(ids, userIds);
    // The access token works under the base path too, and whoami shows the user the client acts as.
    const me = await server.request('GET', '/t/demo/api/v3/whoami', { headers: { authorization: `Bearer ${login.body.accessToken}` } });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.userId, demo.userId);
    const refreshed = await server.request('POST', '/t/demo/api/auth/token/refresh', { json: { refreshToken: login.body.refreshToken } });
    assert.equal(refreshed.status, 200, refreshed.text);
  });

  test('every route answers under the prefix: X-AppTenant may also be the slug; the reference and its document', async () => {
    const noTenant = { 'x-appid': demo.appId, 'x-appsecret': demo.appSecret };
    assert.equal((await server.request('GET', '/t/demo/api/usertypes/name?name=Temporary', { headers: noTenant })).status, 200);
    assert.equal((await server.request('GET', '/t/demo/health/live')).status, 200);
    assert.equal((await server.request('GET', '/api/usertypes/name?name=Temporary', { headers: { ...noTenant, 'x-apptenant': 'demo' } })).status, 200);
    const docs = await server.request('GET', '/t/demo/docs');
    assert.equal(docs.status, 200);
    assert.match(docs.text, /swagger-ui/);
    for (const path of ['/t/demo/docs/json', '/t/demo/openapi.json']) {
      const doc = await server.request('GET', path);
      assert.equal(doc.status, 200, path);
      assert.deepEqual(
        doc.body.servers,
        [{ url: `${PUBLIC_URL}/t/demo`, description: 'This deployment (ATRIUM_PUBLIC_URL)' }],
        'try-it-out calls stay under the base path, at the public address',
      );
      assert.ok(doc.body.paths['/api/auth/token']);
    }
    assert.deepEqual((await server.request('GET', '/openapi.json')).body.servers, [{ url: PUBLIC_URL, description: 'This deployment (ATRIUM_PUBLIC_URL)' }]);
    const missing = await server.request('GET', '/t/demo/api/no-such-thing', { headers: noTenant });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.instance, '/t/demo/api/no-such-thing');
  });

  test('an unknown slug, or two names for different tenants, is the 401 of an unknown tenant', async () => {
    const unknownTenant = await server.request('GET', '/api/usertypes/name?name=Temporary', {
      headers: { ...appHeaders(demo), 'x-apptenant': '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal(unknownTenant.status, 401);
    const login = { UserName: demo.username, Password: demo.password };
    const token = (await server.request('POST', '/t/demo/api/auth/token', { json: login })).body.accessToken;
    const cases: [string, string, Record<string, string>, unknown?][] = [
      ['GET', '/t/nope/api/usertypes/name?name=Temporary', { 'x-appid': demo.appId, 'x-appsecret': demo.appSecret }],
      ['POST', '/t/nope/api/auth/token', {}, login],
      ['POST', '/api/auth/token', {}, login],
      ['GET', '/t/demo/api/usertypes/name?name=Temporary', appHeaders({ ...demo, tenantId: other.tenantId })],
      ['GET', '/t/demo/api/usertypes/name?name=Temporary', { ...appHeaders(demo), 'x-apptenant': other.slug }],
      ['POST', '/t/other-agency/api/auth/token', { 'x-apptenant': demo.tenantId }, login],
      ['GET', `/t/${other.slug}/api/v3/whoami`, { authorization: `Bearer ${token}` }],
      ['GET', '/api/v3/whoami', { authorization: `Bearer ${token}`, 'x-apptenant': other.tenantId }],
    ];
    for (const [method, path, headers, json] of cases) {
      const res = await server.request(method, path, { headers, json });
      assert.equal(res.status, 401, `${method} ${path} ${JSON.stringify(headers)}: ${res.text}`);
      assert.equal(res.body.detail, unknownTenant.body.detail, path);
    }
  });

  test('Location and Link headers keep the base path', async () => {
    const h = { 'x-appid': demo.appId, 'x-appsecret': demo.appSecret };
    const sub = await server.request('POST', '/t/demo/api/webhook-subscriptions', {
      headers: h,
      json: { Name: 'Links', ActionType: 'Ping', DocumentType: USER_TYPE, Url: receiver.url, Active: false },
    });
    assert.equal(sub.status, 201, sub.text);
    assert.equal(sub.headers.get('location'), `/t/demo/api/webhook-subscriptions/${sub.body.id}`);
    for (let i = 0; i < 2; i++)
      assert.equal((await server.request('POST', `/t/demo/api/webhook-subscriptions/${sub.body.id}/test`, { headers: h })).status, 202);
    const page = await server.request('GET', `/t/demo/api/webhook-subscriptions/${sub.body.id}/invocation-history?take=1`, { headers: h });
    assert.equal(page.status, 200, page.text);
    assert.match(
      page.headers.get('link') ?? '',
      new RegExp(`^</t/demo/api/webhook-subscriptions/${sub.body.id}/invocation-history\\?take=1&continuationToken=[^>]+>; rel="next"$`),
    );
    const next = /^<([^>]+)>/.exec(page.headers.get('link') ?? '')?.[1] ?? '';
    assert.equal((await server.request('GET', next, { headers: h })).status, 200);
    assert.equal((await server.request('DELETE', `/t/demo/api/webhook-subscriptions/${sub.body.id}`, { headers: h })).status, 200);

    const schedule = await server.request('POST', '/t/demo/api/v3/analytics/schedules', {
      headers: h,
      json: { Name: 'Links', Query: 'DE-Users', Format: 'csv', CronExpression: '5 0 * * *', Active: false },
    });
    assert.equal(schedule.status, 201, schedule.text);
    assert.equal(schedule.headers.get('location'), `/t/demo/api/v3/analytics/schedules/${schedule.body.id}`);
    assert.equal((await server.request('DELETE', `/t/demo/api/v3/analytics/schedules/${schedule.body.id}`, { headers: h })).status, 200);
  });

  test('OData under the base path: Basic with the app id alone, links under the prefix, the next page followed', async () => {
    const basic = `Basic ${Buffer.from(`${demo.appId}:${demo.appSecret}`).toString('base64')}`;
    const root = `${server.baseUrl}/t/demo/odata/v4`;
    const service = await server.request('GET', '/t/demo/odata/v4/', { headers: { authorization: basic } });
    assert.equal(service.status, 200, service.text);
    assert.equal(service.body['@odata.context'], `${root}/$metadata`);
    const first = await server.request('GET', '/t/demo/odata/v4/DE_Users?$orderby=UserId', {
      headers: { authorization: basic, prefer: 'odata.maxpagesize=2' },
    });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body['@odata.context'], `${root}/$metadata#DE_Users`);
    const nextLink: string = first.body['@odata.nextLink'];
    assert.ok(nextLink.startsWith(`${root}/DE_Users?`), nextLink);
    const second = await server.request('GET', nextLink.slice(server.baseUrl.length), { headers: { authorization: basic, prefer: 'odata.maxpagesize=2' } });
    assert.deepEqual(
      [...first.body.value, ...second.body.value].map((r: { UserId: string }) => r.UserId),
      userIds,
    );
    const otherBasic = `Basic ${Buffer.from(`${other.tenantId}:${other.appId}:${other.appSecret}`).toString('base64')}`;
    assert.equal((await server.request('GET', '/t/demo/odata/v4/', { headers: { authorization: otherBasic } })).status, 401);
    const slugBasic = `Basic ${Buffer.from(`demo:${demo.appId}:${demo.appSecret}`).toString('base64')}`;
    assert.equal((await server.request('GET', '/odata/v4/', { headers: { authorization: slugBasic } })).status, 200);
  });
});

describe('the host pattern', () => {
  const host = 'apiv2-demo.atrium.example.com';

  test('login with no X-AppTenant on the tenant host, then a DE-* page as the user', async () => {
    const login = await viaHost('POST', '/api/auth/token', host, {}, { username: demo.username, password: demo.password });
    assert.equal(login.status, 200, JSON.stringify(login.body));
    assert.equal(login.body.UserId, demo.userId);
    const page = await viaHost(
      'POST',
      '/api/v3/analytics/named-query/DE-Users/dynamic-execute',
      `${host}:8443`,
      { 'x-appid': demo.appId, 'x-appsecret': demo.appSecret, 'x-appuser': login.body.UserId },
      { queryBuilder: { take: 2, orderBy: [{ field: 'UserId' }] } },
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.equal(page.body.totalCount, 3);
    assert.deepEqual(
      page.body.data.map((r: { UserId: string }) => r.UserId),
      userIds.slice(0, 2),
    );
  });

  test('links are written on the host; an unknown host tenant or a disagreeing base path is 401; other hosts name no tenant', async () => {
    const basic = `Basic ${Buffer.from(`${demo.appId}:${demo.appSecret}`).toString('base64')}`;
    const service = await viaHost('GET', '/odata/v4/', host, { authorization: basic });
    assert.equal(service.status, 200);
    assert.equal(service.body['@odata.context'], `http://${host}/odata/v4/$metadata`);
    const noTenant = { 'x-appid': demo.appId, 'x-appsecret': demo.appSecret };
    assert.equal((await viaHost('GET', '/api/usertypes/name?name=Temporary', 'apiv2-nope.atrium.example.com', noTenant)).status, 401);
    assert.equal((await viaHost('GET', `/t/${other.slug}/api/usertypes/name?name=Temporary`, host, noTenant)).status, 401);
    assert.equal((await viaHost('GET', '/t/demo/api/usertypes/name?name=Temporary', host, noTenant)).status, 200);
    assert.equal((await viaHost('GET', '/api/usertypes/name?name=Temporary', 'atrium.example.com', noTenant)).status, 401);
    assert.equal((await viaHost('GET', '/api/usertypes/name?name=Temporary', 'atrium.example.com', appHeaders(demo))).status, 200);
  });
});

test("webhook payloads link documents under the tenant's base URL", async () => {
  const h = appHeaders(demo);
  const sub = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Created', DocumentType: USER_TYPE });
  receiver.secret = sub.secret;
  const created = await server.request('POST', '/t/demo/api/users', {
    headers: { 'x-appid': demo.appId, 'x-appsecret': demo.appSecret },
    json: {
      UserName: 'linked.user',
      Name: 'Linked User',
      ExternalId: 'EXT-LINKED-1',
      CompanyCode: demo.companyCode,
      DepartmentExternalId: demo.departmentExternalId,
      TypologyExternalId: demo.typologyExternalId,
      IsActive: true,
    },
  });
  assert.equal(created.status, 201, created.text);
  // Earlier tests' test events reach the same receiver: wait for this user's.
  const until = Date.now() + 20_000;
  let got = receiver.received.find((r) => r.payload?.document?.id === created.body.Id);
  while (!got && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    got = receiver.received.find((r) => r.payload?.document?.id === created.body.Id);
  }
  assert.ok(got, 'the Created event was delivered');
  assert.equal(got.payload.document.url, `https://apiv2-demo.atrium.example.com/api/users/${created.body.Id}`);
  assert.equal((await server.request('DELETE', `/api/webhook-subscriptions/${sub.id}`, { headers: h })).status, 200);
});
