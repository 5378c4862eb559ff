// The $filter grammar Excel and Power Query generate, each form read both as a raw request and through a
// real OData client (@odata/client); key lookups, 501 for unsupported options, helper queries kept out of
// the service document.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OData } from '@odata/client';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let basic: string;

const codes = (...n: number[]) => n.map((i) => `R${String(i).padStart(2, '0')}`).join(',');

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('OData filters');
  basic = `Basic ${Buffer.from(`${tenant.tenantId}:${tenant.appId}:${tenant.appSecret}`).toString('base64')}`;
  const api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/Rates', {
    KeyColumnName: 'Code',
    KeyDataTypeId: 5,
    Columns: [
      { ColumnName: 'Label', ColumnDataTypeId: 7 },
      { ColumnName: 'Amount', ColumnDataTypeId: 4 },
      { ColumnName: 'Since', ColumnDataTypeId: 1 },
      { ColumnName: 'Qty', ColumnDataTypeId: 3 },
      { ColumnName: 'Active', ColumnDataTypeId: 0 },
    ],
  });
  assert.equal(created.status, 201, created.text);
  // R00…R11: Label "Senior O'Brien i" every third row, else "junior i"; Amount i*10+0.5; Since 2024-01-(i+1), R11 none; Qty i; Active for even i.
  const rows = Array.from({ length: 12 }, (_, i) => ({
    KeyValue: codes(i),
    Columns: [
      { ColumnName: 'Label', Value: i % 3 === 0 ? `Senior O'Brien ${i}` : `junior ${i}` },
      { ColumnName: 'Amount', Value: i * 10 + 0.5 },
      { ColumnName: 'Since', Value: i === 11 ? null : `2024-01-${String(i + 1).padStart(2, '0')}` },
      { ColumnName: 'Qty', Value: i },
      { ColumnName: 'Active', Value: i % 2 === 0 },
    ],
  }));
  assert.equal((await api('PUT', '/custom-tables/Rates/rows', { OperationType: 'UpsertMany', UpsertManyModel: rows })).status, 200);
});
after(() => server?.close());

/** Each form and the codes it keeps, in Code order. */
const FORMS: [string, string][] = [
  ["Code in ('R01','r02','R99')", codes(1, 2)],
  ['Amount in (0.5, 20.5)', codes(0, 2)],
  ['year(Since) eq 2024 and month(Since) eq 1 and day(Since) eq 3', codes(2)],
  ['date(Since) eq 2024-01-05', codes(4)],
  ['Since eq null', codes(11)],
  ['null ne Since and day(Since) ge 10', codes(9, 10)],
  ['Qty add 1 eq 4', codes(3)],
  ['Qty sub 1 eq 0', codes(1)],
  ['Qty mul 2 eq 10', codes(5)],
  ['Amount div 2 eq 5.25', codes(1)],
  ['Qty mod 5 eq 0', codes(0, 5, 10)],
  ['Qty div 0 eq 1', ''],
  ['-Qty eq -2', codes(2)],
  ['Qty add 2 mul 3 eq 8', codes(2)],
  ['(Qty add 2) mul 3 eq 9', codes(1)],
  ['Amount eq Qty mul 10 add 0.5 and Qty lt 2', codes(0, 1)],
  ['round(Amount) eq 11 or floor(Amount) eq 20 or ceiling(Amount) eq 31', codes(1, 2, 3)],
  ['not (Qty lt 10)', codes(10, 11)],
  ['not Active', codes(1, 3, 5, 7, 9, 11)],
  ['Active and Qty gt 6', codes(8, 10)],
  ['Active eq false and Qty lt 4', codes(1, 3)],
  ["endswith(Label,'1')", codes(1, 11)],
  ["not endswith(Label,'1') and Qty lt 3", codes(0, 2)],
  ["contains(Label,'junior') eq false", codes(0, 3, 6, 9)],
  ["indexof(Label,'brien') eq 9", codes(0, 3, 6, 9)],
  ["indexof(Label,'zzz') eq -1 and Qty eq 4", codes(4)],
  ['length(Label) eq 8', codes(1, 2, 4, 5, 7, 8)],
  ["trim(concat(' x', Code)) eq 'xR04'", codes(4)],
  ["toupper(Label) eq 'JUNIOR 2'", codes(2)],
  ["tolower(Code) eq 'r05'", codes(5)],
  ["substring(Code, 1) eq '07' or substring(Label, 0, 6) eq 'Senior' and Qty gt 8", codes(7, 9)],
  ["Label gt 'senior'", codes(0, 3, 6, 9)],
  ['Qty eq 1 or Qty eq 2 and Amount gt 100', codes(1)],
  ['(Qty eq 1 or Qty eq 2) and Amount gt 100', ''],
  ["startswith(Label, 'SEN') and (Since ge 2024-01-07 or Code eq 'R00')", codes(0, 6, 9)],
];

