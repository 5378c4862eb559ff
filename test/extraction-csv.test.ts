// The CSV export through COPY: every named query's CSV says what its JSON page says; custom tables of
// every type (quotes, line breaks, empty string vs null); parameters inlined as literals read exactly
// as bound ones; row counts; and a client that goes away releases the database connection.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { CATALOGUE } from '../src/extraction/definition.ts';
import { sqlLiteral } from '../src/extraction/exports/copy-statement.ts';
import { dynamicExport } from '../src/extraction/service.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import { type Api, apiFor, appToken, EVERY_TYPE, everyTypeColumns } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let headers: Record<string, string>;
let tenantId: string;
let owner: pg.Client;
let api: Api;

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Csv', { demoData: true, scale: 0.05 });
  tenantId = tenant.tenantId;
  headers = appHeaders(tenant);
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/Typed', { KeyColumnName: 'Code', KeyDataTypeId: 5, Columns: everyTypeColumns() });
  assert.equal(created.status, 201, created.text);
  const all = Object.fromEntries(EVERY_TYPE.map((c) => [c.name, c.value]));
  const rows = [
    { key: 'all', cols: all },
    { key: 'nulls', cols: Object.fromEntries(EVERY_TYPE.map((c) => [c.name, null])) },
    { key: 'empty', cols: { ...all, Short: '', Body: '', Medium: '' } },
    { key: 'O\'Brien, "Jr"', cols: { ...all, Body: 'a,b\r\n"c"\\ \n end', Short: "it's \\N", Ratio: 0.30000000000000004, Amount: '0.5000', Qty: 0 } },
    { key: 'floats', cols: { ...all, Ratio: 1e21, Amount: '100' } },
  ];
  const upserted = await api('PUT', '/custom-tables/Typed/rows', {
    OperationType: 'UpsertMany',
    UpsertManyModel: rows.map((r) => ({ KeyValue: r.key, Columns: Object.entries(r.cols).map(([ColumnName, Value]) => ({ ColumnName, Value })) })),
  });
  assert.equal(upserted.status, 200, upserted.text);
});
after(async () => {
  await owner?.end();
  await server?.close();
});

const url = (name: string) => `${server.baseUrl}/api/v3/analytics/named-query/${name}/dynamic-execute`;
const post = (name: string, body: unknown, accept?: string, signal?: AbortSignal) =>
  fetch(url(name), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', ...(accept ? { accept } : {}) },
    body: JSON.stringify(body),
    signal,
  });

async function page(name: string, body: unknown): Promise<{ data: Record<string, unknown>[]; totalCount: number }> {
  const res = await post(name, body);
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json as { data: Record<string, unknown>[]; totalCount: number };
}

/** RFC 4180 with CRLF line ends; an unquoted empty field is null, a quoted one the empty string. */
function parseCsv(text: string): (string | null)[][] {
  const rows: (string | null)[][] = [];
  let row: (string | null)[] = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  const endField = () => {
    row.push(field === '' && !wasQuoted ? null : field);
    field = '';
    wasQuoted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && ch === '"') quoted = false;
    else if (quoted) field += ch;
    else if (ch === '"') quoted = wasQuoted = true;
    else if (ch === ',') endField();
    else if (ch === '\r' && text[i + 1] === '\n') {
      endField();
      rows.push(row);
      row = [];
      i++;
    } else {
      assert.notEqual(ch, '\n', `a bare LF outside quotes at ${i}`);
      field += ch;
    }
  }
  assert.equal(field, '', 'the text ends with CRLF');
  return rows;
}

async function csv(name: string, body: unknown): Promise<{ header: string[]; rows: (string | null)[][]; text: string }> {
  const res = await post(name, body, 'text/csv');
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
  const [header, ...rows] = parseCsv(text);
  return { header: header as string[], rows, text };
}

/** A CSV field against the JSON page's value: same text, numbers equal and without trailing zeros. */
function assertSame(cell: string | null, value: unknown, where: string): void {
  if (value === null) assert.equal(cell, null, where);
  else if (cell === null) assert.fail(`${where}: null in the CSV, ${JSON.stringify(value)} in the JSON page`);
  else if (typeof value === 'number') {
    assert.equal(Number(cell), value, where);
    assert.doesNotMatch(cell, /\.\d*0$|\.$/, `${where}: trailing zeros`);
  } else if (typeof value === 'boolean') assert.equal(cell, String(value), where);
  else if (typeof value === 'object') assert.deepEqual(JSON.parse(cell), value, where);
  else assert.equal(cell, value, where);
}

