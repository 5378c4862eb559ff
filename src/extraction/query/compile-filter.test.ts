// The filter compiler without a database: the SQL and bound parameters each expression becomes, the
// grouping rules, and the date formats. (test/extraction-filters.test.ts runs the same rules on rows.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { HttpProblem } from '../../platform/errors.ts';
import { compileFilter, FieldSet } from './compile-filter.ts';
import { parseDate } from './values.ts';

const db = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const fields = new FieldSet([
  { name: 'Name', type: 'string' },
  { name: 'Qty', type: 'integer' },
  { name: 'Price', type: 'decimal' },
  { name: 'Day', type: 'date' },
  { name: 'At', type: 'datetime' },
  { name: 'On', type: 'boolean' },
  { name: 'Id', type: 'guid' },
  { name: 'Extra', type: 'object' },
]);

function compile(filter: unknown): { sql: string; parameters: readonly unknown[] } {
  const expr = compileFilter(filter, fields);
  const q = sql`select 1 where ${expr ?? sql`true`}`.compile(db);
  return { sql: q.sql.replace('select 1 where ', ''), parameters: q.parameters };
}

const CASES: [unknown, string, unknown[]][] = [
  [['Name', 'contains', 'a%b_c'], '("q"."Name" ilike $1)', ['%a\\%b\\_c%']],
  [['name', 'notcontains', 'x'], '("q"."Name" is null or "q"."Name" not ilike $1)', ['%x%']],
  [['Name', 'StartsWith', 'x'], '("q"."Name" ilike $1)', ['x%']],
  [['Name', 'endswith', 'x'], '("q"."Name" ilike $1)', ['%x']],
  [['Name', 'x'], '(lower("q"."Name") = lower($1))', ['x']],
  [['Name', '<>', 'x'], '("q"."Name" is null or lower("q"."Name") <> lower($1))', ['x']],
  [['Name', 'isblank'], `("q"."Name" is null or "q"."Name" = '')`, []],
  [['Name', 'isnotblank', null], `("q"."Name" is not null and "q"."Name" <> '')`, []],
  [['Name', '=', null], '("q"."Name" is null)', []],
  [['Qty', '>=', '7'], '("q"."Qty" >= $1::bigint)', ['7']],
  [['Qty', '<', 2.5], '("q"."Qty" < $1::numeric)', ['2.5']],
  [['Price', 'between', [1, null]], '(("q"."Price" >= $1::numeric))', ['1']],
  [['Price', 'between', [null, null]], '("q"."Price" is not null)', []],
  [['Price', '<>', 3], '("q"."Price" is null or "q"."Price" <> $1::numeric)', ['3']],
  [['Day', '=', '03/31/2024'], '("q"."Day" = $1::date)', ['2024-03-31']],
  [['Day', '<', '2024/3/1'], '("q"."Day" < $1::date)', ['2024-03-01']],
  [['At', '=', '2024-03-31'], '("q"."At" >= $1::timestamptz and "q"."At" < $2::timestamptz)', ['2024-03-31T00:00:00.000Z', '2024-04-01T00:00:00.000Z']],
  [['At', '<=', '2024-03-31'], '("q"."At" < $1::timestamptz)', ['2024-04-01T00:00:00.000Z']],
  [['At', '>', '2024-03-31T10:00:00+02:00'], '("q"."At" > $1::timestamptz)', ['2024-03-31T08:00:00.000Z']],
  [['At', '>=', '2024-03-31T10:00'], '("q"."At" >= $1::timestamptz)', ['2024-03-31T10:00:00.000Z']],
  [['On', '=', 'TRUE'], '("q"."On" = $1)', [true]],
  [['On', '<>', 0], '("q"."On" is distinct from $1)', [false]],
  [['Id', '=', 'ABCDEF00-0000-4000-8000-000000000000'], '("q"."Id" = $1::uuid)', ['abcdef00-0000-4000-8000-000000000000']],
  [['Id', 'contains', 'abc'], '("q"."Id"::text ilike $1)', ['%abc%']],
  [['Extra', 'isblank'], '("q"."Extra" is null)', []],
  [[['Qty', '=', 1], 'OR', ['Qty', '=', 2]], '(("q"."Qty" = $1::bigint) or ("q"."Qty" = $2::bigint))', ['1', '2']],
  [
    [
      ['Qty', '=', 1],
      ['Qty', '=', 2],
    ],
    '(("q"."Qty" = $1::bigint) and ("q"."Qty" = $2::bigint))',
    ['1', '2'],
  ],
  [['!', ['Qty', '>', 1]], 'not coalesce(("q"."Qty" > $1::bigint), false)', ['1']],
  [
    [[['Qty', '=', 1], 'or', ['Qty', '=', 2]], 'and', ['On', true]],
    '((("q"."Qty" = $1::bigint) or ("q"."Qty" = $2::bigint)) and ("q"."On" = $3))',
    ['1', '2', true],
  ],
  [[], 'true', []],
  [[['Qty', '=', 1]], '("q"."Qty" = $1::bigint)', ['1']],
];

