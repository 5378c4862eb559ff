// Custom Tables API: tables and their schema, every data type (valid, invalid, boundary lengths), every
// operation type, atomic rejection, reads, events, and the PostgreSQL tables behind it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type Api, apiFor, appToken, EVERY_TYPE, everyTypeColumns, type Tenant } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Tenant;
let api: Api;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Custom Tables Agency');
  api = apiFor(server, await appToken(server, tenant));
});
after(() => server.close());

async function query<T = any>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

const upsert = (table: string, rows: { key: unknown; cols?: Record<string, unknown> }[], op: unknown = 'UpsertMany') =>
  api('PUT', `/custom-tables/${table}/rows`, {
    OperationType: op,
    [op === 1 || op === 'UpdateMany' ? 'UpdateManyModel' : 'UpsertManyModel']: rows.map((r) => ({
      KeyValue: r.key,
      Columns: Object.entries(r.cols ?? {}).map(([ColumnName, Value]) => ({ ColumnName, Value })),
    })),
  });

const valuesOf = (row: { Columns: { ColumnName: string; Value: unknown }[] }) => Object.fromEntries(row.Columns.map((c) => [c.ColumnName, c.Value]));

describe('authentication', () => {
  test('every endpoint needs an access token; app headers alone are a 401', async () => {
    for (const [method, path] of [
      ['GET', '/api/v3/custom-tables'],
      ['GET', '/api/v3/custom-tables/Any'],
      ['POST', '/api/v3/custom-tables/Any'],
      ['PUT', '/api/v3/custom-tables/Any/rows'],
      ['GET', '/api/v3/custom-tables/Any/export'],
      ['PUT', '/api/v3/custom-tables/Any/import'],
      ['PUT', '/api/v3/custom-table-definitions/00000000-0000-4000-8000-000000000000'],
    ]) {
      assert.equal((await server.request(method, path)).status, 401, `${method} ${path}`);
      assert.equal((await server.request(method, path, { headers: appHeaders(tenant) })).status, 401, `${method} ${path} with app headers`);
      assert.equal((await server.request(method, path, { headers: { 'x-accesstoken': 'garbage' } })).status, 401);
    }
    const bearer = await server.request('GET', '/api/v3/custom-tables', { headers: { authorization: `Bearer ${await appToken(server, tenant)}` } });
    assert.equal(bearer.status, 200);
  });
});

