// The OpenAPI document as SDK generators use it: every operation named and answering 2xx, errors as
// problem+json, shared shapes as components; and a client generated from it (openapi-typescript types,
// openapi-fetch calls) that calls three surfaces with results typed at compile time (tsc checks this file).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import createClient from 'openapi-fetch';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import type { components, paths } from './generated/atrium-api.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { CLIENT_TYPES_FILE, clientTypes } from './openapi-client-types.ts';

type Operation = { operationId?: string; responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }>; security?: unknown[] };

let server: TestServer;
let tenant: TenantCredentials;
let document: {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown>; responses: Record<string, { content: unknown }> };
};

before(async () => {
  server = await startTestServer({ ATRIUM_ROLE: 'api' });
  tenant = await server.createTenant('Client Agency', { demoData: true, scale: 0.05 });
  document = (await server.request('GET', '/openapi.json')).body;
});
after(() => server.close());

describe('the OpenAPI document', () => {
  test('every operation has a unique operationId, a 2xx answer, problem+json errors and its security', () => {
    const seen = new Map<string, string>();
    let count = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        count++;
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]*_[a-z][A-Za-z0-9]*$/, `${where} operationId`);
        assert.ok(!seen.has(op.operationId as string), `${where} repeats the operationId of ${seen.get(op.operationId as string)}`);
        seen.set(op.operationId as string, where);
        assert.ok(
          Object.keys(op.responses).some((s) => s.startsWith('2')),
          `${where} has a 2xx answer`,
        );
        // SCIM answers its errors in its own schema (RFC 7644 §3.12), everything else in problem+json.
        for (const status of ['400', '401', '404', '500']) {
          if (path.startsWith('/scim/v2')) {
            assert.deepEqual(
              op.responses[status].content,
              { 'application/scim+json': { schema: { $ref: '#/components/schemas/ScimError' } } },
              `${where} ${status}`,
            );
          } else assert.deepEqual(op.responses[status], { $ref: '#/components/responses/Problem' }, `${where} ${status}`);
        }
        assert.ok(Array.isArray(op.security), `${where} declares its security`);
      }
    }
    assert.ok(count > 60, `operations: ${count}`);
    assert.deepEqual(document.components.responses.Problem.content, { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } });
    // The spec's names stay what clients were generated with.
    assert.equal(document.paths['/api/v3/analytics/named-query/{NamedQuery}/dynamic-execute'].post.operationId, 'namedQueries_dynamicExecute');
    assert.equal(document.paths['/api/webhook-subscriptions'].post.operationId, 'webhookSubscriptions_create');
    assert.deepEqual(document.paths['/health/ready'].get.security, []);
    assert.deepEqual(document.paths['/odata/v4/{entitySet}'].get.security, [{ Basic: [] }, { Bearer: [] }]);
    assert.deepEqual(document.components.securitySchemes.Basic, {
      type: 'http',
      scheme: 'basic',
      description: 'OData feed: user <tenantId>:<appId> (or <slug>:<appId>), password the app secret',
    });
  });

  test('shared shapes are named components, referenced instead of copied', () => {
    for (const name of [
      'Problem',
      'QueryBuilder',
      'WebhookSubscription',
      'Schedule',
      'ScheduleRun',
      'CustomTableRow',
      'CustomTableRowModel',
      'ClientBody',
      'User',
    ]) {
      assert.ok(document.components.schemas[name], `components.schemas.${name}`);
    }
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const subscriptions = document.paths['/api/webhook-subscriptions'];
    assert.deepEqual(subscriptions.post.responses['201'].content?.['application/json'].schema, ref('WebhookSubscription'));
    assert.deepEqual(subscriptions.get.responses['200'].content?.['application/json'].schema, { type: 'array', items: ref('WebhookSubscription') });
    const scheduleBody = document.components.schemas.ScheduleBody as { properties: { queryBuilder: unknown } };
    assert.deepEqual(scheduleBody.properties.queryBuilder, { anyOf: [ref('QueryBuilder'), { type: 'null' }] });
    // No copy of a named shape is left inline anywhere in the document.
    const text = JSON.stringify({ ...document, components: undefined });
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      assert.ok(!text.includes(JSON.stringify(schema)), `an inline copy of ${name}`);
    }
  });

  test('the committed client types are generated from the current document (npm run openapi:client)', async () => {
    assert.equal(await readFile(CLIENT_TYPES_FILE, 'utf8'), await clientTypes(document), 'test/generated/atrium-api.ts is stale: run npm run openapi:client');
  });
});