async function assertCsvEqualsJson(name: string, queryBuilder: Record<string, unknown>, parameters?: Record<string, unknown>): Promise<number> {
  const json = await page(name, { queryBuilder, parameters });
  const out = await csv(name, { queryBuilder, parameters });
  const fields = json.data.length ? Object.keys(json.data[0]) : out.header;
  assert.deepEqual(out.header, fields, `${name} header`);
  assert.equal(out.rows.length, json.data.length, `${name} rows`);
  json.data.forEach((r, i) => {
    fields.forEach((f, j) => {
      assertSame(out.rows[i][j], r[f], `${name} row ${i} ${f}`);
    });
  });
  return json.data.length;
}

describe('CSV through COPY says what the JSON pages say', () => {
  test('every catalogue query, first 100 rows in key order', async (t) => {
    let cells = 0;
    for (const entry of CATALOGUE) {
      const n = await assertCsvEqualsJson(entry.name, { take: 100 });
      cells += n * entry.columns.length;
    }
    t.diagnostic(`${cells} cells compared`);
    assert.ok(cells > 10_000);
  });

  test('a custom table of every type: quotes, CR/LF, backslashes, unicode, floats, money, base64; empty string is "", null is nothing', async () => {
    assert.equal(await assertCsvEqualsJson('CT-Typed', { take: 100 }), 5);
    const out = await csv('CT-Typed', { queryBuilder: { fields: ['Code', 'Short', 'Body', 'Flag'], orderBy: [{ field: 'Code' }] } });
    const lines = out.text.split('\r\n');
    assert.equal(lines[0], 'Code,Short,Body,Flag');
    assert.ok(lines.includes('nulls,,,'), 'null fields are empty');
    assert.ok(
      out.rows.some((r) => r[0] === 'empty' && r[1] === '' && r[2] === ''),
      'empty strings are quoted',
    );
    assert.ok(out.text.includes('"O\'Brien, ""Jr""",it\'s \\N,"a,b\r\n""c""\\ \n end",true\r\n'), out.text);
  });

  test('fields, orderBy, skip, take, filters and parameters with quotes and backslashes', async () => {
    assert.equal(
      await assertCsvEqualsJson('CT-Typed', { filters: [['Body', 'contains', '"c"\\'], 'or', ['Code', '=', 'o\'brien, "jr"']], fields: ['Body', 'Code'] }),
      1,
    );
    assert.equal(await assertCsvEqualsJson('CT-Typed', { filters: ['Short', 'startswith', "it's \\"] }), 1);
    const days = await page('DE-TimeSheets', { queryBuilder: { take: 1, orderBy: [{ field: 'Day', direction: 'desc' }], fields: ['Day'] } });
    const last = days.data[0].Day as string;
    const n = await assertCsvEqualsJson(
      'DE-TimeSheets',
      {
        skip: 3,
        take: 40,
        orderBy: [{ field: 'User', direction: 'desc' }, { field: 'Hours' }],
        filters: [['Hours', '>', 0.5], 'and', ['Job', 'notcontains', "'"]],
      },
      { From: '2020/01/01', To: last, ProjectNumber: null },
    );
    assert.ok(n > 0);
    assert.equal(await assertCsvEqualsJson('DE-TimeSheetsCount', { filters: ['Hours', '>', 1] }, { From: '2020-01-01T00:00:00Z' }), 1);
    const empty = await csv('DE-TimeSheets', { queryBuilder: { fields: ['TimesheetId', 'Day'], filters: ['Hours', '<', -1] } });
    assert.equal(empty.text, 'TimesheetId,Day\r\n');
  });
});