describe('tables', () => {
  test('create with every data type, read the schema, list it', async () => {
    const res = await api('POST', '/custom-tables/Everything', { KeyColumnName: 'Code', KeyDataTypeId: 5, Columns: everyTypeColumns() });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.Created, true);
    const schema = await api('GET', '/custom-tables/everything');
    assert.equal(schema.status, 200);
    assert.equal(schema.body.TableName, 'Everything');
    assert.equal(schema.body.KeyColumnName, 'Code');
    assert.equal(schema.body.KeyDataTypeId, 5);
    assert.equal(schema.body.RowCount, 0);
    assert.deepEqual(schema.body.Columns, everyTypeColumns());
    assert.ok(schema.body.CreatedOn && schema.body.ModifiedOn && schema.body.Id);
    const list = await api('GET', '/custom-tables');
    assert.ok(list.body.some((t: any) => t.TableName === 'Everything' && t.Id === schema.body.Id));
    // The physical table has the PostgreSQL types of the spec's enumeration.
    const cols = await query(
      `select column_name, data_type, character_maximum_length as len, numeric_precision as p, numeric_scale as s
       from information_schema.columns where table_schema = 'customtables' and table_name = (select physical_name from custom_tables where id = $1)`,
      [schema.body.Id],
    );
    const type = Object.fromEntries(
      cols.map((c) => [c.column_name, `${c.data_type}${c.len ? `(${c.len})` : ''}${c.s !== null && c.data_type === 'numeric' ? `(${c.p},${c.s})` : ''}`]),
    );
    assert.deepEqual(type, {
      tenant_id: 'uuid',
      code: 'character varying(50)',
      flag: 'boolean',
      day: 'date',
      ratio: 'double precision',
      qty: 'integer',
      amount: 'numeric(19,4)',
      short: 'character varying(50)',
      medium: 'character varying(100)',
      unbounded: 'text',
      body: 'text',
      ref: 'uuid',
      long: 'character varying(200)',
      custom: 'character varying(7)',
      blob: 'bytea',
    });
  });

  test('POST on an existing table adds the new columns and leaves the others; another type is a 409', async () => {
    assert.equal(
      (await api('POST', '/custom-tables/Growing', { KeyColumnName: 'Id', KeyDataTypeId: 3, Columns: [{ ColumnName: 'A', ColumnDataTypeId: 5 }] })).status,
      201,
    );
    assert.equal((await upsert('Growing', [{ key: 1, cols: { A: 'kept' } }])).status, 200);
    const again = await api('POST', '/custom-tables/GROWING', {
      KeyColumnName: 'id',
      KeyDataTypeId: 3,
      Columns: [
        { ColumnName: 'a', ColumnDataTypeId: 5 },
        { ColumnName: 'B', ColumnDataTypeId: 3 },
      ],
    });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body.AddedColumns, ['B']);
    assert.deepEqual(
      again.body.Columns.map((c: any) => c.ColumnName),
      ['A', 'B'],
    );
    const row = await api('GET', '/custom-tables/Growing/row?keyValue=1');
    assert.deepEqual(valuesOf(row.body), { A: 'kept', B: null });

    const conflict = await api('POST', '/custom-tables/Growing', {
      KeyColumnName: 'Id',
      KeyDataTypeId: 3,
      Columns: [
        { ColumnName: 'A', ColumnDataTypeId: 6 },
        { ColumnName: 'C', ColumnDataTypeId: 0 },
      ],
    });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.errors[0].path, '/body/Columns/0/ColumnDataTypeId');
    assert.match(conflict.body.detail, /A exists as Varchar50, not Varchar100/);
    const keyConflict = await api('POST', '/custom-tables/Growing', { KeyColumnName: 'Other', KeyDataTypeId: 3, Columns: [] });
    assert.equal(keyConflict.status, 409);
    const unchanged = await api('GET', '/custom-tables/Growing');
    assert.deepEqual(
      unchanged.body.Columns.map((c: any) => c.ColumnName),
      ['A', 'B'],
      'a refused POST adds nothing',
    );
  });

  test('names: letters, digits, underscore, starting with a letter, at most 63 characters; else 400', async () => {
    const long = `T${'x'.repeat(62)}`;
    const ok = await api('POST', `/custom-tables/${long}`, {
      KeyColumnName: `K${'y'.repeat(62)}`,
      KeyDataTypeId: 3,
      Columns: [{ ColumnName: `C${'z'.repeat(62)}`, ColumnDataTypeId: 5 }],
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal((await api('GET', `/custom-tables/${long.toLowerCase()}`)).status, 200);
    for (const bad of [`T${'x'.repeat(63)}`, '1abc', '_abc', 'a-b', 'a%20b', 'caf%C3%A9']) {
      const res = await api('POST', `/custom-tables/${bad}`, { KeyColumnName: 'K', KeyDataTypeId: 3 });
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.errors[0].path, '/params/tableName');
    }
    for (const [column, path] of [
      ['1st', '/body/Columns/0/ColumnName'],
      ['a b', '/body/Columns/0/ColumnName'],
      ['Robert"); drop table x;--', '/body/Columns/0/ColumnName'],
      [`C${'z'.repeat(63)}`, '/body/Columns/0/ColumnName'],
      ['tenant_id', '/body/Columns/0/ColumnName'],
    ]) {
      const res = await api('POST', '/custom-tables/BadColumns', {
        KeyColumnName: 'K',
        KeyDataTypeId: 3,
        Columns: [{ ColumnName: column, ColumnDataTypeId: 5 }],
      });
      assert.equal(res.status, 400, column);
      assert.equal(res.body.errors[0].path, path);
    }
    const dup = await api('POST', '/custom-tables/BadColumns', {
      KeyColumnName: 'K',
      KeyDataTypeId: 3,
      Columns: [
        { ColumnName: 'Name', ColumnDataTypeId: 5 },
        { ColumnName: 'NAME', ColumnDataTypeId: 5 },
      ],
    });
    assert.equal(dup.status, 400);
    assert.equal(dup.body.errors[0].path, '/body/Columns/1/ColumnName');
    const noLength = await api('POST', '/custom-tables/BadColumns', {
      KeyColumnName: 'K',
      KeyDataTypeId: 3,
      Columns: [{ ColumnName: 'V', ColumnDataTypeId: 11 }],
    });
    assert.equal(noLength.status, 400);
    assert.equal(noLength.body.errors[0].path, '/body/Columns/0/Length');
    const badType = await api('POST', '/custom-tables/BadColumns', { KeyColumnName: 'K', KeyDataTypeId: 13 });
    assert.equal(badType.status, 400);
    assert.equal((await api('GET', '/custom-tables/BadColumns')).status, 404);
  });

  test('reserved words and quotes are fine as names because identifiers are always quoted', async () => {
    const res = await api('POST', '/custom-tables/select', {
      KeyColumnName: 'from',
      KeyDataTypeId: 5,
      Columns: [
        { ColumnName: 'where', ColumnDataTypeId: 5 },
        { ColumnName: 'Order', ColumnDataTypeId: 3 },
      ],
    });
    assert.equal(res.status, 201, res.text);
    assert.equal((await upsert('select', [{ key: 'a', cols: { where: 'w', order: 1 } }])).status, 200);
    const row = await api('GET', '/custom-tables/SELECT/row?keyValue=a');
    assert.deepEqual(valuesOf(row.body), { where: 'w', Order: 1 });
  });

  test('DELETE drops the table and its physical table; later reads are 404', async () => {
    await api('POST', '/custom-tables/Doomed', { KeyColumnName: 'K', KeyDataTypeId: 3 });
    const [{ physical_name }] = await query(`select physical_name from custom_tables where name = 'Doomed'`);
    const res = await api('DELETE', '/custom-tables/doomed');
    assert.equal(res.status, 200);
    assert.equal(res.body.Dropped, true);
    assert.equal((await api('GET', '/custom-tables/Doomed')).status, 404);
    assert.equal((await api('DELETE', '/custom-tables/Doomed')).status, 404);
    assert.equal((await api('GET', '/custom-tables/Doomed/rows/values')).status, 404);
    assert.deepEqual(await query(`select 1 from pg_tables where schemaname = 'customtables' and tablename = $1`, [physical_name]), []);
  });
});

