// Webhook subscription API: each operation, its role, validation, the document-type lookup and
// POST /api/v3/events.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { DELIVERABLE_TYPE, USER_TYPE } from './webhooks-helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let h: Record<string, string>;
const base = '/api/webhook-subscriptions';
const body = {
  Name: 'Users to CRM',
  Description: 'Pushes users',
  ActionType: 'Created',
  DocumentType: USER_TYPE,
  Url: 'https://hooks.example.com/users',
  Active: true,
  DetailFilters: [{ groupCondition: 'And', jsonPathExpression: 'Name', condition: 'Contains', value: 'a' }],
};

before(async () => {
  server = await startTestServer({ ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
  tenant = await server.createTenant('Webhook API Agency');
  h = appHeaders(tenant);
});
after(() => server.close());

async function userWithRoles(name: string, roles: string[]): Promise<Record<string, string>> {
  const res = await server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName: name, password: 'password-123', roles },
  });
  assert.equal(res.status, 201, res.text);
  return { ...h, 'x-appuser': res.body.userId };
}

describe('subscription operations', () => {
  test('create (201), get, list, update (200) and delete (200)', async () => {
    const created = await server.request('POST', base, { headers: h, json: body });
    assert.equal(created.status, 201, created.text);
    const sub = created.body;
    assert.equal(sub.tenantId, tenant.tenantId);
    assert.equal(sub.name, 'Users to CRM');
    assert.equal(sub.actionType, 'Created');
    assert.equal(sub.documentType, USER_TYPE);
    assert.equal(sub.active, true);
    assert.equal(sub.isAutomation, false);
    assert.match(sub.secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'a generated Standard Webhooks secret');
    assert.deepEqual(sub.detailFilters, body.DetailFilters);
    for (const f of ['id', 'createdOnUtc', 'modifiedOnUtc', 'createdById', 'modifiedById', 'automationId', 'businessObjectTypeName', 'description', 'url']) {
      assert.ok(f in sub, f);
    }

    const one = await server.request('GET', `${base}/${sub.id}`, { headers: h });
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, sub);
    const list = await server.request('GET', base, { headers: h });
    assert.equal(list.status, 200);
    assert.ok(list.body.some((s: { id: string }) => s.id === sub.id));

    const put = await server.request('PUT', `${base}/${sub.id}`, {
      headers: h,
      json: { ...body, Name: 'Renamed', Active: false, DetailFilters: [], BusinessObjectTypeName: 'Staff' },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.name, 'Renamed');
    assert.equal(put.body.active, false);
    assert.equal(put.body.secret, sub.secret, 'a PUT without Secret keeps the secret');
    assert.deepEqual(put.body.detailFilters, []);
    assert.equal(put.body.businessObjectTypeName, 'Staff');
    const withSecret = await server.request('PUT', `${base}/${sub.id}`, { headers: h, json: { ...body, Secret: 'plain text secret' } });
    assert.equal(withSecret.body.secret, 'plain text secret');

    const del = await server.request('DELETE', `${base}/${sub.id}`, { headers: h });
    assert.equal(del.status, 200);
    assert.equal(del.body.id, sub.id);
    assert.equal((await server.request('GET', `${base}/${sub.id}`, { headers: h })).status, 404);
    assert.equal((await server.request('PUT', `${base}/${sub.id}`, { headers: h, json: body })).status, 404);
    assert.equal((await server.request('DELETE', `${base}/${sub.id}`, { headers: h })).status, 404);
  });

  test('Active defaults to false; property names are case-insensitive; catalogue action types keep their spelling', async () => {
    const res = await server.request('POST', base, {
      headers: h,
      json: {
        name: 'lower',
        actiontype: 'stageupdated',
        documentType: 'Deliverable',
        url: 'https://x.example.com/',
        detailFilters: [{ GroupCondition: 'or', JsonPathExpression: '$.ToWorkflowStageName', Condition: 'notequal', Value: 'Closed' }],
      },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.active, false);
    assert.equal(res.body.actionType, 'StageUpdated');
    assert.equal(res.body.documentType, DELIVERABLE_TYPE, 'the class name resolves to the full type name');
    assert.deepEqual(res.body.detailFilters[0], { groupCondition: 'Or', jsonPathExpression: '$.ToWorkflowStageName', condition: 'NotEqual', value: 'Closed' });
  });

  test('automation subscriptions need AutomationId, not Url', async () => {
    const ok = await server.request('POST', base, {
      headers: h,
      json: { ...body, Url: undefined, IsAutomation: true, AutomationId: '0f5c1a52-7b0e-4b8e-9d8e-1c2b3a4d5e6f' },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.isAutomation, true);
    assert.equal(ok.body.url, null);
    const missing = await server.request('POST', base, { headers: h, json: { ...body, Url: undefined, IsAutomation: true } });
    assert.equal(missing.status, 400);
    assert.deepEqual(
      missing.body.errors.map((e: { path: string }) => e.path),
      ['/body/AutomationId'],
    );
  });

  test('validation errors name the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...body, Url: undefined }, '/body/Url'],
      [{ ...body, Url: 'ftp://example.com/x' }, '/body/Url'],
      [{ ...body, Url: 'not a url' }, '/body/Url'],
      [{ ...body, Url: 'http://127.0.0.1:9/x' }, '/body/Url'],
      [{ ...body, Url: 'http://[::1]/x' }, '/body/Url'],
      [{ ...body, Url: 'http://169.254.169.254/latest/meta-data' }, '/body/Url'],
      [{ ...body, Url: 'http://localhost:8080/' }, '/body/Url'],
      [{ ...body, Secret: 'whsec_not*base64' }, '/body/Secret'],
      [{ ...body, Name: '' }, '/body/Name'],
      [{ ...body, Active: 'yes' }, '/body/Active'],
      [
        { ...body, DetailFilters: [{ groupCondition: 'Maybe', jsonPathExpression: 'a', condition: 'Equal', value: 'x' }] },
        '/body/DetailFilters/0/groupCondition',
      ],
      [
        { ...body, DetailFilters: [{ groupCondition: 'And', jsonPathExpression: 'a..b', condition: 'Equal', value: 'x' }] },
        '/body/DetailFilters/0/jsonPathExpression',
      ],
      [{ ...body, DetailFilters: [{ groupCondition: 'And', jsonPathExpression: 'a', condition: 'Like', value: 'x' }] }, '/body/DetailFilters/0/condition'],
    ];
    for (const [json, path] of cases) {
      const res = await server.request('POST', base, { headers: h, json });
      assert.equal(res.status, 400, `${JSON.stringify(json)} -> ${res.text}`);
      assert.ok(
        res.body.errors.some((e: { path: string }) => e.path.startsWith(path)),
        `${path} in ${JSON.stringify(res.body.errors)}`,
      );
    }
  });

  test('an unknown DocumentType is a 400 listing the valid ones', async () => {
    const res = await server.request('POST', base, { headers: h, json: { ...body, DocumentType: 'Skill.Module.BusinessObjects.Spaceship' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, '/body/DocumentType');
    assert.ok(res.body.validDocumentTypes.includes(USER_TYPE));
    assert.match(res.body.errors[0].message, /Skill\.Module\.BusinessObjects\.Timesheet/);
  });

  test('unknown and malformed ids', async () => {
    assert.equal((await server.request('GET', `${base}/0f5c1a52-7b0e-4b8e-9d8e-1c2b3a4d5e6f`, { headers: h })).status, 404);
    assert.equal((await server.request('GET', `${base}/nope`, { headers: h })).status, 400);
  });
});

describe('roles', () => {
  test('each operation needs its role; without it, 403 naming the role', async () => {
    const sub = (await server.request('POST', base, { headers: h, json: body })).body;
    const nobody = await userWithRoles('webhook-nobody', []);
    const ops: [string, string, unknown, string][] = [
      ['GET', base, undefined, 'WebhookSubscriptionGet'],
      ['GET', `${base}/${sub.id}`, undefined, 'WebhookSubscriptionGet'],
      ['GET', `${base}/${sub.id}/invocation-history`, undefined, 'WebhookSubscriptionGet'],
      ['POST', base, body, 'WebhookSubscriptionCreate'],
      ['PUT', `${base}/${sub.id}`, body, 'WebhookSubscriptionWrite'],
      ['POST', `${base}/${sub.id}/test`, undefined, 'WebhookSubscriptionWrite'],
      ['DELETE', `${base}/${sub.id}`, undefined, 'WebhookSubscriptionDelete'],
    ];
    for (const [method, path, json, role] of ops) {
      const res = await server.request(method, path, { headers: nobody, json });
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.equal(res.body.requiredRole, role);
      assert.match(res.body.detail, new RegExp(role));
    }
    // Each role opens exactly its operations.
    const reader = await userWithRoles('webhook-reader', ['WebhookSubscriptionGet']);
    assert.equal((await server.request('GET', base, { headers: reader })).status, 200);
    assert.equal((await server.request('POST', base, { headers: reader, json: body })).status, 403);
    const creator = await userWithRoles('webhook-creator', ['WebhookSubscriptionCreate']);
    const made = await server.request('POST', base, { headers: creator, json: body });
    assert.equal(made.status, 201);
    assert.equal(made.body.createdById, creator['x-appuser']);
    assert.equal((await server.request('GET', base, { headers: creator })).status, 403);
    const writer = await userWithRoles('webhook-writer', ['WebhookSubscriptionWrite']);
    const put = await server.request('PUT', `${base}/${sub.id}`, { headers: writer, json: body });
    assert.equal(put.status, 200);
    assert.equal(put.body.modifiedById, writer['x-appuser']);
    assert.equal((await server.request('DELETE', `${base}/${sub.id}`, { headers: writer })).status, 403);
    const deleter = await userWithRoles('webhook-deleter', ['WebhookSubscriptionDelete']);
    assert.equal((await server.request('DELETE', `${base}/${sub.id}`, { headers: deleter })).status, 200);
  });

  test('an access token works like the app headers', async () => {
    const token = await server.request('POST', '/api/auth/token', { headers: h });
    assert.equal(token.status, 200, token.text);
    const res = await server.request('GET', base, { headers: { authorization: `Bearer ${token.body.accessToken}` } });
    assert.equal(res.status, 200);
    assert.equal((await server.request('GET', base, {})).status, 401);
  });
});

describe('document types and custom events', () => {
  test('GET /api/v3/document-types/lookup lists the tenant document types with full names', async () => {
    const res = await server.request('GET', '/api/v3/document-types/lookup', { headers: h });
    assert.equal(res.status, 200);
    const user = res.body.find((d: { className: string }) => d.className === 'User');
    assert.deepEqual(user, { id: user.id, name: 'User', className: 'User', fullName: USER_TYPE });
    assert.match(user.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.ok(res.body.some((d: { fullName: string }) => d.fullName === 'Skill.Module.BusinessObjects.CRM.Lead'));
    assert.ok(res.body.length >= 31);
  });

  test('POST /api/v3/events raises a custom event in the outbox', async () => {
    const documentId = crypto.randomUUID();
    const res = await server.request('POST', '/api/v3/events', {
      headers: h,
      json: { actionType: 'InvoiceApproved', documentType: DELIVERABLE_TYPE, documentId, businessObjectTypeName: 'Retainer', detail: { Amount: 12 } },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.actionType, 'InvoiceApproved');
    assert.equal(res.body.documentId, documentId);
    assert.match(res.body.id, /^[0-9a-f-]{36}$/);
    const bad = await server.request('POST', '/api/v3/events', { headers: h, json: { actionType: 'X', documentType: 'Nope', documentId } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/body/documentType');
    const noId = await server.request('POST', '/api/v3/events', { headers: h, json: { actionType: 'X', documentType: DELIVERABLE_TYPE } });
    assert.equal(noId.status, 400);
    assert.equal((await server.request('POST', '/api/v3/events', { json: { actionType: 'X', documentType: DELIVERABLE_TYPE, documentId } })).status, 401);
  });
});
