// The HTTP platform: problem+json for every error class, OpenAPI and /docs, metrics, health,
// request ids, rate limiting, and the database deadline that turns into a 504.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer({ ATRIUM_BODY_LIMIT_BYTES: '2048' });
  tenant = await server.createTenant('HTTP Agency');
});
after(() => server.close());

const isProblem = (res: { headers: Headers; body: Record<string, unknown> }, status: number) => {
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(res.body.status, status);
  for (const k of ['type', 'title', 'detail', 'instance', 'traceId']) assert.equal(typeof res.body[k], 'string', `problem.${k}`);
};

describe('errors are problem+json', () => {
  test('404 for an unknown route and for a lookup that finds nothing', async () => {
    const res = await server.request('GET', '/nope');
    assert.equal(res.status, 404);
    isProblem(res, 404);
    const missing = await server.request('GET', '/api/usertypes/name?name=Astronaut', { headers: appHeaders(tenant) });
    assert.equal(missing.status, 404);
    isProblem(missing, 404);
    assert.equal(missing.body.traceId, missing.headers.get('x-request-id'));
  });

  test('400 with field paths for schema violations', async () => {
    const res = await server.request('GET', '/api/usertypes/name', { headers: appHeaders(tenant) });
    assert.equal(res.status, 400);
    isProblem(res, 400);
    assert.ok(
      res.body.errors.some((e: { path: string }) => e.path === '/querystring/name'),
      JSON.stringify(res.body.errors),
    );
  });

  test('400 for malformed JSON, 415 for another media type, 413 over the body limit', async () => {
    const malformed = await server.request('POST', '/api/auth/token/refresh', { headers: { 'content-type': 'application/json' }, body: '{"refreshToken":' });
    assert.equal(malformed.status, 400);
    isProblem(malformed, 400);
    const xml = await server.request('POST', '/api/auth/token/refresh', { headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    assert.equal(xml.status, 415);
    isProblem(xml, 415);
    const big = await server.request('POST', '/api/auth/token/refresh', { json: { refreshToken: 'x'.repeat(5000) } });
    assert.equal(big.status, 413);
    isProblem(big, 413);
  });

  test('a request id given by the caller is kept', async () => {
    const res = await server.request('GET', '/health/live', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(res.headers.get('x-request-id'), 'abc-123');
  });
});

describe('operator surface', () => {
  test('/admin needs the operator token', async () => {
    const res = await server.request('POST', '/admin/tenants', { json: { name: 'x' } });
    assert.equal(res.status, 401);
    isProblem(res, 401);
    const wrong = await server.request('POST', '/admin/tenants', { headers: { authorization: 'Bearer wrong' }, json: { name: 'x' } });
    assert.equal(wrong.status, 401);
  });

  test('tenant creation answers every documented field', () => {
    for (const k of [
      'tenantId',
      'appId',
      'appSecret',
      'userId',
      'username',
      'password',
      'companyId',
      'companyCode',
      'divisionId',
      'departmentId',
      'departmentExternalId',
      'typologyGroupId',
      'typologyId',
      'typologyExternalId',
    ]) {
      assert.ok(typeof (tenant as unknown as Record<string, unknown>)[k] === 'string' && (tenant as unknown as Record<string, string>)[k].length > 0, k);
    }
  });

  test('a new tenant has what it needs to start', async () => {
    const types = await Promise.all(
      ['Regular/Permanent', 'Temporary'].map((n) =>
        server.request('GET', `/api/usertypes/name?name=${encodeURIComponent(n)}`, { headers: appHeaders(tenant) }),
      ),
    );
    assert.deepEqual(
      types.map((t) => t.status),
      [200, 200],
    );
    const me = await server.request('GET', '/api/v3/whoami', { headers: appHeaders(tenant) });
    assert.ok(me.body.roles.includes('Administrator'));
  });
});

describe('documentation, health and metrics', () => {
  test('/openapi.json is OpenAPI 3.1 with every route and its errors', async () => {
    const res = await server.request('GET', '/openapi.json');
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const paths = res.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    for (const route of server.runtime.app?.routeList ?? []) {
      // The web console's files are pages, not API operations.
      if (route.url === '/metrics' || route.url === '/openapi.json' || route.url.startsWith('/console')) continue;
      const oaPath = route.url.replace(/:(\w+)/g, '{$1}');
      const op = paths[oaPath]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${route.url} is in the OpenAPI document`);
      for (const s of ['400', '401', '404', '500']) assert.ok(op.responses[s], `${route.method} ${route.url} documents ${s}`);
    }
  });

  test('/docs serves the interactive reference', async () => {
    const res = await server.request('GET', '/docs/');
    assert.equal(res.status, 200);
    assert.match(res.text, /swagger/i);
  });

  test('health and metrics', async () => {
    assert.equal((await server.request('GET', '/health/live')).body.status, 'ok');
    const ready = await server.request('GET', '/health/ready');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body.checks, { database: 'ok', migrations: 'ok', jobs: 'ok', webhookDispatcher: 'ok', backlog: 'ok' });
    const metrics = await server.request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /atrium_http_request_duration_seconds_bucket\{[^}]*route="\/health\/live"/);
  });
});

describe('limits', () => {
  test('429 with Retry-After past the per-app rate', async () => {
    const limited = await startTestServer({ ATRIUM_RATE_LIMIT_PER_MINUTE: '60' });
    try {
      const t = await limited.createTenant('Busy Agency');
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 14; i++) {
        const res = await limited.request('GET', '/api/v3/whoami', { headers: appHeaders(t) });
        statuses.push(res.status);
        if (res.status === 429) {
          retryAfter = res.headers.get('retry-after');
          isProblem(res, 429);
        }
      }
      assert.ok(statuses.includes(429), statuses.join(','));
      assert.ok(Number(retryAfter) >= 1);
    } finally {
      await limited.close();
    }
  });

  test('a statement past the request deadline is cancelled by PostgreSQL and maps to 504', async () => {
    const started = Date.now();
    const err = await server.runtime.ctx.db
      .withTenant(tenant.tenantId, (trx) => sql`select pg_sleep(5)`.execute(trx), { deadline: Date.now() + 300 })
      .then(
        () => null,
        (e: { code?: string }) => e,
      );
    assert.equal(err?.code, '57014');
    assert.ok(Date.now() - started < 3000);
    const { toProblem } = await import('../src/platform/http/errors.ts');
    const problem = toProblem(err, { url: '/x', log: { error() {} } } as never, 'Narrow the query.');
    assert.equal(problem.status, 504);
    assert.match(problem.message, /Narrow the query/);
  });
});
