// Bodies the platform would accept, through HTTP: property names in any case, unknown properties ignored
// and listed in X-Ignored-Properties, a known property of the wrong type still a 400 naming it — on Data
// Extraction, Integration, Custom Tables, webhook subscriptions and the login; /admin stays as it is.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let h: Record<string, string>;
const execute = (name: string, json: unknown) => server.request('POST', `/api/v3/analytics/named-query/${name}/dynamic-execute`, { headers: h, json });
const ignored = (res: { headers: Headers }) => res.headers.get('x-ignored-properties');

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Tolerant Agency', { demoData: true, scale: 0.02 });
  h = appHeaders(tenant);
});
after(() => server?.close());

describe('Data Extraction', () => {
  test("the platform's published DE-TimeSheets example, stray fields1 and all, answers 200 and reports fields1", async () => {
    // As published: a second, misspelt field list next to the real one (the platform ignores it).
    const res = await execute('DE-TimeSheets', {
      queryBuilder: {
        skip: 0,
        take: 10,
        fields: ['TimesheetId', 'Day', 'Hours', 'User'],
        fields1: ['Project', 'Job'],
        orderBy: [{ field: 'Day', direction: 'desc' }],
        filters: [['Hours', '>', 0]],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(ignored(res), '$.queryBuilder.fields1');
    assert.ok(res.body.data.length > 0);
    for (const row of res.body.data) assert.deepEqual(Object.keys(row), ['TimesheetId', 'Day', 'Hours', 'User']);
  });

  test('querybuilder, Take, ORDERBY and friends match in any case; nothing is reported', async () => {
    const exact = await execute('DE-TimeSheets', {
      queryBuilder: { take: 3, orderBy: [{ field: 'TimesheetId', direction: 'desc' }], fields: ['TimesheetId'] },
    });
    const folded = await execute('DE-TimeSheets', {
      querybuilder: { Take: 3, ORDERBY: [{ Field: 'TimesheetId', DIRECTION: 'desc' }], Fields: ['TimesheetId'] },
    });
    assert.equal(folded.status, 200, folded.text);
    assert.equal(ignored(folded), null);
    assert.deepEqual(folded.body, exact.body);
    assert.equal(folded.body.data.length, 3);
  });

  test('a known property of the wrong type is still a 400 naming it; the same property twice in two cases is a 400', async () => {
    let res = await execute('DE-TimeSheets', { QueryBuilder: { Take: 'three', typo: 1 } });
    assert.equal(res.status, 400, res.text);
    assert.ok(
      res.body.errors.some((e: { path: string }) => e.path === '/body/queryBuilder/take'),
      res.text,
    );
    assert.equal(ignored(res), '$.QueryBuilder.typo', 'what was ignored is reported on an error too');
    res = await execute('DE-TimeSheets', { queryBuilder: { take: 1, Take: 2 } });
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.detail, /take is sent twice/);
  });

  test('the header lists at most 50 paths, in JSON path form', async () => {
    const queryBuilder: Record<string, unknown> = { take: 1 };
    for (let i = 0; i < 60; i++) queryBuilder[`x${i}`] = i;
    queryBuilder['odd, name'] = true;
    const res = await execute('DE-TimeSheets', { queryBuilder });
    assert.equal(res.status, 200, res.text);
    const paths = ignored(res)?.split(',') ?? [];
    assert.equal(paths.length, 50);
    assert.equal(paths[0], '$.queryBuilder.x0');
    const few = await execute('DE-TimeSheets', { queryBuilder: { take: 1, 'odd, name': true } });
    assert.equal(ignored(few), "$.queryBuilder['odd\\u002c name']");
  });
});

test('Integration API: a user in lower-case names with unknown properties is saved and the unknowns reported', async () => {
  const res = await server.request('POST', '/api/users', {
    headers: h,
    json: {
      username: 'tolerant.user',
      NAME: 'Tolerant User',
      externalid: 'EXT-TOLERANT-1',
      companyCode: tenant.companyCode,
      departmentexternalid: tenant.departmentExternalId,
      TypologyExternalID: tenant.typologyExternalId,
      isactive: true,
      ShoeSize: 44,
      Nickname: 'tolly',
    },
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(ignored(res), '$.ShoeSize,$.Nickname');
  assert.equal(res.body.UserName, 'tolerant.user');
  assert.equal(res.body.ExternalId, 'EXT-TOLERANT-1');
  const patched = await server.request('PATCH', `/api/users/${res.body.Id}`, { headers: h, json: { name: { VALUE: 'Renamed' }, shoe: { value: 1 } } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.Name, 'Renamed');
  assert.equal(ignored(patched), '$.shoe');
  const wrong = await server.request('PATCH', `/api/users/${res.body.Id}`, { headers: h, json: { isactive: { value: 'yes' } } });
  assert.equal(wrong.status, 400, wrong.text);
  assert.ok(
    wrong.body.errors.some((e: { path: string }) => e.path.startsWith('/body/IsActive')),
    wrong.text,
  );
});

test('Custom Tables API: table and row bodies in any case, unknown properties reported by their path', async () => {
  const api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/Tolerant', {
    keycolumnname: 'Code',
    KEYDATATYPEID: 5,
    columns: [{ columnname: 'Amount', columnDataTypeId: 4, colour: 'red' }],
    Comment: 'made by a test',
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(ignored(created), '$.columns[0].colour,$.Comment');
  const written = await api('PUT', '/custom-tables/Tolerant/rows', {
    operationType: 'UpsertMany',
    upsertmanymodel: [{ keyvalue: 'A', COLUMNS: [{ columnName: 'Amount', value: '12.50', unit: 'EUR' }] }],
  });
  assert.equal(written.status, 200, written.text);
  assert.equal(ignored(written), '$.upsertmanymodel[0].COLUMNS[0].unit');
  const rows = await api('GET', '/custom-tables/Tolerant/rows/values');
  assert.equal(rows.body[0].KeyValue, 'A');
  const bad = await api('PUT', '/custom-tables/Tolerant/rows', { operationtype: 'UpsertMany', upsertManyModel: [{ KeyValue: 'B', Columns: 'Amount' }] });
  assert.equal(bad.status, 400, bad.text);
  assert.ok(
    bad.body.errors.some((e: { path: string }) => e.path.startsWith('/body/UpsertManyModel/0/Columns')),
    bad.text,
  );
  assert.equal((await api('DELETE', '/custom-tables/Tolerant')).status, 200);
});

test('webhook subscriptions: any case, unknown properties reported, a wrong type named', async () => {
  const res = await server.request('POST', '/api/webhook-subscriptions', {
    headers: h,
    json: {
      name: 'Tolerant',
      actiontype: 'Created',
      DOCUMENTTYPE: 'Skill.Module.BusinessObjects.User',
      url: 'https://crm.example.com/hooks/atrium',
      active: false,
      detailfilters: [{ GroupCondition: 'and', JSONPATHEXPRESSION: 'Name', condition: 'equal', Value: 'x', note: 'typo' }],
      Retries: 3,
    },
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(ignored(res), '$.detailfilters[0].note,$.Retries');
  assert.equal(res.body.name, 'Tolerant');
  const wrong = await server.request('PUT', `/api/webhook-subscriptions/${res.body.id}`, {
    headers: h,
    json: { name: 'Tolerant', actiontype: 'Created', documenttype: 'Skill.Module.BusinessObjects.User', url: 'https://crm.example.com/x', ACTIVE: 'yes' },
  });
  assert.equal(wrong.status, 400, wrong.text);
  assert.ok(
    wrong.body.errors.some((e: { path: string }) => e.path === '/body/Active'),
    wrong.text,
  );
  assert.equal((await server.request('DELETE', `/api/webhook-subscriptions/${res.body.id}`, { headers: h })).status, 200);
});

test('the login body in any case; its unknown properties are reported', async () => {
  const res = await server.request('POST', '/api/auth/token', {
    headers: { 'x-apptenant': tenant.tenantId },
    json: { username: tenant.username, PASSWORD: tenant.password, rememberMe: true },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.UserId, tenant.userId);
  assert.equal(ignored(res), '$.rememberMe');
});

test('the operator API keeps its own spelling', async () => {
  const res = await server.request('POST', '/admin/tenants', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, json: { Name: 'Wrong Case' } });
  assert.equal(res.status, 400, res.text);
  assert.equal(ignored(res), null);
});
