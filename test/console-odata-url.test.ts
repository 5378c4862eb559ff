// The query explorer's OData URL (for Excel / Power BI) carries the visual filters and sorting: the feed
// at that URL answers the same rows, in the same order, as dynamic-execute with the explorer's query
// builder, for every operation a field type offers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildQueryBuilder, type FieldMetadata, type FilterRow, odataFilterFor, odataUrlFor, type SortRow } from '../console/src/pages/query-builder.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: TenantCredentials;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Odata Url', { demoData: true, scale: 0.05 });
});
after(() => server.close());

const row = (field: string, op: string, value = '', value2 = ''): FilterRow => ({ field, op, value, value2 });

async function compare(query: string, key: string, filters: FilterRow[], joiner: 'and' | 'or', sort: SortRow[]): Promise<number> {
  const meta = await server.request('GET', `/api/v3/analytics/named-query/${query}/metadata`, { headers: appHeaders(tenant) });
  assert.equal(meta.status, 200);
  const fields = (meta.body.filterFields ?? meta.body.fields) as FieldMetadata[];
  const qb = buildQueryBuilder({ filters, joiner, sort, fields, selected: [] });
  const api = await server.request('POST', `/api/v3/analytics/named-query/${query}/dynamic-execute`, {
    headers: appHeaders(tenant),
    json: { queryBuilder: { ...qb, take: 10000 } },
  });
  assert.equal(api.status, 200, JSON.stringify(api.body));
  const url = odataUrlFor(server.baseUrl, tenant.tenantId, query, sort, odataFilterFor(filters, joiner, fields));
  const basic = `Basic ${Buffer.from(`${tenant.tenantId}:${tenant.appId}:${tenant.appSecret}`).toString('base64')}`;
  // The feed pages by @odata.nextLink, as Excel and Power BI follow it.
  const value: Record<string, unknown>[] = [];
  for (let next: string | undefined = url; next; ) {
    const res: Response = await fetch(next, { headers: { authorization: basic, accept: 'application/json' } });
    const feed = (await res.json()) as { value: Record<string, unknown>[]; '@odata.nextLink'?: string };
    assert.equal(res.status, 200, `${next}: ${JSON.stringify(feed)}`);
    value.push(...feed.value);
    next = feed['@odata.nextLink'];
  }
  const odataKey = key.replace(/[^A-Za-z0-9_]/g, '_');
  const expected = (api.body.data as Record<string, unknown>[]).map((r) => r[key]);
  const actual = value.map((r) => r[odataKey]);
  if (sort.length) assert.deepEqual(actual, expected, `${query} ${JSON.stringify(filters)}: same rows in the same order`);
  else assert.deepEqual([...actual].sort(), [...expected].sort(), `${query} ${JSON.stringify(filters)}: same rows`);
  return expected.length;
}

test('the OData URL answers the rows of the explorer query, for each operation', async () => {
  const jobs = await server.request('POST', '/api/v3/analytics/named-query/DE-Jobs/dynamic-execute', {
    headers: appHeaders(tenant),
    json: { queryBuilder: { take: 1, orderBy: [{ field: 'JobNumber', direction: 'asc' }] } },
  });
  const job = jobs.body.data[0] as Record<string, string>;
  const sortByNumber: SortRow[] = [{ field: 'JobNumber', direction: 'desc' }];
  const cases: [FilterRow[], 'and' | 'or'][] = [
    [[row('Job', 'contains', "a'")], 'and'],
    [[row('Job', 'contains', 'a')], 'and'],
    [[row('Job', 'notcontains', 'a'), row('Job', 'startswith', 'B')], 'or'],
    [[row('Job', 'endswith', 'e')], 'and'],
    [[row('JobNumber', '=', job.JobNumber)], 'and'],
    [[row('JobNumber', '<>', job.JobNumber), row('Job', 'isnotblank')], 'and'],
    [[row('JobId', '=', job.JobId)], 'and'],
    [[row('Job', 'isblank')], 'and'],
  ];
  let matched = 0;
  for (const [filters, joiner] of cases) matched += await compare('DE-Jobs', 'JobId', filters, joiner, sortByNumber);
  assert.ok(matched > 10, 'the cases match rows');

  const timeCases: FilterRow[][] = [
    [row('Hours', '>', '4')],
    [row('Hours', 'between', '2', '3.5')],
    [row('Day', '>=', '2025-06-01'), row('Day', '<', '2025-07-01')],
    [row('Day', 'between', '2025-03-01', '')],
    [row('Hours', '<=', '1'), row('Day', 'isnotblank')],
  ];
  for (const filters of timeCases)
    await compare('DE-TimeSheets', 'TimesheetId', filters, 'and', [
      { field: 'Day', direction: 'desc' },
      { field: 'TimesheetId', direction: 'asc' },
    ]);
});
