// The ad-hoc xlsx export (Accept: the xlsx media type) holds the rows of the JSON pages, typed: one
// worksheet named after the query, a bold header row of the chosen fields, then every matching row.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import ExcelJS from 'exceljs';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
let server: TestServer;
let headers: Record<string, string>;

before(async () => {
  server = await startTestServer();
  headers = appHeaders(await server.createTenant('Xlsx', { demoData: true, scale: 0.05 }));
});
after(() => server.close());

const url = (name: string) => `${server.baseUrl}/api/v3/analytics/named-query/${name}/dynamic-execute`;

test('an xlsx export has the JSON rows, typed, under a header of the chosen fields', async () => {
  const fields = ['JobId', 'JobNumber', 'Job', 'IsDelayed', 'EndDate'];
  const queryBuilder = {
    fields,
    orderBy: [{ field: 'JobNumber', direction: 'asc' }],
    filter: { logic: 'And', filters: [{ field: 'Job', operator: 'contains', value: 'a' }] },
  };
  const json = await fetch(url('DE-Jobs'), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ queryBuilder: { ...queryBuilder, take: 10000 } }),
  });
  assert.equal(json.status, 200);
  const page = (await json.json()) as { data: Record<string, unknown>[]; totalCount: number };
  assert.ok(page.totalCount > 5, 'the filter keeps several jobs');

  const res = await fetch(url('DE-Jobs'), {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: XLSX },
    body: JSON.stringify({ queryBuilder }),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), XLSX);
  assert.match(res.headers.get('content-disposition') ?? '', /filename="DE-Jobs\.xlsx"/);
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(await res.arrayBuffer());
  const ws = wb.worksheets[0];
  assert.equal(ws.name, 'DE-Jobs');
  assert.deepEqual((ws.getRow(1).values as unknown[]).slice(1), fields);
  assert.equal(ws.rowCount, page.totalCount + 1);
  const rows: Record<string, unknown>[] = [];
  for (let r = 2; r <= ws.rowCount; r++) {
    const v = ws.getRow(r).values as unknown[];
    assert.equal(typeof v[4], 'boolean', 'IsDelayed is a boolean cell');
    rows.push({ JobId: v[1], JobNumber: v[2], Job: v[3], IsDelayed: v[4], EndDate: v[5] instanceof Date ? v[5].toISOString().slice(0, 10) : (v[5] ?? null) });
  }
  const day = (x: unknown) => (x == null ? null : String(x).slice(0, 10));
  assert.deepEqual(
    rows,
    page.data.map((r) => ({ ...r, EndDate: day(r.EndDate) })),
  );
});
