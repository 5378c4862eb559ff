// The query builder's semantics over HTTP: a fixed custom table served as the named query CT-Items,
// and for each filter expression the exact set of keys it must answer; then the error cases.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let headers: Record<string, string>;

const G1 = '11111111-1111-4111-8111-111111111111';
const G2 = '22222222-2222-4222-8222-222222222222';
const G3 = '33333333-3333-4333-8333-333333333333';

// Code (key) | Name | Qty | Price | Ratio | Day | Active | Ref | Note
const ROWS: [string, string | null, number | null, string | null, number | null, string | null, boolean | null, string | null, string | null][] = [
  ['A', 'Alpha', 1, '10.5', 0.5, '2024-01-15', true, G1, 'x'],
  ['B', 'beta', 2, '20', 1.5, '2024-02-01', false, G2, ''],
  ['C', 'Gamma Ray', 3, null, null, '2024-02-29', true, null, null],
  ['D', null, null, '5.25', -2, null, null, G3, 'hello world'],
  ['E', 'ALPHABET', 10, '100', 10, '2023-12-31', false, G1, '50%_off'],
];
const COLUMNS = [
  ['Name', 6],
  ['Qty', 3],
  ['Price', 4],
  ['Ratio', 2],
  ['Day', 1],
  ['Active', 0],
  ['Ref', 9],
  ['Note', 7],
] as const;

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Filters');
  headers = appHeaders(tenant);
  const api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/Items', {
    KeyColumnName: 'Code',
    KeyDataTypeId: 5,
    Columns: COLUMNS.map(([ColumnName, ColumnDataTypeId]) => ({ ColumnName, ColumnDataTypeId })),
  });
  assert.equal(created.status, 201, created.text);
  const rows = await api('PUT', '/custom-tables/Items/rows', {
    OperationType: 'UpsertMany',
    UpsertManyModel: ROWS.map(([key, ...values]) => ({ KeyValue: key, Columns: COLUMNS.map(([ColumnName], i) => ({ ColumnName, Value: values[i] })) })),
  });
  assert.equal(rows.status, 200, rows.text);
});
after(() => server?.close());

const run = (body: unknown, extra: Record<string, string> = {}) =>
  server.request('POST', '/api/v3/analytics/named-query/CT-Items/dynamic-execute', { headers: { ...headers, ...extra }, json: body });

async function keys(filters: unknown): Promise<string> {
  const res = await run({ queryBuilder: { filters } });
  assert.equal(res.status, 200, `${JSON.stringify(filters)}: ${res.text}`);
  return res.body.data
    .map((r: { Code: string }) => r.Code)
    .sort()
    .join('');
}

