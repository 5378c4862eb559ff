// The pieces of the COPY-based CSV export that need no database: parameters inlined as literals, the
// formatting select, and LF -> CRLF outside quoted fields across chunk boundaries.
// (test/extraction-csv.test.ts checks the literals against PostgreSQL and the CSV against the JSON pages.)
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, test } from 'node:test';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from 'kysely';
import { CsvLineEnds, csvHeader, csvSelect, inlineParameters, sqlLiteral } from './copy-csv.ts';

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

/** The reference: LF outside quotes becomes CRLF, one character at a time. */
function expected(text: string): string {
  let quoted = false;
  let out = '';
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    out += ch === '\n' && !quoted ? '\r\n' : ch;
  }
  return out;
}

async function through(chunks: string[]): Promise<string> {
  return (await buffer(Readable.from(chunks.map((c) => Buffer.from(c))).pipe(new CsvLineEnds()))).toString();
}

describe('CsvLineEnds', () => {
  const sample = 'Id,Name,Note\n1,plain,\n2,"Smith, J","line one\nline two"\n3,"say ""hi""\n",""\n4,"""",x\n5,"a\r\nb",é😀\n';

  test('LF outside quotes becomes CRLF; inside a quoted field it stays', async () => {
    assert.equal(await through([sample]), expected(sample));
    assert.equal(await through(['a,b\nc,d\n']), 'a,b\r\nc,d\r\n');
    assert.equal(await through(['a,"x\ny"\n']), 'a,"x\ny"\r\n');
  });

  test('at every split into two and three chunks, including a quote or a doubled quote split across chunks', async () => {
    const bytes = Buffer.from(sample);
    const want = expected(sample);
    for (let i = 0; i <= bytes.length; i++) {
      const t = new CsvLineEnds();
      const got = Buffer.concat([t.convert(bytes.subarray(0, i)), t.convert(bytes.subarray(i))]).toString();
      assert.equal(got, want, `split at ${i}`);
      for (let j = i; j <= bytes.length; j += 7) {
        const u = new CsvLineEnds();
        const three = Buffer.concat([u.convert(bytes.subarray(0, i)), u.convert(bytes.subarray(i, j)), u.convert(bytes.subarray(j))]).toString();
        assert.equal(three, want, `split at ${i} and ${j}`);
      }
    }
  });

  test('a chunk without quotes while a quoted field is open passes through unchanged', async () => {
    assert.equal(await through(['1,"open\n', 'still\ninside\n', 'closed"\n']), '1,"open\nstill\ninside\nclosed"\r\n');
  });

  test('a chunk without a line end is returned as it is (no copy)', () => {
    const chunk = Buffer.from('no line end, "quoted" here');
    assert.equal(new CsvLineEnds().convert(chunk), chunk);
  });
});
