// The pieces of the COPY-based CSV export that need no database: parameters inlined as literals and the
// formatting select (CR LF row ends: copy-out.test.ts).
// (test/extraction-csv.test.ts checks the literals against PostgreSQL and the CSV against the JSON pages.)
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { csvHeader, csvSelect } from './copy-csv.ts';
import { inlineParameters, sqlLiteral } from './copy-statement.ts';

const db = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

describe('sqlLiteral', () => {
  test('strings: quotes doubled; a backslash takes the E form with backslashes doubled; unicode as is', () => {
    assert.equal(sqlLiteral('plain'), `'plain'`);
    assert.equal(sqlLiteral(''), `''`);
    assert.equal(sqlLiteral("O'Brien ''x''"), `'O''Brien ''''x'''''`);
    assert.equal(sqlLiteral('a\\b'), `E'a\\\\b'`);
    assert.equal(sqlLiteral("\\'"), `E'\\\\'''`);
    assert.equal(sqlLiteral('100%_off'), `'100%_off'`);
    assert.equal(sqlLiteral('Zoë, 日本, 😀\r\n\t'), `'Zoë, 日本, 😀\r\n\t'`);
  });

  test('null and undefined are NULL; numbers, bigints and booleans are their text, quoted', () => {
    assert.equal(sqlLiteral(null), 'NULL');
    assert.equal(sqlLiteral(undefined), 'NULL');
    assert.equal(sqlLiteral(5), `'5'`);
    assert.equal(sqlLiteral(-1.5), `'-1.5'`);
    assert.equal(sqlLiteral(1e21), `'1e+21'`);
    assert.equal(sqlLiteral(12345678901234567890n), `'12345678901234567890'`);
    assert.equal(sqlLiteral(true), `'true'`);
    assert.equal(sqlLiteral(false), `'false'`);
  });

  test('dates as pg sends them (an instant with its offset); arrays as array literals; objects as JSON; Buffers as bytea hex', () => {
    const at = new Date('2024-03-31T14:30:05.123Z');
    const literal = sqlLiteral(at);
    const m = /^'(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2})'$/.exec(literal);
    assert.ok(m, literal);
    assert.equal(Date.parse(m[1]), at.getTime());
    assert.equal(sqlLiteral(['a', 'b,c', null, 'it\'s "q"']), `E'{"a","b,c",NULL,"it''s \\\\"q\\\\""}'`);
    assert.equal(sqlLiteral([1, 2, [3]]), `'{"1","2",{"3"}}'`);
    assert.equal(sqlLiteral({ a: "x'y", b: [1] }), `'{"a":"x''y","b":[1]}'`);
    assert.equal(sqlLiteral(Buffer.from([0, 1, 255])), `E'\\\\x0001ff'`);
  });
});

describe('inlineParameters', () => {
  test('replaces every $n with its literal; $1 never matches the start of $10', () => {
    const params = Array.from({ length: 12 }, (_, i) => `v${i + 1}`);
    const text = Array.from({ length: 12 }, (_, i) => `$${12 - i}`).join(', ');
    assert.equal(
      inlineParameters(`select ${text}`, params),
      `select ${params
        .map((p) => `'${p}'`)
        .reverse()
        .join(', ')}`,
    );
    assert.equal(inlineParameters('select $1::int + $2, $3', [1, null, "a'b"]), `select '1'::int + NULL, 'a''b'`);
  });

  test('leaves $n alone inside strings, quoted identifiers, comments and dollar quotes', () => {
    const text = [
      `select "Price$1", 'costs $1', E'it\\'s $1', 'O''Neil $1'`,
      `-- $1 in a comment`,
      `/* outer /* nested $1 */ still $1 */ $$ body $1 $$, $tag$ $1 $tag$, a$1b`,
      `from t where x = $1 and "y""$1" = $2`,
    ].join('\n');
    const out = inlineParameters(text, ['A', 'B']);
    assert.equal(out, text.replace('x = $1', `x = 'A'`).replace('= $2', `= 'B'`));
  });

  test('refuses a placeholder past the parameters or a parameter never used', () => {
    assert.throws(() => inlineParameters('select $2', ['a']), /placeholder \$2 but 1 parameters/);
    assert.throws(() => inlineParameters('select $0', []), /placeholder \$0/);
    assert.throws(() => inlineParameters('select $1', ['a', 'b']), /2 parameters but 1 placeholders/);
  });

  test('a compiled Kysely query round-trips', () => {
    const q = sql`select * from t where a = ${'x'} and b in (${sql.join([1, 2, 3])}) and c ilike ${'%\\%%'} limit ${10}`.compile(db);
    assert.equal(inlineParameters(q.sql, q.parameters), `select * from t where a = 'x' and b in ('1', '2', '3') and c ilike E'%\\\\%%' limit '10'`);
  });
});

describe('csvSelect and csvHeader', () => {
  test('formats booleans, numeric and instants by SQL type; leaves the rest as PostgreSQL prints it', () => {
    const rows = sql`select 1`;
    const columns = ['B', 'N', 'Tz', 'Ts', 'I', 'D', 'S'].map((name) => ({ name, type: 'string' as const }));
    const out = csvSelect(rows, columns, [16, 1700, 1184, 1114, 20, 1082, 25]).compile(db).sql;
    assert.equal(
      out,
      `select "r"."B"::text, trim_scale("r"."N"), to_char("r"."Tz" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), ` +
        `to_char("r"."Ts", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), "r"."I", "r"."D", "r"."S" from (select 1) as r`,
    );
    assert.equal(csvSelect(rows, columns.slice(4), [20, 1082, 25]), rows, 'nothing to format: the query as it is');
  });

  test('the header is the field names, RFC 4180 quoted', () => {
    assert.equal(
      csvHeader([
        { name: 'Id', type: 'guid' },
        { name: 'Cost, net', type: 'decimal' },
        { name: 'Say "hi"', type: 'string' },
      ]),
      'Id,"Cost, net","Say ""hi"""\r\n',
    );
  });
});
