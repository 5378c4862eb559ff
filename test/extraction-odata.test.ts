// The OData v4 feed read by a real client library (@odata/client), with HTTP Basic credentials:
// $metadata, $filter, $select, $orderby, $top, $skip, $count and server-driven paging.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OData } from '@odata/client';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let token: string;
let basic: string;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('OData', { demoData: true, scale: 0.05 });
  token = await appToken(server, tenant);
  basic = `Basic ${Buffer.from(`${tenant.tenantId}:${tenant.appId}:${tenant.appSecret}`).toString('base64')}`;
  const api = apiFor(server, token);
  assert.equal(
    (
      await api('POST', '/custom-tables/Rates', {
        KeyColumnName: 'Code',
        KeyDataTypeId: 5,
        Columns: [
          { ColumnName: 'Label', ColumnDataTypeId: 7 },
          { ColumnName: 'Amount', ColumnDataTypeId: 4 },
          { ColumnName: 'Since', ColumnDataTypeId: 1 },
        ],
      })
    ).status,
    201,
  );
  const rows = Array.from({ length: 12 }, (_, i) => ({
    KeyValue: `R${String(i).padStart(2, '0')}`,
    Columns: [
      { ColumnName: 'Label', Value: i % 3 === 0 ? `Senior O'Brien ${i}` : `junior ${i}` },
      { ColumnName: 'Amount', Value: i * 10 + 0.5 },
      { ColumnName: 'Since', Value: i === 11 ? null : `2024-01-${String(i + 1).padStart(2, '0')}` },
    ],
  }));
  assert.equal((await api('PUT', '/custom-tables/Rates/rows', { OperationType: 'UpsertMany', UpsertManyModel: rows })).status, 200);
});
after(() => server?.close());

const client = (headers: Record<string, string> = {}) =>
  OData.New4({
    serviceEndpoint: `${server.baseUrl}/odata/v4/`,
    credential: { username: `${tenant.tenantId}:${tenant.appId}`, password: tenant.appSecret },
    commonHeaders: headers,
  });

test('the client reads an entity set with $filter, $select, $orderby, $top, $skip and $count', async () => {
  const rates = client().getEntitySet<{ Code: string; Label: string; Amount: number; Since: string | null }>('CT_Rates');
  const filter = OData.newFilter()
    .field('Amount')
    .gt(20)
    .field('Since')
    .ne(null as never);
  const params = OData.newParam().filter(filter).select(['Code', 'Amount']).orderby('Amount', 'desc').top(3).skip(1);
  const rows = await rates.query(params);
  assert.deepEqual(rows, [
    { Code: 'R09', Amount: 90.5 },
    { Code: 'R08', Amount: 80.5 },
    { Code: 'R07', Amount: 70.5 },
  ]);
  assert.equal(await rates.count(OData.newFilter().field('Amount').ge(50)), 7);
  const all = await rates.query();
  assert.equal(all.length, 12);
  assert.deepEqual(Object.keys(all[0]), ['Code', 'Label', 'Amount', 'Since']);
});

test('$filter functions, not, null, parentheses, dates and string literals with quotes', async () => {
  const get = async (filter: string) => {
    const res = await fetch(`${server.baseUrl}/odata/v4/CT_Rates?$filter=${encodeURIComponent(filter)}&$select=Code`, { headers: { authorization: basic } });
    const body = (await res.json()) as { value: { Code: string }[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    return body.value.map((r) => r.Code).join(',');
  };
  assert.equal(await get("contains(Label,'o''brien')"), 'R00,R03,R06,R09');
  assert.equal(await get("startswith(Label,'JUN') and Amount lt 30"), 'R01,R02');
  assert.equal(await get("endswith(Label, ' 11') or Since eq null"), 'R11');
  assert.equal(await get("not contains(Label,'junior') and (Since ge 2024-01-07 or Code eq 'R00')"), 'R00,R06,R09');
  assert.equal(await get('Since le 2024-01-02T00:00:00Z'), 'R00,R01');
  assert.equal(await get("tolower(Code) eq 'r05'"), 'R05');
  const bad = await fetch(`${server.baseUrl}/odata/v4/CT_Rates?$filter=${encodeURIComponent('Nope eq 1')}`, { headers: { authorization: basic } });
  assert.equal(bad.status, 400);
});

test('server-driven paging: @odata.nextLink until the last page', async () => {
  const codes: string[] = [];
  let url: string | undefined = `${server.baseUrl}/odata/v4/CT_Rates?$orderby=Code&$count=true`;
  let pages = 0;
  while (url) {
    const res: Response = await fetch(url, { headers: { authorization: basic, prefer: 'odata.maxpagesize=5' } });
    assert.equal(res.headers.get('odata-version'), '4.0');
    const body = (await res.json()) as { value: { Code: string }[]; '@odata.nextLink'?: string; '@odata.count': number };
    assert.equal(body['@odata.count'], 12);
    codes.push(...body.value.map((r) => r.Code));
    url = body['@odata.nextLink'];
    pages++;
  }
  assert.equal(pages, 3);
  assert.deepEqual(
    codes,
    Array.from({ length: 12 }, (_, i) => `R${String(i).padStart(2, '0')}`),
  );
});

test('service document and $metadata list every named query and the custom tables', async () => {
  const doc = await fetch(`${server.baseUrl}/odata/v4/`, { headers: { authorization: basic } });
  const body = (await doc.json()) as { value: { name: string; url: string }[] };
  const names = body.value.map((v) => v.name);
  for (const n of ['DE_Jobs', 'DE_TimeSheets', 'EstimatedPlannedActualMonthly', 'CT_Rates']) assert.ok(names.includes(n), n);
  const meta = await fetch(`${server.baseUrl}/odata/v4/$metadata`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(meta.status, 200);
  const xml = await meta.text();
  assert.match(xml, /<EntitySet Name="DE_Jobs" EntityType="Atrium.DE_Jobs"\/>/);
  assert.match(
    xml,
    /<EntityType Name="CT_Rates"><Key><PropertyRef Name="Code"\/><\/Key><Property Name="Code" Type="Edm.String" Nullable="false"\/><Property Name="Label" Type="Edm.String"\/><Property Name="Amount" Type="Edm.Decimal"\/><Property Name="Since" Type="Edm.Date"\/>/,
  );
  // A named query through the client, as Excel / Power BI would read it.
  const jobs = await client()
    .getEntitySet<{ JobId: string }>('DE_Jobs')
    .query(OData.newParam().top(2).select(['JobId', 'Job']));
  assert.equal(jobs.length, 2);
});

test('without valid credentials: 401 with a Basic challenge', async () => {
  for (const authorization of [undefined, `Basic ${Buffer.from(`${tenant.tenantId}:${tenant.appId}:wrong`).toString('base64')}`, 'Basic bm9jb2xvbg==']) {
    const res = await fetch(`${server.baseUrl}/odata/v4/DE_Jobs`, { headers: authorization ? { authorization } : {} });
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic realm="Atrium"/);
    await res.text();
  }
});
