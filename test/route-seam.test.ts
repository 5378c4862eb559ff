// The route seam through real HTTP: request.readTenant / request.writeTenant (tenant binding, read lane,
// the request deadline, the conflict retry) and static roles from `config.roles` (one hook, the same
// 403 answers, shown in OpenAPI). Every surface is registered too, to check what they declare.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { decodeSecretKey, loadConfig } from '../src/config.ts';
import { DatabaseHandle, type Trx } from '../src/platform/db/database.ts';
import { type App, buildApp } from '../src/platform/http/app.ts';
import { createContext, registerSurfaces } from '../src/server.ts';
import { ADMIN_TOKEN, appHeaders, createTestDatabase } from './helpers.ts';

interface Credentials {
  tenantId: string;
  appId: string;
  appSecret: string;
}

let app: App;
let db: DatabaseHandle;
let dropDatabase: () => Promise<void>;
let baseUrl: string;
let admin: Credentials;
const attempts = new Map<string, number>();

/** A real PostgreSQL error with the given SQLSTATE, raised inside the tenant transaction. */
const raise = (trx: Trx, code: string) => sql.raw(`do $$ begin raise exception 'seam test' using errcode = '${code}'; end $$`).execute(trx);

function countAttempt(key: string): number {
  const n = (attempts.get(key) ?? 0) + 1;
  attempts.set(key, n);
  return n;
}

async function seamTestRoutes(a: App): Promise<void> {
  const Key = Type.Object({ key: Type.String({ minLength: 1 }), failures: Type.Optional(Type.String({ pattern: '^[0-9]$' })) });

  a.get('/api/seam-test/binding', { schema: { querystring: Type.Object({ lane: Type.Optional(Type.String()) }) } }, async (request) => {
    // A deadline whose time left PostgreSQL prints in ms, unlike the whole 30 s of the lanes' default.
    request.deadline = Date.now() + 12_345;
    return request.readTenant(
      async (db, p) => {
        const { rows } = await sql<{
          tenant: string;
          timeout: string;
        }>`select current_setting('atrium.tenant_id') as tenant, current_setting('statement_timeout') as timeout`.execute(db);
        return { ...rows[0], principalTenant: p.tenantId };
      },
      { lane: request.query.lane === 'true' },
    );
  });

  a.post('/api/seam-test/write', { schema: { querystring: Key } }, async (request) => {
    const { key, failures } = request.query;
    return request.writeTenant(async (trx) => {
      const n = countAttempt(key);
      if (n <= Number(failures ?? 0)) await raise(trx, n % 2 ? '40001' : '40P01');
      return { attempts: n };
    });
  });

  a.post('/api/seam-test/write-once', { schema: { querystring: Key } }, async (request) =>
    request.writeTenant(
      async (trx) => {
        countAttempt(request.query.key);
        await raise(trx, '40001');
      },
      { retry: false },
    ),
  );

  a.get('/api/seam-test/read', { schema: { querystring: Key } }, async (request) =>
    request.readTenant(async (trx) => {
      countAttempt(request.query.key);
      await raise(trx, '40001');
    }),
  );

  a.post('/api/seam-test/late', { schema: { querystring: Key } }, async (request) => {
    // A short deadline of its own, so the test need not wait for the configured request timeout.
    request.deadline = Date.now() + 300;
    return request.writeTenant(async (trx) => {
      const n = countAttempt(request.query.key);
      if (n === 1) await sleep(400);
      await raise(trx, '40001');
    });
  });

  a.post('/api/seam-test/slow', { schema: { querystring: Key } }, async (request) => {
    request.deadline = Date.now() + 300;
    return request.writeTenant(async (trx) => {
      countAttempt(request.query.key);
      await sql`select pg_sleep(3)`.execute(trx);
    });
  });

  a.get(
    '/api/seam-test/any-role',
    {
      config: { roles: ['WebhookSubscriptionGet', 'CustomTablesRead'] },
      schema: { description: 'Either role opens it.', querystring: Type.Object({ n: Type.Optional(Type.String({ pattern: '^[0-9]+$' })) }) },
    },
    async (request) => request.readTenant(async (_db, p) => ({ tenantId: p.tenantId })),
  );
}

