// Custom tables: export to a JSON file and import it, into the same or another tenant, atomically.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Api, apiFor, appToken, EVERY_TYPE, everyTypeColumns, type Tenant } from './custom-tables-helpers.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let source: Tenant;
let target: Tenant;
let a: Api;
let b: Api;
let tokenB: string;

before(async () => {
  server = await startTestServer();
  source = await server.createTenant('Source Agency');
  target = await server.createTenant('Target Agency');
  a = apiFor(server, await appToken(server, source));
  tokenB = await appToken(server, target);
  b = apiFor(server, tokenB);
});
after(() => server.close());

const importInto = (token: string, table: string, body: string) =>
  server.request('PUT', `/api/v3/custom-tables/${table}/import`, { headers: { 'x-accesstoken': token, 'content-type': 'application/json' }, body });

const strip = (schema: any) => {
  const { Id: _id, CreatedOn: _c, ModifiedOn: _m, ...rest } = schema;
  return rest;
};

describe('export and import', () => {
  test('an export imported into another tenant reproduces the table exactly (every data type)', async () => {
    await a('POST', '/custom-tables/Catalog', { KeyColumnName: 'Code', KeyDataTypeId: 11, KeyLength: 12, Columns: everyTypeColumns() });
    const full = Object.fromEntries(EVERY_TYPE.map((c) => [c.name, c.value]));
    const rows = [
      { KeyValue: 'full', Columns: Object.entries(full).map(([ColumnName, Value]) => ({ ColumnName, Value })) },
      { KeyValue: 'empty' },
      {
        KeyValue: 'edge "q"\\',
        Columns: [
          { ColumnName: 'Ratio', Value: -1.7976931348623157e308 },
          { ColumnName: 'Qty', Value: 2147483647 },
          { ColumnName: 'Body', Value: '{"Rows":[1,2]}, ]} [ \u2028 \ud83d\ude00' },
          { ColumnName: 'Blob', Value: '' },
          { ColumnName: 'Day', Value: '0001-01-01' },
          { ColumnName: 'Amount', Value: '0' },
        ],
      },
      ...Array.from({ length: 2500 }, (_, i) => ({ KeyValue: `r${i}`, Columns: [{ ColumnName: 'Qty', Value: i }] })),
    ];
    assert.equal((await a('PUT', '/custom-tables/Catalog/rows', { OperationType: 2, UpsertManyModel: rows })).status, 200);

    const exported = await a('GET', '/custom-tables/Catalog/export');
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-disposition') ?? '', /^attachment; filename="Catalog\.json"$/);
    const file = JSON.parse(exported.text);
    assert.equal(file.Format, 'atrium.custom-table');
    assert.equal(file.Rows.length, 2503);

    const imported = await importInto(tokenB, 'Catalog', exported.text);
    assert.equal(imported.status, 200, imported.text);
    assert.deepEqual(imported.body, {
      TableName: 'Catalog',
      Created: true,
      AddedColumns: EVERY_TYPE.map((c) => c.name),
      RowCount: 2503,
      Inserted: 2503,
      Updated: 0,
    });

    assert.deepEqual(strip((await b('GET', '/custom-tables/Catalog')).body), strip((await a('GET', '/custom-tables/Catalog')).body));
    for (const skip of [0, 2000]) {
      const fromA = await a('GET', `/custom-tables/Catalog/rows/values?skip=${skip}&take=2000`);
      const fromB = await b('GET', `/custom-tables/Catalog/rows/values?skip=${skip}&take=2000`);
      assert.deepEqual(fromB.body, fromA.body);
    }
    const again = await b('GET', '/custom-tables/Catalog/export');
    assert.deepEqual({ ...JSON.parse(again.text), ExportedOnUtc: null }, { ...file, ExportedOnUtc: null }, 'export -> import -> export is a fixed point');

    const twice = await importInto(tokenB, 'catalog', exported.text);
    assert.equal(twice.status, 200);
    assert.equal(twice.body.Created, false);
    assert.equal(twice.body.Updated, 2503, 'importing into an existing table upserts');
  });

  test('an import with one bad row is rejected whole: no table, no rows', async () => {
    const lines = [
      '{"TableName":"Broken","KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[{"ColumnName":"Name","ColumnDataTypeId":5}],"Rows":[',
      ...Array.from({ length: 4999 }, (_, i) => `{"Id":${i},"Name":"n${i}"},`),
      '{"Id":4999,"Name":"' + 'x'.repeat(51) + '"}',
      ']}',
    ];
    const res = await importInto(tokenB, 'Broken', lines.join('\n'));
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, '/body/Rows/4999/Name');
    assert.match(res.body.errors[0].message, /row 4999 \(key 4999\), column "Name": the string has 51 characters/);
    assert.equal((await b('GET', '/custom-tables/Broken')).status, 404, 'the table created by the import was rolled back');

    await b('POST', '/custom-tables/Kept', { KeyColumnName: 'Id', KeyDataTypeId: 3, Columns: [{ ColumnName: 'Name', ColumnDataTypeId: 5 }] });
    await b('PUT', '/custom-tables/Kept/rows', { OperationType: 2, UpsertManyModel: [{ KeyValue: 1, Columns: [{ ColumnName: 'Name', Value: 'before' }] }] });
    const bad = await importInto(
      tokenB,
      'Kept',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[{"ColumnName":"Name","ColumnDataTypeId":5},{"ColumnName":"Extra","ColumnDataTypeId":3}],"Rows":[{"Id":1,"Name":"after"},{"Id":2,"Unknown":1}]}',
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/body/Rows/1/Unknown');
    const kept = await b('GET', '/custom-tables/Kept');
    assert.deepEqual(
      kept.body.Columns.map((c: any) => c.ColumnName),
      ['Name'],
      'the column the import would have added is not there',
    );
    assert.equal((await b('GET', '/custom-tables/Kept/row?keyValue=1')).body.Columns[0].Value, 'before');
  });

  test('malformed files are 400s, never 500s', async () => {
    const cases = [
      '',
      'not json',
      '[]',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[],"Rows":[{"Id":1}',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[],"Rows":[{"Id":1},]}',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[],"Rows":[{"Id":1} {"Id":2}]}',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[],"Rows":[1]}',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[],"Rows":[{"Id":null}]}',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":{},"Rows":[]}',
      '{"KeyColumnName":"Id","KeyDataTypeId":99,"Columns":[],"Rows":[]}',
      '{"KeyColumnName":"1d","KeyDataTypeId":3,"Columns":[],"Rows":[]}',
      '{"Format":"other","KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[],"Rows":[]}',
      '{"Rows":[{"Id":1}]}',
      '{"KeyColumnName":"Id","KeyDataTypeId":3,"Columns":[],"Rows":[]} trailing',
    ];
    for (const body of cases) {
      const res = await importInto(tokenB, 'Malformed', body);
      assert.equal(res.status, 400, `${body}: ${res.status} ${res.text}`);
    }
    assert.equal((await b('GET', '/custom-tables/Malformed')).status, 404);
  });

  test('the schema may follow the rows, and the path names the table', async () => {
    const res = await importInto(tokenB, 'Renamed', '{"Rows":[{"K":"b"},{"k":"a"}],"KeyColumnName":"K","KeyDataTypeId":5,"Columns":[],"TableName":"Original"}');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.TableName, 'Renamed');
    const rows = await b('GET', '/custom-tables/Renamed/rows/values');
    assert.deepEqual(
      rows.body.map((r: any) => r.KeyValue),
      ['a', 'b'],
    );
  });

  test('export of a missing or unreadable table is a problem, not a half file', async () => {
    const res = await a('GET', '/custom-tables/Nothing/export');
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
  });
});