async function raw(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: basic, ...headers } });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: text.startsWith('{') ? JSON.parse(text) : text };
}

const client = () =>
  OData.New4({
    serviceEndpoint: `${server.baseUrl}/odata/v4/`,
    credential: { username: `${tenant.tenantId}:${tenant.appId}`, password: tenant.appSecret },
  });

test('each $filter form over a raw request', async () => {
  for (const [filter, expected] of FORMS) {
    const res = await raw(`/odata/v4/CT_Rates?$select=Code&$orderby=Code&$filter=${encodeURIComponent(filter)}`);
    assert.equal(res.status, 200, `${filter}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.value.map((r: { Code: string }) => r.Code).join(','), expected, filter);
  }
});

test('each $filter form through @odata/client, and its own filter builder', async () => {
  const rates = client().getEntitySet<{ Code: string; Qty: number }>('CT_Rates');
  for (const [filter, expected] of FORMS) {
    const rows = await rates.query(OData.newParam().filter(filter).select(['Code']).orderby('Code', 'asc'));
    assert.equal(rows.map((r) => r.Code).join(','), expected, filter);
  }
  const built = OData.newFilter().field('Code').in(['R03', 'R04']).field('Qty').gt(3);
  assert.deepEqual(
    (await rates.query(OData.newParam().filter(built).select(['Code', 'Qty']))).map((r) => r.Code),
    ['R04'],
  );
  assert.equal(await rates.count(OData.newFilter().field('Qty').lt(5)), 5);
});

test('date parts of a datetime are read in UTC', async () => {
  const all = await raw('/odata/v4/DE_Users?$select=UserId,ModifiedOn');
  assert.equal(all.status, 200, JSON.stringify(all.body));
  const user = all.body.value.find((u: { ModifiedOn: string | null }) => u.ModifiedOn !== null) as { UserId: string; ModifiedOn: string };
  assert.ok(user, 'a user with ModifiedOn');
  const t = new Date(user.ModifiedOn);
  const parts = `year(ModifiedOn) eq ${t.getUTCFullYear()} and month(ModifiedOn) eq ${t.getUTCMonth() + 1} and day(ModifiedOn) eq ${t.getUTCDate()} and hour(ModifiedOn) eq ${t.getUTCHours()} and minute(ModifiedOn) eq ${t.getUTCMinutes()}`;
  for (const filter of [parts, `date(ModifiedOn) eq ${user.ModifiedOn.slice(0, 10)} and UserId eq ${user.UserId}`]) {
    const res = await raw(`/odata/v4/DE_Users?$select=UserId&$filter=${encodeURIComponent(filter)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(
      res.body.value.some((u: { UserId: string }) => u.UserId === user.UserId),
      filter,
    );
  }
  const none = await raw(`/odata/v4/DE_Users?$filter=${encodeURIComponent('hour(ModifiedOn) eq 24 or ModifiedOn lt 2000-01-01T00:00:00Z')}`);
  assert.deepEqual(none.body.value, []);
});

test('a malformed or ill-typed $filter is a 400 naming what is wrong', async () => {
  const cases: [string, RegExp][] = [
    ['Nope eq 1', /unknown property Nope/],
    ["Qty add 'x' eq 1", /add takes numbers/],
    ['frobnicate(Code) eq 1', /function frobnicate is not supported; supported: contains/],
    ['year(Label) eq 2024', /year takes a date or a datetime/],
    ["Qty eq 'abc'", /not a valid integer/],
    ['Qty eq', /ends too early/],
    ['(Qty eq 1', /expected \)/],
    ['Code has 1', /has operator is not supported/],
  ];
  for (const [filter, detail] of cases) {
    const res = await raw(`/odata/v4/CT_Rates?$filter=${encodeURIComponent(filter)}`);
    assert.equal(res.status, 400, filter);
    assert.match(res.type, /application\/problem\+json/);
    assert.match(res.body.detail, detail, filter);
  }
});

test('key lookup: EntitySet(key) answers one entity, raw and through the client', async () => {
  const one = await raw("/odata/v4/CT_Rates('R03')?$select=Code,Qty");
  assert.equal(one.status, 200, JSON.stringify(one.body));
  assert.deepEqual(one.body, { '@odata.context': `${server.baseUrl}/odata/v4/$metadata#CT_Rates/$entity`, Code: 'R03', Qty: 3 });
  assert.equal((await raw("/odata/v4/CT_Rates(Code='R04')")).body.Label, 'junior 4');
  const user = (await raw('/odata/v4/DE_Users?$select=UserId&$top=1')).body.value[0].UserId;
  assert.equal((await raw(`/odata/v4/DE_Users(${user})?$select=UserId`)).body.UserId, user);
  const rates = client().getEntitySet<{ Code: string; Amount: number }>('CT_Rates');
  assert.equal((await rates.retrieve('R05')).Amount, 50.5);
  assert.equal((await rates.retrieve({ Code: 'R06' })).Amount, 60.5);

  const missing = await raw("/odata/v4/CT_Rates('R99')");
  assert.equal(missing.status, 404);
  assert.match(missing.type, /problem\+json/);
  for (const path of ['/odata/v4/DE_JobsCount(1)', "/odata/v4/CT_Rates(Nope='x')", '/odata/v4/CT_Rates(Code)']) {
    const bad = await raw(path);
    assert.equal(bad.status, 400, path);
    assert.match(bad.body.detail, /key/, path);
  }
});

test('unsupported query options answer 501 problem+json saying what is supported', async () => {
  for (const option of ['$expand=Anything', '$apply=aggregate(Qty with sum as Total)', '$search=junior', '$skiptoken=abc', '$format=xml']) {
    const res = await raw(`/odata/v4/CT_Rates?${option}`);
    assert.equal(res.status, 501, option);
    assert.match(res.type, /application\/problem\+json/);
    assert.match(res.body.detail, option === '$format=xml' ? /answers JSON/ : /supported: \$filter, \$select, \$orderby, \$top, \$skip, \$count/);
  }
  assert.equal((await raw('/odata/v4/CT_Rates?$format=json&$top=1')).status, 200);
});

test('the *Count and *Deleted helper queries stay out of the service document but remain readable', async () => {
  const doc = await raw('/odata/v4/');
  const names: string[] = doc.body.value.map((v: { name: string }) => v.name);
  assert.ok(names.includes('DE_TimeSheets') && names.includes('CT_Rates') && names.includes('DE_Countries'));
  assert.deepEqual(
    names.filter((n) => /Count$|Deleted$/.test(n)),
    [],
  );
  const xml = (await raw('/odata/v4/$metadata')).body as string;
  assert.match(xml, /<EntitySet Name="DE_JobsCount" EntityType="Atrium.DE_JobsCount" IncludeInServiceDocument="false"\/>/);
  assert.match(xml, /<EntitySet Name="DE_TimeSheetsDeleted" EntityType="Atrium.DE_TimeSheetsDeleted" IncludeInServiceDocument="false"\/>/);
  assert.match(xml, /<EntitySet Name="DE_TimeSheets" EntityType="Atrium.DE_TimeSheets"\/>/);
  const count = await raw('/odata/v4/DE_JobsCount');
  assert.equal(count.status, 200);
  assert.deepEqual(count.body.value, [{ Count: 0 }]);
});