describe('parameters inlined into COPY', () => {
  const values: [unknown, string][] = [
    ["O'Brien", 'text'],
    ["back\\slash \\' and \\\\ two", 'text'],
    ['Zoë 日本 😀\r\n\t', 'text'],
    ['', 'text'],
    [null, 'text'],
    [42, 'int'],
    [-1.5, 'numeric'],
    ['123456789012345.1234', 'numeric'],
    [true, 'boolean'],
    [false, 'boolean'],
    [new Date('2024-03-31T14:30:05.123Z'), 'timestamptz'],
    ['2024-02-29', 'date'],
    ['3f2504e0-4f89-41d3-9a0c-0305e82c3301', 'uuid'],
    [['a', 'b"c', null, "d'e", 'f\\g', ''], 'text[]'],
    [[1, 2, 3], 'int[]'],
    [{ a: "x'y", b: ['\\'] }, 'jsonb'],
    [Buffer.from([0, 39, 92, 255]), 'bytea'],
  ];

  for (const scs of ['on', 'off']) {
    test(`each literal reads as the bound parameter, typed and untyped (standard_conforming_strings ${scs})`, async () => {
      await owner.query(`set standard_conforming_strings = ${scs}`);
      try {
        for (const [value, type] of values) {
          const literal = sqlLiteral(value);
          const typed = await owner.query(`select ($1::${type})::text as bound, (${literal}::${type})::text as inlined`, [value]);
          assert.equal(typed.rows[0].inlined, typed.rows[0].bound, `${type} ${literal}`);
          // pg sends a Buffer in binary format, which an untyped (text) parameter cannot read.
          if (Buffer.isBuffer(value)) continue;
          const untyped = await owner.query(`select ($1 = ${literal}) is not false as same`, [value]);
          assert.equal(untyped.rows[0].same, true, `untyped ${literal}`);
        }
      } finally {
        await owner.query('reset standard_conforming_strings');
      }
    });
  }
});

describe('dynamicExport', () => {
  const principal = (): Principal => ({ tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' });

  test('answers the columns it writes and, once the stream has ended, its data row count', async () => {
    const db = server.runtime.ctx.db;
    const body = { queryBuilder: { fields: ['TimesheetId', 'Hours'], filters: ['Hours', '>', 1] } };
    const expected = (await page('DE-TimeSheets', { queryBuilder: { ...body.queryBuilder, take: 0 } })).totalCount;
    for (const format of ['csv', 'ndjson'] as const) {
      const out = await dynamicExport(db, principal(), 'de-timesheets', body, format, Date.now() + 30_000);
      assert.equal(out.name, 'DE-TimeSheets');
      assert.deepEqual(out.columns, [
        { name: 'TimesheetId', type: 'guid' },
        { name: 'Hours', type: 'decimal' },
      ]);
      assert.equal(out.rowCount(), null);
      let text = '';
      for await (const chunk of out.stream) text += chunk;
      const lines = text.split('\n').filter(Boolean).length;
      assert.equal(out.rowCount(), expected, format);
      assert.equal(lines, format === 'csv' ? expected + 1 : expected, format);
    }
    const count = await dynamicExport(db, principal(), 'DE-TimeSheetsCount', {}, 'csv', Date.now() + 30_000);
    let text = '';
    for await (const chunk of count.stream) text += chunk;
    assert.match(text, /^Count\r\n\d+\r\n$/);
    assert.equal(count.rowCount(), 1);
  });
});

test('a client that goes away mid-export releases the database connection', async () => {
  const created = await api('POST', '/custom-tables/Big', { KeyColumnName: 'Id', KeyDataTypeId: 3, Columns: [{ ColumnName: 'Text', ColumnDataTypeId: 7 }] });
  assert.equal(created.status, 201, created.text);
  const { rows } = await owner.query(
    `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'customtables' and c.relkind = 'r' and c.relname like '%big%'`,
  );
  const physical = rows[0].relname as string;
  const cols = await owner.query(
    `select column_name from information_schema.columns where table_schema = 'customtables' and table_name = $1 order by ordinal_position`,
    [physical],
  );
  const [tenantCol, idCol, textCol] = cols.rows.map((r) => `"${r.column_name}"`);
  // About 40 MB of CSV: far more than the socket buffers between PostgreSQL, the server and this client.
  await owner.query(
    `insert into customtables."${physical}" (${tenantCol}, ${idCol}, ${textCol}) select $1, g, repeat(md5(g::text), 4) from generate_series(1, 300000) g`,
    [tenantId],
  );
  const copying = async () =>
    (
      await owner.query(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and query like 'copy (%' and state = 'active'`,
      )
    ).rows[0].n as number;
  const abort = new AbortController();
  try {
    const res = await post('CT-Big', {}, 'text/csv', abort.signal);
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.match(Buffer.from(first.value!).toString().slice(0, 9), /^Id,Text\r\n/);
    assert.equal(await copying(), 1, 'the COPY is held back by the unread response');
  } finally {
    // Unread, the response would also keep the server from closing.
    abort.abort();
  }
  const until = Date.now() + 10_000;
  while ((await copying()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await copying(), 0, 'the COPY ended with the client');
  // The server still exports.
  const again = await csv('CT-Big', { queryBuilder: { take: 2, fields: ['Id'] } });
  assert.deepEqual(again.rows, [['1'], ['2']]);
});