describe('data types', () => {
  before(async () => {
    await api('POST', '/custom-tables/Typed', { KeyColumnName: 'Code', KeyDataTypeId: 5, Columns: everyTypeColumns() });
  });

  test('every type round-trips through rows/values, row and columnValue', async () => {
    const cols = Object.fromEntries(EVERY_TYPE.map((c) => [c.name, c.value]));
    const res = await upsert('Typed', [
      { key: 'all', cols },
      { key: 'nulls', cols: Object.fromEntries(EVERY_TYPE.map((c) => [c.name, null])) },
    ]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { TableName: 'Typed', OperationType: 'UpsertMany', RowCount: 2, Inserted: 2, Updated: 0 });
    const row = await api('GET', '/custom-tables/Typed/row?keyValue=all');
    assert.equal(row.status, 200);
    assert.equal(row.body.KeyValue, 'all');
    assert.equal(row.body.KeyColumnName, 'Code');
    assert.equal(row.body.KeyDataTypeId, 5);
    for (const c of EVERY_TYPE) {
      const col = row.body.Columns.find((x: any) => x.ColumnName === c.name);
      assert.equal(col.ColumnDataTypeId, c.id);
      assert.deepEqual(col.Value, c.back ?? c.value, c.name);
      const one = await api('GET', `/custom-tables/Typed/rows/columnValue?keyValue=all&columnName=${c.name.toLowerCase()}`);
      assert.equal(one.status, 200);
      assert.deepEqual(one.body.Value, c.back ?? c.value, c.name);
    }
    const nulls = await api('GET', '/custom-tables/Typed/row?keyValue=nulls');
    assert.ok(nulls.body.Columns.every((c: any) => c.Value === null));
  });

  test('invalid values are 400s naming the row, the column and the reason', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['Flag', 'true', /expected true or false/],
      ['Flag', 1, /expected true or false/],
      ['Day', '2023-02-29', /not a calendar date/],
      ['Day', '2024-13-01', /not a calendar date/],
      ['Day', '2024-01-01T10:00:00Z', /midnight/],
      ['Day', 20240101, /expected a date/],
      ['Ratio', '1.5', /finite number/],
      ['Qty', 1.5, /expected an integer/],
      ['Qty', 2147483648, /outside the Integer range/],
      ['Qty', -2147483649, /outside the Integer range/],
      ['Qty', '7', /expected an integer/],
      ['Amount', '1.23456', /4 decimal places/],
      ['Amount', '1234567890123456', /15 integer digits/],
      ['Amount', 1e21, /4 decimal places/],
      ['Amount', 'ten', /decimal/],
      ['Short', 'é'.repeat(51), /51 characters; the column holds at most 50/],
      ['Short', 42, /expected a string/],
      ['Medium', '🙂'.repeat(101), /101 characters; the column holds at most 100/],
      ['Long', 'z'.repeat(201), /201 characters; the column holds at most 200/],
      ['Custom', 'eight888', /8 characters; the column holds at most 7/],
      ['Custom', 'trail  ', /7 characters|ok/],
      ['Ref', 'not-a-uuid', /expected a UUID/],
      ['Blob', 'not base64!', /base64/],
      ['Body', { nested: true }, /expected a string/],
    ];
    for (const [column, value, reason] of cases) {
      const trailing = column === 'Custom' && value === 'trail  ';
      const res = await upsert('Typed', [{ key: trailing ? 'trailing' : 'bad', cols: { [column]: value } }]);
      if (trailing) {
        assert.equal(res.status, 200, 'seven characters including spaces fit');
        continue;
      }
      assert.equal(res.status, 400, `${column} ${JSON.stringify(value)}: ${res.text}`);
      assert.equal(res.body.errors[0].path, '/body/UpsertManyModel/0/Columns/0/Value');
      assert.match(res.body.errors[0].message, new RegExp(`row 0 \\(key "bad"\\), column "${column}"`));
      assert.match(res.body.errors[0].message, reason, `${column} ${JSON.stringify(value)}`);
    }
    // NUL is refused before any route runs (src/platform/http/input-guard.ts), at the same path.
    const nul = await upsert('Typed', [{ key: 'bad', cols: { Short: 'nul\u0000here' } }]);
    assert.equal(nul.status, 400, nul.text);
    assert.equal(nul.body.errors[0].path, '/body/UpsertManyModel/0/Columns/0/Value');
    assert.match(nul.body.errors[0].message, /NUL/);
    // Trailing spaces past the limit are refused too (PostgreSQL would silently cut them).
    const spaces = await upsert('Typed', [{ key: 'spaces', cols: { Short: `${'a'.repeat(50)}   ` } }]);
    assert.equal(spaces.status, 400);
    const unknown = await upsert('Typed', [{ key: 'bad', cols: { Nope: 1 } }]);
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, '/body/UpsertManyModel/0/Columns/0/ColumnName');
    assert.match(unknown.body.errors[0].message, /column "Nope": unknown column/);
    assert.equal((await api('GET', '/custom-tables/Typed/row?keyValue=bad')).status, 404, 'nothing was written');
  });

  test('boundary lengths are accepted exactly at the limit', async () => {
    const res = await upsert('Typed', [
      {
        key: 'x'.repeat(50),
        cols: { Short: 'a'.repeat(50), Medium: 'b'.repeat(100), Long: 'c'.repeat(200), Custom: '1234567', Qty: 2147483647, Amount: '999999999999999.9999' },
      },
    ]);
    assert.equal(res.status, 200, res.text);
    const tooLongKey = await upsert('Typed', [{ key: 'x'.repeat(51) }]);
    assert.equal(tooLongKey.status, 400);
    assert.equal(tooLongKey.body.errors[0].path, '/body/UpsertManyModel/0/KeyValue');
  });

  test('Money accepts numbers and strings and answers a string with four decimals', async () => {
    await upsert('Typed', [
      { key: 'm1', cols: { Amount: 12.5 } },
      { key: 'm2', cols: { Amount: '-0.0001' } },
      { key: 'm3', cols: { Amount: '007' } },
    ]);
    const rows = (await api('GET', '/custom-tables/Typed/rows/values')).body;
    const amount = (k: string) => valuesOf(rows.find((r: any) => r.KeyValue === k)).Amount;
    assert.equal(amount('m1'), '12.5000');
    assert.equal(amount('m2'), '-0.0001');
    assert.equal(amount('m3'), '7.0000');
  });

  test('keys of every key type: typed in the body, strings in query parameters', async () => {
    const keys: [number, unknown, string][] = [
      [0, true, 'true'],
      [1, '2024-05-06', '2024-05-06'],
      [2, 2.5, '2.5'],
      [3, 42, '42'],
      [4, '10.5', '10.5000'],
      [9, '3f2504e0-4f89-41d3-9a0c-0305e82c3301', '3f2504e0-4f89-41d3-9a0c-0305e82c3301'],
      [12, 'AAEC', 'AAEC'],
      [11, 'abc', 'abc'],
    ];
    for (const [type, key, text] of keys) {
      const name = `Keyed${type}`;
      const created = await api('POST', `/custom-tables/${name}`, {
        KeyColumnName: 'K',
        KeyDataTypeId: type,
        KeyLength: 5,
        Columns: [{ ColumnName: 'V', ColumnDataTypeId: 3 }],
      });
      assert.equal(created.status, 201, created.text);
      assert.equal((await upsert(name, [{ key, cols: { V: 1 } }])).status, 200);
      const row = await api('GET', `/custom-tables/${name}/row?keyValue=${encodeURIComponent(text)}`);
      assert.equal(row.status, 200, `${name}: ${row.text}`);
      assert.equal(row.body.KeyValue, text);
      assert.equal(
        (await api('PUT', `/custom-tables/${name}/rows`, { OperationType: 0, UpdateModel: { KeyValue: text, Columns: [{ ColumnName: 'V', Value: 2 }] } }))
          .status,
        200,
      );
      assert.equal(valuesOf((await api('GET', `/custom-tables/${name}/row?keyValue=${encodeURIComponent(text)}`)).body).V, 2);
    }
    const bad = await api('GET', '/custom-tables/Keyed3/row?keyValue=abc');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/querystring/keyValue');
  });
});

