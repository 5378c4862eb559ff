// NDJSON exports are COPY's text converted by the server (src/extraction/exports/json-lines.ts): each line must be
// exactly the JSON page's row as JSON.stringify prints it — for every named query over the demo data, and for strings holding quotes, backslashes, line breaks, control characters,
// separators and non-ASCII text, floats, money, dates and nulls of a custom table.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CATALOGUE } from '../src/extraction/definition.ts';
import { apiFor, appToken, type Tenant } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Tenant;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Lines', { demoData: true, scale: 0.1 });
});
after(() => server?.close());

async function both(name: string, queryBuilder: Record<string, unknown>): Promise<{ lines: string[]; page: Record<string, unknown>[] }> {
  const path = `/api/v3/analytics/named-query/${name}/dynamic-execute`;
  const page = await server.request('POST', path, { headers: appHeaders(tenant), json: { queryBuilder } });
  assert.equal(page.status, 200, page.text);
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { ...appHeaders(tenant), accept: 'application/x-ndjson', 'content-type': 'application/json' },
    body: JSON.stringify({ queryBuilder }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.ok(text === '' || text.endsWith('\n'), `${name}: lines end with LF`);
  return { lines: text.split('\n').slice(0, -1), page: page.body.data };
}

test('every named query: each NDJSON line is the JSON page row, byte for byte', async () => {
  for (const entry of CATALOGUE) {
    const { lines, page } = await both(entry.name, { take: 150 });
    assert.equal(lines.length, page.length, entry.name);
    for (const [i, line] of lines.entries()) assert.equal(line, JSON.stringify(page[i]), `${entry.name} row ${i}`);
  }
});

test('hostile strings and every column type of a custom table survive as JSON text', async () => {
  const api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/Odd', {
    KeyColumnName: 'Code',
    KeyDataTypeId: 5,
    Columns: [
      { ColumnName: 'Text', ColumnDataTypeId: 8 },
      { ColumnName: 'Amount', ColumnDataTypeId: 4 },
      { ColumnName: 'Ratio', ColumnDataTypeId: 2 },
      { ColumnName: 'Qty', ColumnDataTypeId: 3 },
      { ColumnName: 'On', ColumnDataTypeId: 1 },
      { ColumnName: 'Flag', ColumnDataTypeId: 0 },
      { ColumnName: 'Ref', ColumnDataTypeId: 9 },
    ],
  });
  assert.equal(created.status, 201, created.text);
  const texts = [
    'plain',
    "quote \" and 'single'",
    'back\\slash \\n not a newline \\\\',
    'line\nbreak\r\nand CR\r',
    'tab\there, bell\u0007, unit\u001f, x01\u0001 x02\u0002, vt\u000b bs\b ff\f nul-free \\N \\v',
    '\\N',
    'comma, semicolon; pipe|',
    'Zoë 日本語 🙂 \u2028\u2029',
    '',
    '{"json": [1, 2]}',
  ];
  const rows = texts.map((t, i) => ({
    KeyValue: `K${i}`,
    Columns: [
      { ColumnName: 'Text', Value: t },
      { ColumnName: 'Amount', Value: i % 3 === 0 ? null : 1234.5 * i },
      { ColumnName: 'Ratio', Value: i === 1 ? 1e-7 : i / 3 },
      { ColumnName: 'Qty', Value: -i },
      { ColumnName: 'On', Value: i % 2 ? '2024-02-29' : null },
      { ColumnName: 'Flag', Value: i % 2 === 0 },
      { ColumnName: 'Ref', Value: i === 4 ? null : `0000000${i}-0000-4000-8000-00000000000${i}` },
    ],
  }));
  const upsert = await api('PUT', '/custom-tables/Odd/rows', { OperationType: 'UpsertMany', UpsertManyModel: rows });
  assert.equal(upsert.status, 200, upsert.text);
  const { lines, page } = await both('CT-Odd', { orderBy: [{ field: 'Code' }] });
  assert.equal(lines.length, texts.length);
  // A float prints as PostgreSQL prints it (1e-07 where JSON.stringify has 1e-7): the same number.
  for (const [i, line] of lines.entries()) {
    assert.deepEqual(JSON.parse(line), page[i], `row ${i}`);
    assert.equal(line.replace(/"Ratio":[^,]*,/, ''), JSON.stringify(page[i]).replace(/"Ratio":[^,]*,/, ''), `row ${i}`);
  }
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).Text),
    texts,
  );
});