describe('a generated client (openapi-typescript + openapi-fetch)', () => {
  const client = () => createClient<paths, 'application/json' | 'application/problem+json'>({ baseUrl: server.baseUrl, headers: appHeaders(tenant) });

  test('Data Extraction: dynamic-execute answers a typed page', async () => {
    const { data, error, response } = await client().POST('/api/v3/analytics/named-query/{NamedQuery}/dynamic-execute', {
      params: { path: { NamedQuery: 'DE-Jobs' } },
      body: { queryBuilder: { skip: 0, take: 3, orderBy: [{ field: 'JobNumber', direction: 'asc' }] } },
    });
    assert.equal(response.status, 200, JSON.stringify(error));
    assert.ok(data);
    const page: components['schemas']['DynamicExecutePage'] = data;
    const total: number = page.totalCount;
    // @ts-expect-error the generated type knows totalCount is a number, not a string
    const wrong: string = page.totalCount;
    assert.equal(typeof wrong, 'number');
    assert.ok(total > 3);
    assert.equal(page.data.length, 3);
    const numbers = page.data.map((row) => String(row.JobNumber));
    assert.deepEqual(numbers, [...numbers].sort());

    const bad = await client().POST('/api/v3/analytics/named-query/{NamedQuery}/dynamic-execute', {
      params: { path: { NamedQuery: 'DE-NoSuchQuery' } },
      body: {},
    });
    assert.equal(bad.response.status, 404);
    const problem: components['schemas']['Problem'] | undefined = bad.error;
    assert.equal(problem?.status, 404);
    assert.match(bad.response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  });

  test('Integration API: a department looked up by external id is typed', async () => {
    const { data, response } = await client().GET('/api/companies/{companyId}/departments/external', {
      params: { path: { companyId: tenant.companyId }, query: { externalId: tenant.departmentExternalId } },
    });
    assert.equal(response.status, 200);
    assert.ok(data);
    const department: components['schemas']['Department'] = data;
    const divisionId: string | null = department.divisionId;
    assert.equal(department.id, tenant.departmentId);
    assert.equal(department.companyCode, tenant.companyCode);
    assert.equal(divisionId, tenant.divisionId);
  });

  test('Webhooks: a subscription is created, listed and deleted with typed bodies and answers', async () => {
    const api = client();
    const types = await api.GET('/api/v3/document-types/lookup');
    const userType = types.data?.find((t) => t.name === 'User');
    assert.ok(userType, 'the User document type');
    const body: components['schemas']['WebhookSubscriptionBody'] = {
      Name: 'Generated client',
      ActionType: 'Created',
      DocumentType: userType.fullName,
      Url: 'https://hooks.example.com/generated-client',
      Active: false,
    };
    const created = await api.POST('/api/webhook-subscriptions', { body });
    assert.equal(created.response.status, 201, JSON.stringify(created.error));
    assert.ok(created.data);
    const subscription: components['schemas']['WebhookSubscription'] = created.data;
    const active: boolean = subscription.active;
    assert.equal(active, false);
    assert.match(subscription.secret, /^whsec_/);
    try {
      const listed = await api.GET('/api/webhook-subscriptions');
      assert.deepEqual(
        listed.data?.map((s) => s.id),
        [subscription.id],
      );
    } finally {
      const deleted = await api.DELETE('/api/webhook-subscriptions/{id}', { params: { path: { id: subscription.id } } });
      assert.equal(deleted.response.status, 200);
    }
    assert.deepEqual((await api.GET('/api/webhook-subscriptions')).data, []);
  });
});
