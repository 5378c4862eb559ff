// orderBy on a string column sorts ignoring case, as the platform's case-insensitive collation does
// (Alice, bob, Carol), in JSON pages, CSV, NDJSON, OData $orderby and scheduled files alike; values equal
// but for case tie, and the key breaks the tie so pages neither overlap nor skip.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { apiFor, appToken, type Tenant } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Tenant;
let h: Record<string, string>;

// Keys chosen so that key order differs from name order; "bob"/"Bob"/"BOB" tie on the name.
const PEOPLE: [string, string][] = [
  ['K1', 'Carol'],
  ['K2', 'bob'],
  ['K3', 'Alice'],
  ['K4', 'Bob'],
  ['K5', 'alice b'],
  ['K6', 'BOB'],
  ['K7', 'dave'],
  ['K8', 'Émile'],
];
// Ignoring case; equal names in key order; É sorts with E (linguistic order, as the platform's collation).
const EXPECTED_ASC = ['K3', 'K5', 'K2', 'K4', 'K6', 'K1', 'K7', 'K8'];

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Order Agency');
  h = appHeaders(tenant);
  const api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/People', {
    KeyColumnName: 'Code',
    KeyDataTypeId: 5,
    Columns: [{ ColumnName: 'Name', ColumnDataTypeId: 5 }],
  });
  assert.equal(created.status, 201, created.text);
  const rows = PEOPLE.map(([k, name]) => ({ KeyValue: k, Columns: [{ ColumnName: 'Name', Value: name }] }));
  const upsert = await api('PUT', '/custom-tables/People/rows', { OperationType: 'UpsertMany', UpsertManyModel: rows });
  assert.equal(upsert.status, 200, upsert.text);
});
after(() => server?.close());

const execute = (queryBuilder: unknown, accept = 'application/json') =>
  server.request('POST', '/api/v3/analytics/named-query/CT-People/dynamic-execute', { headers: { ...h, accept }, json: { queryBuilder } });

test('JSON pages sort strings ignoring case, ties broken by the key, asc and desc', async () => {
  const asc = await execute({ orderBy: [{ field: 'Name', direction: 'asc' }], take: 100 });
  assert.equal(asc.status, 200, asc.text);
  assert.deepEqual(
    asc.body.data.map((r: { Code: string }) => r.Code),
    EXPECTED_ASC,
  );
  const desc = await execute({ orderBy: [{ field: 'Name', direction: 'desc' }], take: 100 });
  // Descending by name, equal names still in key order (the key is always ascending).
  assert.deepEqual(
    desc.body.data.map((r: { Code: string }) => r.Code),
    ['K8', 'K7', 'K1', 'K2', 'K4', 'K6', 'K5', 'K3'],
  );
});

test('paging one row at a time through tied names neither repeats nor skips a row', async () => {
  const seen: string[] = [];
  for (let skip = 0; skip < PEOPLE.length; skip++) {
    const page = await execute({ orderBy: [{ field: 'Name', direction: 'asc' }], skip, take: 1 });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.totalCount, PEOPLE.length);
    seen.push(page.body.data[0].Code);
  }
  assert.deepEqual(seen, EXPECTED_ASC);
});

test('the key itself, a string, orders ignoring case and still exactly', async () => {
  const res = await execute({ orderBy: [{ field: 'Code', direction: 'asc' }], take: 100 });
  assert.deepEqual(
    res.body.data.map((r: { Code: string }) => r.Code),
    ['K1', 'K2', 'K3', 'K4', 'K5', 'K6', 'K7', 'K8'],
  );
});

test('CSV and NDJSON exports use the same order', async () => {
  const qb = { orderBy: [{ field: 'Name', direction: 'asc' }] };
  const csv = await execute(qb, 'text/csv');
  assert.equal(csv.status, 200, csv.text);
  const codes = csv.text
    .trim()
    .split(/\r\n/)
    .slice(1)
    .map((line) => line.split(',')[0]);
  assert.deepEqual(codes, EXPECTED_ASC);
  const nd = await fetch(`${server.baseUrl}/api/v3/analytics/named-query/CT-People/dynamic-execute`, {
    method: 'POST',
    headers: { ...h, accept: 'application/x-ndjson', 'content-type': 'application/json' },
    body: JSON.stringify({ queryBuilder: qb }),
  });
  assert.equal(nd.status, 200);
  assert.deepEqual(
    (await nd.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).Code),
    EXPECTED_ASC,
  );
});

test('OData $orderby sorts the same way', async () => {
  const basic = `Basic ${Buffer.from(`${tenant.tenantId}:${tenant.appId}:${tenant.appSecret}`).toString('base64')}`;
  const res = await fetch(`${server.baseUrl}/odata/v4/CT_People?$orderby=Name`, { headers: { authorization: basic } });
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { value: { Code: string }[] };
  assert.deepEqual(
    body.value.map((r) => r.Code),
    EXPECTED_ASC,
  );
});

test('a scheduled file is written in the same order', async () => {
  const created = await server.request('POST', '/api/v3/analytics/schedules', {
    headers: h,
    json: { Name: 'People', Query: 'CT-People', Format: 'csv', CronExpression: '5 0 * * *', queryBuilder: { orderBy: [{ field: 'Name', direction: 'asc' }] } },
  });
  assert.equal(created.status, 201, created.text);
  const run = await server.request('POST', `/api/v3/analytics/schedules/${created.body.id}/run?wait=25`, { headers: h });
  assert.equal(run.status, 200, run.text);
  const file = await server.request('GET', `/api/v3/analytics/schedules/${created.body.id}/runs/${run.body.id}/file`, { headers: h });
  assert.equal(file.status, 200, file.text);
  const codes = file.text
    .trim()
    .split(/\r\n/)
    .slice(1)
    .map((line) => line.split(',')[0]);
  assert.deepEqual(codes, EXPECTED_ASC);
});