async function call(method: string, path: string, headers: Record<string, string> = {}, json?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: json === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

async function appWithRoles(name: string, roles: string[]): Promise<Record<string, string>> {
  const res = await call('POST', `/admin/tenants/${admin.tenantId}/apps`, { authorization: `Bearer ${ADMIN_TOKEN}` }, { name, roles });
  assert.equal(res.status, 201, res.body);
  return appHeaders(res.body);
}

before(async () => {
  const database = await createTestDatabase();
  dropDatabase = database.drop;
  const config = loadConfig({
    DATABASE_URL: database.connectionString,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
    ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'),
    ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
  });
  db = new DatabaseHandle(database.connectionString, { statementTimeoutMs: config.requestTimeoutMs });
  const ctx = createContext(config, db, decodeSecretKey(config.secretKey ?? ''));
  app = await buildApp(ctx, async (a) => {
    await registerSurfaces(a, ctx);
    await seamTestRoutes(a);
  });
  baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  const created = await call('POST', '/admin/tenants', { authorization: `Bearer ${ADMIN_TOKEN}` }, { name: 'Seam Agency' });
  assert.equal(created.status, 201);
  admin = created.body;
});

after(async () => {
  await app?.close();
  await db?.close();
  await dropDatabase?.();
});

describe('readTenant and writeTenant', () => {
  test('reads are bound to the principal’s tenant: in a transaction with the deadline’s timeout, or on a read lane', async () => {
    const tx = await call('GET', '/api/seam-test/binding', appHeaders(admin));
    assert.equal(tx.status, 200);
    assert.equal(tx.body.tenant, admin.tenantId);
    assert.equal(tx.body.principalTenant, admin.tenantId);
    // The transaction's statement_timeout is the time left until the deadline.
    assert.match(tx.body.timeout, /^\d+ms$/);
    const left = Number.parseInt(tx.body.timeout, 10);
    assert.ok(left > 5_000 && left <= 12_345, tx.body.timeout);
    const lane = await call('GET', '/api/seam-test/binding?lane=true', appHeaders(admin));
    assert.equal(lane.status, 200);
    assert.equal(lane.body.tenant, admin.tenantId);
    assert.equal(lane.body.timeout, '30s');
  });

  test('a write that hits a serialization failure or a deadlock runs again and succeeds', async () => {
    const res = await call('POST', '/api/seam-test/write?key=twice&failures=2', appHeaders(admin));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { attempts: 3 });
  });

  test('after three attempts the conflict is the answer: 409', async () => {
    const res = await call('POST', '/api/seam-test/write?key=always&failures=9', appHeaders(admin));
    assert.equal(res.status, 409);
    assert.match(res.body.detail, /concurrent change/);
    assert.equal(attempts.get('always'), 3);
  });

  test('reads and writes that opt out are not run again', async () => {
    assert.equal((await call('GET', '/api/seam-test/read?key=read', appHeaders(admin))).status, 409);
    assert.equal(attempts.get('read'), 1);
    assert.equal((await call('POST', '/api/seam-test/write-once?key=once', appHeaders(admin))).status, 409);
    assert.equal(attempts.get('once'), 1);
  });

  test('no retry once the deadline has passed, and a statement past it is cancelled: 504', async () => {
    assert.equal((await call('POST', '/api/seam-test/late?key=late', appHeaders(admin))).status, 409);
    assert.equal(attempts.get('late'), 1);
    const slow = await call('POST', '/api/seam-test/slow?key=slow', appHeaders(admin));
    assert.equal(slow.status, 504);
    assert.equal(attempts.get('slow'), 1);
  });
});