const TABLE: [unknown, string][] = [
  // string: every operation, case-insensitive, nulls
  [['Name', 'contains', 'ALP'], 'AE'],
  [['Name', 'contains', 'a r'], 'C'],
  [['Name', 'notcontains', 'alp'], 'BCD'],
  [['Name', 'startswith', 'al'], 'AE'],
  [['Name', 'endswith', 'RAY'], 'C'],
  [['Name', '=', 'BETA'], 'B'],
  [['Name', 'beta'], 'B'],
  [['Name', '<>', 'beta'], 'ACDE'],
  [['Name', 'isblank'], 'D'],
  [['Name', 'isnotblank'], 'ABCE'],
  [['Note', 'isblank', null], 'BC'],
  [['Note', 'isnotblank', null], 'ADE'],
  [['Note', 'contains', '%'], 'E'],
  [['Note', 'contains', '_'], 'E'],
  [['Note', 'startswith', '50%'], 'E'],
  [['Name', '=', null], 'D'],
  [['Name', '<>', null], 'ABCE'],
  [['Name', 'CONTAINS', 'alp'], 'AE'],
  // numeric (Integer, Money, Float)
  [['Qty', '=', 2], 'B'],
  [['Qty', '=', '2'], 'B'],
  [['Qty', '<>', 2], 'ACDE'],
  [['Qty', '<', 3], 'AB'],
  [['Qty', '<=', 3], 'ABC'],
  [['Qty', '>', 2], 'CE'],
  [['Qty', '>=', 2], 'BCE'],
  [['Qty', 'between', [2, 3]], 'BC'],
  [['Qty', 'between', [null, 2]], 'AB'],
  [['Qty', 'between', [3, null]], 'CE'],
  [['Qty', 'between', [null, null]], 'ABCE'],
  [['Qty', 'isblank'], 'D'],
  [['Qty', 'isnotblank'], 'ABCE'],
  [['Price', '=', 10.5], 'A'],
  [['Price', '>', '5.25'], 'ABE'],
  [['Price', 'between', [5.25, 20]], 'ABD'],
  [['Price', 'isblank'], 'C'],
  [['Ratio', '<', 0], 'D'],
  [['Ratio', '>=', 1.5], 'BE'],
  // dates in every accepted format; a value without an offset is UTC
  [['Day', '=', '2024-02-29'], 'C'],
  [['Day', '=', '2024/02/29'], 'C'],
  [['Day', '=', '02/29/2024'], 'C'],
  [['Day', '=', '2024-02-29T00:00:00Z'], 'C'],
  [['Day', '=', '2024-02-29T00:00:00.000+01:00'], 'C'],
  [['Day', '<>', '2024-02-29'], 'ABDE'],
  [['Day', '<', '2024-01-15'], 'E'],
  [['Day', '<=', '2024-01-15'], 'AE'],
  [['Day', '>', '2024-01-15'], 'BC'],
  [['Day', '>=', '2024/02/01'], 'BC'],
  [['Day', 'between', ['2024-01-01', '2024-02-01']], 'AB'],
  [['Day', 'between', [null, '12/31/2023']], 'E'],
  [['Day', 'between', ['2024-02-01', null]], 'BC'],
  [['Day', 'isblank'], 'D'],
  [['Day', 'isnotblank'], 'ABCE'],
  // boolean
  [['Active', '=', true], 'AC'],
  [['Active', '=', 'false'], 'BE'],
  [['Active', true], 'AC'],
  [['Active', '<>', true], 'BDE'],
  [['Active', 'isblank'], 'D'],
  [['Active', 'isnotblank'], 'ABCE'],
  // guid
  [['Ref', '=', G1], 'AE'],
  [['Ref', '=', G1.toUpperCase()], 'AE'],
  [['Ref', '<>', G1], 'BCD'],
  [['Ref', 'contains', '2222'], 'B'],
  [['Ref', 'isblank'], 'C'],
  // key
  [['Code', '=', 'a'], 'A'],
  // combinations: and / or (any case), implicit and, nesting, negation
  [[['Qty', '>', 1], 'and', ['Qty', '<', 10]], 'BC'],
  [[['Qty', '>', 1], 'AND', ['Active', '=', true]], 'C'],
  [
    [
      ['Qty', '>', 1],
      ['Active', '=', true],
    ],
    'C',
  ],
  [[['Name', 'contains', 'alp'], 'or', ['Qty', '=', 3]], 'ACE'],
  [[['Name', 'contains', 'alp'], 'Or', ['Qty', '=', 3], 'or', ['Day', 'isblank']], 'ACDE'],
  [[[['Name', 'contains', 'alp'], 'or', ['Qty', '=', 3]], 'and', ['Active', '=', true]], 'AC'],
  [['!', ['Name', 'contains', 'alp']], 'BCD'],
  [['!', ['Qty', '>', 2]], 'ABD'],
  [['!', [['Qty', '>', 2], 'or', ['Active', '=', false]]], 'AD'],
  [['!', ['!', ['Qty', '=', 1]]], 'A'],
  [[], 'ABCDE'],
  [[['Qty', '>', 0]], 'ABCE'],
];

describe('filter semantics table (CT-Items)', () => {
  for (const [filter, expected] of TABLE) {
    test(`${JSON.stringify(filter)} -> ${expected || '(none)'}`, async () => {
      assert.equal(await keys(filter), expected);
    });
  }
});

