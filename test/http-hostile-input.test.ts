// Hostile input answers 4xx problem+json, never 500 or a framework-shaped error: text PostgreSQL cannot
// hold, deep JSON, malformed URLs, long paths, large headers, raw HTTP the parser rejects, and piles of
// bad credentials, each reproduced from the fuzzing report of issue #13.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestResponse, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Hostile Input Agency');
});
after(() => server.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

function assertProblem(res: TestResponse, status: number, label: string): void {
  assert.equal(res.status, status, `${label}: ${res.status} ${res.text.slice(0, 300)}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/, label);
  assert.equal(res.body.status, status, label);
  for (const k of ['type', 'title', 'detail', 'instance', 'traceId']) assert.equal(typeof res.body[k], 'string', `${label}: problem.${k}`);
  assert.doesNotMatch(res.text, /invalid byte sequence|unsupported Unicode|FST_ERR|statusCode/, `${label}: no PostgreSQL or Fastify text`);
}

const fieldOf = (res: TestResponse): string[] => (res.body.errors ?? []).map((e: { path: string }) => e.path);

describe('text PostgreSQL cannot store is a 400 naming the field', () => {
  test('NUL in a body string, a query parameter, a path parameter; the login and operator bodies too', async () => {
    const h = appHeaders(tenant);
    const cases: [string, string, Record<string, string>, unknown, string][] = [
      ['POST', '/api/users', h, { UserName: '\u0000' }, '/body/UserName'],
      ['GET', '/api/usertypes/name?name=%00', h, undefined, '/querystring/name'],
      ['GET', '/api/configuration-keys/%00', h, undefined, '/params/key'],
      ['POST', '/admin/tenants', admin, { name: '\u0000' }, '/body/name'],
      ['POST', '/api/auth/token', { 'x-apptenant': tenant.tenantId }, { UserName: 'a\u0000', Password: 'b' }, '/body/UserName'],
      ['POST', '/api/users', h, { UserName: 'ok', ['Extra\u0000']: 1 }, '/body/Extra\uFFFD'],
    ];
    for (const [method, path, headers, json, field] of cases) {
      const res = await server.request(method, path, { headers, json });
      assertProblem(res, 400, `${method} ${path}`);
      assert.deepEqual(fieldOf(res), [field], `${method} ${path}`);
      assert.match(res.body.detail, /NUL character/);
    }
  });

  test('a lone surrogate is refused the same way, and nothing is stored', async () => {
    for (const name of ['\ud800x', 'x\udc00', '\udbff']) {
      const res = await server.request('POST', '/admin/tenants', { headers: admin, json: { name } });
      assertProblem(res, 400, JSON.stringify(name));
      assert.deepEqual(fieldOf(res), ['/body/name']);
      assert.match(res.body.detail, /lone UTF-16 surrogate/);
    }
    const list = await server.request('GET', '/admin/tenants', { headers: admin });
    assert.equal(list.status, 200);
    assert.ok(!JSON.stringify(list.body).includes('\ufffd'), 'no tenant was created with a replacement character');
    // A well-formed pair (an emoji) is ordinary text.
    const emoji = await server.request('POST', '/admin/tenants', { headers: admin, json: { name: 'Pair \u{1F600} Agency' } });
    assert.equal(emoji.status, 201, emoji.text);
  });
});

describe('JSON nesting is bounded where bodies are parsed', () => {
  test('10,000 levels of arrays or objects is a 400, and 60 levels still parse', async () => {
    const h = { ...appHeaders(tenant), 'content-type': 'application/json' };
    for (const body of ['['.repeat(10_000) + ']'.repeat(10_000), `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`]) {
      const res = await server.request('PUT', '/api/configuration-keys/Notifications', { headers: h, body });
      assertProblem(res, 400, 'deep JSON');
      assert.match(res.body.detail, /nested deeper than 64 levels/);
    }
    // Brackets inside strings are text, not nesting.
    const shallow = JSON.stringify({ Value: `${'['.repeat(1000)}`, Nested: JSON.parse(`${'{"a":'.repeat(60)}1${'}'.repeat(60)}`) });
    const res = await server.request('PUT', '/api/configuration-keys/Notifications', { headers: h, body: shallow });
    assert.notEqual(res.body?.detail ?? '', 'The request body is nested deeper than 64 levels.');
    assert.ok(res.status < 500, res.text);
  });
});

describe('errors raised before a route runs answer problem+json', () => {
  test('malformed percent-encoding is a 400, a long path parameter a 414, a large header a 431', async () => {
    const h = appHeaders(tenant);
    assertProblem(await server.request('GET', '/api/users/%ff%fe', { headers: h }), 400, 'bad percent-encoding');
    assertProblem(await server.request('GET', `/api/users/${'a'.repeat(5000)}`, { headers: h }), 414, 'long path parameter');
    const big = await server.request('GET', '/api/users', { headers: { ...h, 'x-padding': 'p'.repeat(20_000) } });
    assertProblem(big, 431, 'large header');
    assert.equal(big.body.instance, '/api/users');
  });

  test('a header Node refuses (NUL in its value) is a 400 problem+json on the wire', async () => {
    const url = new URL(server.baseUrl);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), '127.0.0.1', () => {
        socket.write(`GET /api/users HTTP/1.1\r\nHost: 127.0.0.1\r\nX-AppId: a\u0000b\r\n\r\n`, 'latin1');
      });
      let data = '';
      socket.on('data', (d) => (data += d.toString('latin1')));
      socket.on('close', () => resolve(data));
      socket.on('error', reject);
    });
    assert.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(raw, /content-type: application\/problem\+json/i);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assert.equal(body.status, 400);
    assert.equal(body.instance, '/api/users');
  });
});

describe('bad credentials', () => {
  test('every combination of bad credentials answers 401 at once, on fresh and reused connections', async () => {
    const bad = {
      'x-appid': tenant.appId,
      'x-appsecret': 'not-the-secret',
      'x-apptenant': 'not-a-guid',
      authorization: 'Bearer garbage',
      'x-accesstoken': 't'.repeat(9000),
    };
    const names = Object.keys(bad) as (keyof typeof bad)[];
    // Every non-empty subset of the five bad headers, also with the real tenant id in place of 'not-a-guid'.
    for (let mask = 1; mask < 1 << names.length; mask++) {
      for (const realTenant of [false, true]) {
        const headers: Record<string, string> = {};
        names.forEach((n, i) => {
          if (mask & (1 << i)) headers[n] = bad[n];
        });
        if (realTenant && headers['x-apptenant']) headers['x-apptenant'] = tenant.tenantId;
        const started = Date.now();
        const res = await fetch(`${server.baseUrl}/api/webhook-subscriptions`, { headers, signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        assert.equal(res.status, 401, `${JSON.stringify(Object.keys(headers))}: ${text}`);
        assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
      }
    }
  });
});