describe('compileFilter', () => {
  for (const [filter, expectedSql, parameters] of CASES) {
    test(JSON.stringify(filter), () => {
      const out = compile(filter);
      assert.equal(out.sql, expectedSql);
      assert.deepEqual(out.parameters, parameters);
    });
  }

  const ERRORS: [unknown, string, RegExp][] = [
    [['Nope', '=', 1], '/queryBuilder/filters/0', /unknown field "Nope"; valid fields: Name, Qty/],
    [['Qty', 'contains', 1], '/queryBuilder/filters/1', /not allowed on field Qty of type integer; allowed: =, <>, <, >, <=, >=, between/],
    [['Extra', '=', 1], '/queryBuilder/filters/1', /type object; allowed: isblank, isnotblank/],
    [['Qty', '=', '1,5'], '/queryBuilder/filters/2', /not a valid integer/],
    [['Qty', '=', {}], '/queryBuilder/filters/2', /not a valid integer/],
    [['Day', '=', '2023-02-29'], '/queryBuilder/filters/2', /not a valid date/],
    [['At', 'between', ['2024-01-01', 'soon']], '/queryBuilder/filters/2/1', /not a valid datetime/],
    [[['Qty', '=', 1], 'and', ['Qty', '=', 2], 'or', ['Qty', '=', 3]], '/queryBuilder/filters', /mixes "and" and "or"/],
    [['and', ['Qty', '=', 1]], '/queryBuilder/filters/0', /must stand between two expressions/],
    [['!', ['Qty', '=', 1], ['Qty', '=', 2]], '/queryBuilder/filters', /a negation is \["!", expression\]/],
    [['Qty', '=', 1, 2], '/queryBuilder/filters', /a condition is \[field, operation, value\]/],
    ['Qty = 1', '/queryBuilder/filters', /must be an array/],
  ];
  for (const [filter, path, message] of ERRORS) {
    test(`400: ${JSON.stringify(filter)}`, () => {
      assert.throws(
        () => compileFilter(filter, fields),
        (err: unknown) => {
          assert.ok(err instanceof HttpProblem);
          assert.equal(err.status, 400);
          const e = err.errors?.find((x) => x.path === path);
          assert.ok(e, JSON.stringify(err.errors));
          assert.match(e.message, message);
          return true;
        },
      );
    });
  }

  test('nesting deeper than 32 levels is refused, not a stack overflow', () => {
    let f: unknown = ['Qty', '=', 1];
    for (let i = 0; i < 100; i++) f = ['!', f];
    assert.throws(() => compileFilter(f, fields), /nested deeper/);
  });
});

describe('parseDate', () => {
  const ok: [string, string, string, boolean][] = [
    ['2024-03-31', '2024-03-31', '2024-03-31T00:00:00.000Z', false],
    ['2024/03/31', '2024-03-31', '2024-03-31T00:00:00.000Z', false],
    ['3/31/2024', '2024-03-31', '2024-03-31T00:00:00.000Z', false],
    ['2024-03-31T23:30:00-01:00', '2024-03-31', '2024-04-01T00:30:00.000Z', true],
    ['2024-03-31T10:00:00.5Z', '2024-03-31', '2024-03-31T10:00:00.500Z', true],
    ['2024-03-31 10:00', '2024-03-31', '2024-03-31T10:00:00.000Z', true],
  ];
  for (const [input, date, instant, hasTime] of ok) {
    test(input, () => assert.deepEqual(parseDate(input), { date, instant, hasTime }));
  }
  for (const bad of ['2024-13-01', '2023-02-29', '31/12/2024', '2024-03-31T25:00', 'today', '', '2024-03-31T10:00+25:00']) {
    test(`refuses ${JSON.stringify(bad)}`, () => assert.equal(parseDate(bad), null));
  }
});