const ERRORS: [string, unknown, RegExp, string][] = [
  ['unknown field', { filters: ['Nope', '=', 1] }, /unknown field "Nope"; valid fields: Code, Name, Qty/, '/queryBuilder/filters/0'],
  [
    'unknown op',
    { filters: ['Name', 'like', 'x'] },
    /operation "like" is not allowed on field Name of type string; allowed: contains/,
    '/queryBuilder/filters/1',
  ],
  [
    'op not for type',
    { filters: ['Active', '>', true] },
    /not allowed on field Active of type boolean; allowed: =, <>, isblank, isnotblank/,
    '/queryBuilder/filters/1',
  ],
  ['between on string', { filters: ['Name', 'between', ['a', 'b']] }, /type string/, '/queryBuilder/filters/1'],
  ['unconvertible number', { filters: ['Qty', '=', 'ten'] }, /"ten" is not a valid integer for field Qty/, '/queryBuilder/filters/2'],
  ['unconvertible date', { filters: ['Day', '=', '2024-02-30'] }, /not a valid date for field Day/, '/queryBuilder/filters/2'],
  ['unconvertible date format', { filters: ['Day', '=', '31.12.2023'] }, /not a valid date/, '/queryBuilder/filters/2'],
  ['unconvertible boolean', { filters: ['Active', '=', 'yes'] }, /not a valid boolean/, '/queryBuilder/filters/2'],
  ['unconvertible guid', { filters: ['Ref', '=', 'abc'] }, /GUID/, '/queryBuilder/filters/2'],
  ['between needs two', { filters: ['Qty', 'between', [1]] }, /between takes \[from, to\]/, '/queryBuilder/filters/2'],
  ['mixed and/or', { filters: [['Qty', '=', 1], 'and', ['Qty', '=', 2], 'or', ['Qty', '=', 3]] }, /mixes "and" and "or"/, '/queryBuilder/filters'],
  ['implicit and mixed with or', { filters: [['Qty', '=', 1], ['Qty', '=', 2], 'or', ['Qty', '=', 3]] }, /mixes/, '/queryBuilder/filters'],
  ['bad joiner', { filters: [['Qty', '=', 1], 'xor', ['Qty', '=', 2]] }, /unknown joiner "xor"/, '/queryBuilder/filters/1'],
  ['dangling joiner', { filters: [['Qty', '=', 1], 'and'] }, /must be followed/, '/queryBuilder/filters/1'],
  ['not an expression', { filters: [42] }, /must be an array/, '/queryBuilder/filters/0'],
  ['unknown orderBy field', { orderBy: [{ field: 'Nope' }] }, /unknown field "Nope"/, '/queryBuilder/orderBy/0/field'],
  ['unknown field in fields', { fields: ['Code', 'Nope'] }, /unknown field "Nope"/, '/queryBuilder/fields/1'],
  ['take above the maximum', { take: 10001 }, /above the maximum page size of 10000/, '/queryBuilder/take'],
  ['negative skip', { skip: -1 }, /must be >= 0/, '/body/queryBuilder/skip'],
  ['fractional take', { take: 1.5 }, /must be integer/, '/body/queryBuilder/take'],
];

describe('error cases answer 400 problems with errors[]', () => {
  for (const [what, queryBuilder, message, path] of ERRORS) {
    test(what, async () => {
      const res = await run({ queryBuilder });
      assert.equal(res.status, 400, res.text);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.ok(Array.isArray(res.body.errors), res.text);
      const error = res.body.errors.find((e: { path: string }) => e.path === path);
      assert.ok(error, `no error at ${path}: ${res.text}`);
      assert.match(error.message, message);
    });
  }
  test('a parameter the query does not take', async () => {
    const res = await run({ parameters: { From: '2024-01-01' } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.errors[0].path, '/parameters/From');
    assert.match(res.body.errors[0].message, /does not take the parameter From; it takes none/);
  });
  test('an unknown named query is a 404 problem', async () => {
    for (const name of ['DE-Nope', 'CT-Nope']) {
      const res = await server.request('POST', `/api/v3/analytics/named-query/${name}/dynamic-execute`, { headers, json: {} });
      assert.equal(res.status, 404, res.text);
      assert.match(res.body.detail, /No named query/);
    }
  });
});