describe('roles in route config', () => {
  test('any one of the declared roles opens the route; Administrator always does', async () => {
    assert.equal((await call('GET', '/api/seam-test/any-role', appHeaders(admin))).status, 200);
    const reader = await appWithRoles('seam-reader', ['CustomTablesRead']);
    assert.equal((await call('GET', '/api/seam-test/any-role', reader)).status, 200);
    const other = await appWithRoles('seam-other', ['WebhookSubscriptionCreate']);
    const denied = await call('GET', '/api/seam-test/any-role', other);
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body.requiredRoles, ['WebhookSubscriptionGet', 'CustomTablesRead']);
    assert.match(denied.body.detail, /one of the roles: WebhookSubscriptionGet, CustomTablesRead/);
    // The role is checked as soon as the caller is known, before validation: without it, nothing of the request is looked at.
    assert.equal((await call('GET', '/api/seam-test/any-role?n=x', other)).status, 403);
    assert.equal((await call('GET', '/api/seam-test/any-role?n=x', reader)).status, 400);
    // One declared role is named alone (Custom Tables take an access token).
    const token = (await call('POST', '/api/auth/token', reader)).body.accessToken;
    const single = await call('PUT', '/api/v3/custom-table-definitions/0f5c1a52-7b0e-4b8e-9d8e-1c2b3a4d5e6f', { 'x-accesstoken': token }, { ReadRoles: [] });
    assert.equal(single.status, 403);
    assert.equal(single.body.requiredRole, 'Administrator');
  });

  test('every surface declares its static roles, and OpenAPI shows them', async () => {
    const declared = new Map(app.routeList.map((r) => [`${r.method} ${r.url}`, r.roles]));
    const expected: Record<string, string[]> = {
      'GET /api/webhook-subscriptions': ['WebhookSubscriptionGet'],
      'GET /api/webhook-subscriptions/:id': ['WebhookSubscriptionGet'],
      'GET /api/webhook-subscriptions/:id/invocation-history': ['WebhookSubscriptionGet'],
      'POST /api/webhook-subscriptions': ['WebhookSubscriptionCreate'],
      'PUT /api/webhook-subscriptions/:id': ['WebhookSubscriptionWrite'],
      'POST /api/webhook-subscriptions/:id/test': ['WebhookSubscriptionWrite'],
      'POST /api/webhook-subscriptions/:id/invocations/:invocationId/resend': ['WebhookSubscriptionWrite'],
      'DELETE /api/webhook-subscriptions/:id': ['WebhookSubscriptionDelete'],
      'PUT /api/v3/custom-table-definitions/:id': ['Administrator'],
      // Issue 26, item 11: the routes that had no role.
      'PUT /api/configuration-keys/:key': ['ConfigurationKeyWrite'],
      'GET /api/configuration-keys/:key': ['ConfigurationKeyRead', 'ConfigurationKeyWrite'],
      'POST /api/users': ['IntegrationWrite'],
      'POST /api/v3/analytics/named-query/:NamedQuery/dynamic-execute': ['DataExtractionRead'],
      'GET /odata/v4/:entitySet': ['DataExtractionRead'],
      'PUT /api/v3/custom-tables/:tableName/rows': ['CustomTablesSave'],
      'POST /api/v3/analytics/schedules': ['ScheduleWrite'],
      'POST /api/v3/events': ['EventRaise'],
    };
    for (const [route, roles] of Object.entries(expected)) assert.deepEqual(declared.get(route), roles, route);
    const doc = (await call('GET', '/openapi.json')).body;
    assert.match(doc.paths['/api/webhook-subscriptions'].get.description, /Roles: WebhookSubscriptionGet \(or Administrator\)\./);
    assert.match(doc.paths['/api/v3/custom-table-definitions/{id}'].put.description, /^Roles: Administrator\.$/);
    assert.equal(
      doc.paths['/api/seam-test/any-role'].get.description,
      'Either role opens it.\n\nRoles: WebhookSubscriptionGet or CustomTablesRead (or Administrator).',
    );
  });
});