describe('operations', () => {
  before(async () => {
    await api('POST', '/custom-tables/Ops', {
      KeyColumnName: 'Id',
      KeyDataTypeId: 3,
      Columns: [
        { ColumnName: 'Name', ColumnDataTypeId: 5 },
        { ColumnName: 'Score', ColumnDataTypeId: 2 },
      ],
    });
  });
  const rows = async () => (await api('GET', '/custom-tables/Ops/rows/values')).body.map((r: any) => ({ key: r.KeyValue, ...valuesOf(r) }));

  test('UpsertMany inserts absent rows and updates present ones; absent columns keep their values', async () => {
    assert.equal(
      (
        await upsert(
          'Ops',
          [
            { key: 1, cols: { Name: 'one', Score: 1 } },
            { key: 2, cols: { Name: 'two', Score: 2 } },
          ],
          2,
        )
      ).status,
      200,
    );
    const res = await upsert(
      'Ops',
      [
        { key: 2, cols: { Score: 22 } },
        { key: 3, cols: { Name: 'three' } },
      ],
      'upsertmany',
    );
    assert.deepEqual(res.body, { TableName: 'Ops', OperationType: 'UpsertMany', RowCount: 2, Inserted: 1, Updated: 1 });
    assert.deepEqual(await rows(), [
      { key: '1', Name: 'one', Score: 1 },
      { key: '2', Name: 'two', Score: 22 },
      { key: '3', Name: 'three', Score: null },
    ]);
  });

  test('UpdateMany (1) inserts or updates each; one key twice applies in order', async () => {
    const res = await upsert(
      'Ops',
      [
        { key: 3, cols: { Score: 3 } },
        { key: 4, cols: { Name: 'four' } },
        { key: 4, cols: { Score: 4 } },
        { key: 4, cols: { Name: 'FOUR' } },
      ],
      1,
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.OperationType, 'UpdateMany');
    const all = await rows();
    assert.deepEqual(
      all.find((r: any) => r.key === '3'),
      { key: '3', Name: 'three', Score: 3 },
    );
    assert.deepEqual(
      all.find((r: any) => r.key === '4'),
      { key: '4', Name: 'FOUR', Score: 4 },
    );
  });

  test('Update (0) changes one existing row; an absent row is a 404', async () => {
    const ok = await api('PUT', '/custom-tables/Ops/rows', {
      OperationType: 'Update',
      UpdateModel: { KeyColumnName: 'id', KeyValue: '1', KeyDataTypeId: 3, Columns: [{ ColumnName: 'score', Value: 1.25 }] },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual((await rows())[0], { key: '1', Name: 'one', Score: 1.25 });
    const missing = await api('PUT', '/custom-tables/Ops/rows', {
      OperationType: 0,
      UpdateModel: { KeyValue: 99, Columns: [{ ColumnName: 'Name', Value: 'x' }] },
    });
    assert.equal(missing.status, 404);
    assert.equal((await api('GET', '/custom-tables/Ops/row?keyValue=99')).status, 404, 'Update never inserts');
    const wrongKey = await api('PUT', '/custom-tables/Ops/rows', { OperationType: 0, UpdateModel: { KeyColumnName: 'Name', KeyValue: 1, Columns: [] } });
    assert.equal(wrongKey.status, 400);
    assert.equal(wrongKey.body.errors[0].path, '/body/UpdateModel/KeyColumnName');
  });

  test('OperationType must be known and its model present', async () => {
    for (const body of [{ OperationType: 3, UpsertManyModel: [] }, { OperationType: 'Merge' }, { OperationType: 2 }, { OperationType: 0 }, {}]) {
      const res = await api('PUT', '/custom-tables/Ops/rows', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body.errors?.length, res.text);
    }
  });

  test('a batch with one bad value is rejected whole and changes nothing', async () => {
    const before = await rows();
    const res = await upsert('Ops', [
      { key: 1, cols: { Name: 'changed' } },
      { key: 50, cols: { Name: 'new' } },
      { key: 51, cols: { Name: 'n'.repeat(51) } },
      { key: 'x', cols: { Score: 'high' } },
    ]);
    assert.equal(res.status, 400);
    assert.deepEqual(
      res.body.errors.map((e: any) => e.path),
      ['/body/UpsertManyModel/2/Columns/0/Value', '/body/UpsertManyModel/3/KeyValue', '/body/UpsertManyModel/3/Columns/0/Value'],
    );
    assert.match(res.body.detail, /nothing was changed/);
    assert.match(res.body.errors[0].message, /row 2 \(key 51\), column "Name": the string has 51 characters/);
    assert.deepEqual(await rows(), before);
  });

  test('deletes: Delete (0), DeleteMany (2), DeleteAll (1)', async () => {
    const one = await api('DELETE', '/custom-tables/Ops/rows', { OperationType: 0, DeleteModel: { KeyColumnName: 'Id', KeyValue: 1 } });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.Deleted, 1);
    assert.equal((await api('DELETE', '/custom-tables/Ops/rows', { OperationType: 'Delete', DeleteModel: { KeyValue: 1 } })).status, 404);
    const many = await api('DELETE', '/custom-tables/Ops/rows', {
      OperationType: 'DeleteMany',
      DeleteManyModel: { KeyColumnName: 'Id', KeyValues: [2, '3', 777] },
    });
    assert.equal(many.status, 200);
    assert.equal(many.body.Deleted, 2);
    assert.deepEqual(
      (await rows()).map((r: any) => r.key),
      ['4'],
    );
    const badMany = await api('DELETE', '/custom-tables/Ops/rows', { OperationType: 2, DeleteManyModel: { KeyValues: [4, 'four'] } });
    assert.equal(badMany.status, 400);
    assert.equal(badMany.body.errors[0].path, '/body/DeleteManyModel/KeyValues/1');
    assert.equal((await rows()).length, 1, 'a refused DeleteMany deletes nothing');
    const all = await api('DELETE', '/custom-tables/Ops/rows', { OperationType: 1 });
    assert.equal(all.status, 200);
    assert.equal(all.body.Deleted, 1);
    assert.deepEqual(await rows(), []);
  });

  test('rows/values pages with skip and take, ordered by key', async () => {
    await upsert(
      'Ops',
      Array.from({ length: 25 }, (_, i) => ({ key: i + 1, cols: { Name: `n${i + 1}` } })),
    );
    const page = await api('GET', '/custom-tables/Ops/rows/values?skip=10&take=5');
    assert.deepEqual(
      page.body.map((r: any) => r.KeyValue),
      ['11', '12', '13', '14', '15'],
    );
    assert.equal((await api('GET', '/custom-tables/Ops/rows/values')).body.length, 25);
    assert.equal((await api('GET', '/custom-tables/Ops/rows/values?take=0')).status, 400);
    assert.equal((await api('GET', '/custom-tables/Ops/rows/values?skip=-1')).status, 400);
    const missingColumn = await api('GET', '/custom-tables/Ops/rows/columnValue?keyValue=1&columnName=Nope');
    assert.equal(missingColumn.status, 404);
    const missingRow = await api('GET', '/custom-tables/Ops/rows/columnValue?keyValue=1000&columnName=Name');
    assert.equal(missingRow.status, 404);
    const keyColumn = await api('GET', '/custom-tables/Ops/rows/columnValue?keyValue=7&columnName=Id');
    assert.equal(keyColumn.body.Value, 7);
  });
});

describe('events', () => {
  test('table and row writes append events in their transaction', async () => {
    await api('POST', '/custom-tables/Evented', { KeyColumnName: 'K', KeyDataTypeId: 3, Columns: [{ ColumnName: 'V', ColumnDataTypeId: 3 }] });
    await upsert('Evented', [{ key: 1, cols: { V: 1 } }]);
    await api('PUT', '/custom-tables/Evented/rows', { OperationType: 0, UpdateModel: { KeyValue: 1, Columns: [{ ColumnName: 'V', Value: 2 }] } });
    await api('DELETE', '/custom-tables/Evented/rows', { OperationType: 1 });
    await upsert('Evented', [{ key: 1, cols: { V: 'bad' } }]);
    await api('DELETE', '/custom-tables/Evented');
    const events = await query(`select action_type, document_type, detail from events where tenant_id = $1 and detail->>'TableName' = 'Evented' order by seq`, [
      tenant.tenantId,
    ]);
    assert.deepEqual(
      events.map((e) => `${e.action_type} ${e.document_type.split('.').pop()}`),
      ['Created CustomTable', 'BatchExecuted CustomTable', 'Updated CustomTableRow', 'BatchExecuted CustomTable', 'Deleted CustomTable'],
    );
    const batch = events[1].detail;
    assert.equal(batch.DocumentType, 'Skill.Module.BusinessObjects.CustomTableRow');
    assert.equal(batch.Url, '/api/v3/custom-tables/Evented/rows');
    assert.equal(batch.OperationType, 'UpsertMany');
  });
});

describe('performance shape', () => {
  test('a 10,000-row UpsertMany is one request and its rows read back', async () => {
    await api('POST', '/custom-tables/Big', { KeyColumnName: 'K', KeyDataTypeId: 3, Columns: [{ ColumnName: 'V', ColumnDataTypeId: 5 }] });
    const res = await upsert(
      'Big',
      Array.from({ length: 10_000 }, (_, i) => ({ key: i, cols: { V: `v${i}` } })),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.Inserted, 10_000);
    assert.equal((await api('GET', '/custom-tables/Big')).body.RowCount, 10_000);
    const tooMany = await upsert('Big', [{ key: 10_000 }]);
    assert.equal(tooMany.status, 200);
    const all = await api('GET', '/custom-tables/Big/rows/values');
    assert.equal(all.status, 400, 'more than 10,000 rows need paging');
    assert.equal(all.body.errors[0].path, '/querystring/take');
  });
});
