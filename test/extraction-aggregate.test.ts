// The aggregate request of the Data Extraction API over a demo tenant: every aggregate and grouping
// against hand-written SQL over the same rows, filters and parameters, tenant isolation, bounds and bad input.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let headers: Record<string, string>;
let otherHeaders: Record<string, string>;
let tenantId: string;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let owner: pg.Client;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Aggregates', { demoData: true, scale: 0.05 });
  tenantId = tenant.tenantId;
  headers = appHeaders(tenant);
  otherHeaders = appHeaders(await server.createTenant('Other agency'));
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner?.end();
  await server?.close();
});

interface Answer {
  groupBy: { field: string; interval?: string }[];
  aggregate: { function: string; field: string | null };
  data: { keys: unknown[]; value: number | null; count: number }[];
  groupCount: number;
  total: { value: number | null; count: number };
}

const aggregate = (name: string, body: unknown, h = headers) =>
  server.request('POST', `/api/v3/analytics/named-query/${name}/aggregate`, { headers: h, json: body });

async function ok(name: string, body: unknown, h = headers): Promise<Answer> {
  const res = await aggregate(name, body, h);
  assert.equal(res.status, 200, res.text);
  return res.body as Answer;
}

// DE-TimeSheets' rows as its source computes the columns these tests read (time.ts).
const TIMESHEETS = `
  from timesheets t
  left join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
  left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
  left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
  where t.tenant_id = $1 and t.deleted_on is null`;
const HOURS = 'round(t.duration_minutes / 60.0, 6)';

async function sqlRows(select: string, rest = '', params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await owner.query(`select ${select} ${TIMESHEETS} ${rest}`, [tenantId, ...params])).rows;
}

const close = (a: number | null, b: number | null, what: string) => {
  assert.ok(a !== null && b !== null, `${what}: ${a} vs ${b}`);
  assert.ok(Math.abs(a - b) < 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
};

describe('aggregates over the whole filtered set', () => {
  test('sum of Hours by Client matches hand-written SQL, group by group, with the total', async () => {
    const answer = await ok('DE-TimeSheets', { groupBy: [{ field: 'Client' }], aggregate: { function: 'sum', field: 'Hours' } });
    const expected = await sqlRows(`cl.name as k, sum(${HOURS})::float8 as v, count(*)::int as n`, 'group by cl.name');
    assert.ok(expected.length > 3, 'the demo tenant books time for several clients');
    assert.equal(answer.groupCount, expected.length);
    assert.equal(answer.data.length, expected.length);
    for (const e of expected) {
      const g = answer.data.find((d) => d.keys[0] === e.k);
      assert.ok(g, `group ${e.k}`);
      close(g.value, e.v as number, `hours of ${e.k}`);
      assert.equal(g.count, e.n);
    }
    const [all] = await sqlRows(`sum(${HOURS})::float8 as v, count(*)::int as n`);
    close(answer.total.value, all.v as number, 'total hours');
    assert.equal(answer.total.count, all.n);
    assert.deepEqual(answer.groupBy, [{ field: 'Client' }]);
    assert.deepEqual(answer.aggregate, { function: 'sum', field: 'Hours' });
    // Ordered by the key, ignoring case, nulls last.
    const keys = answer.data.map((d) => d.keys[0]);
    const named = keys.filter((k) => k !== null) as string[];
    assert.deepEqual(
      named,
      [...named].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())),
    );
  });

  test('count, sum, avg, min and max of the whole set, filtered as dynamic-execute filters, match SQL', async () => {
    const [{ cutoff }] = await sqlRows(`percentile_disc(0.5) within group (order by t.date)::text as cutoff`);
    const filters = [['Day', '>=', cutoff], 'and', ['Status', '<>', 'Canceled']];
    const rest = `and t.date >= $2 and t.status <> 'Canceled'`;
    const [e] = await sqlRows(
      `count(*)::int as n, count(${HOURS})::int as nh, sum(${HOURS})::float8 as s, avg(${HOURS})::float8 as a, min(${HOURS})::float8 as mi, max(${HOURS})::float8 as ma`,
      rest,
      [cutoff],
    );
    assert.ok((e.n as number) > 0);
    const answers: Record<string, number> = { count: e.n as number, sum: e.s as number, avg: e.a as number, min: e.mi as number, max: e.ma as number };
    for (const [fn, expected] of Object.entries(answers)) {
      const a = await ok('DE-TimeSheets', { queryBuilder: { filters }, aggregate: fn === 'count' ? { function: fn } : { function: fn, field: 'Hours' } });
      assert.equal(a.data.length, 1, 'no grouping: one group, the whole set');
      assert.deepEqual(a.data[0].keys, []);
      close(a.data[0].value, expected, fn);
      close(a.total.value, expected, `${fn} total`);
      assert.equal(a.total.count, e.n);
      assert.equal(a.groupCount, 1);
    }
    const counted = await ok('DE-TimeSheets', { queryBuilder: { filters }, aggregate: { function: 'count', field: 'Hours' } });
    assert.equal(counted.total.value, e.nh, 'count of a field counts its non-null values');
    // Parameters apply as in dynamic-execute (From: Day >= value).
    const byParameter = await ok('DE-TimeSheets', { parameters: { From: cutoff }, aggregate: { function: 'sum', field: 'Hours' } });
    const [p] = await sqlRows(`sum(${HOURS})::float8 as s, count(*)::int as n`, 'and t.date >= $2', [cutoff]);
    close(byParameter.total.value, p.s as number, 'sum with the From parameter');
    assert.equal(byParameter.total.count, p.n);
  });

  for (const interval of ['day', 'week', 'month'] as const) {
    test(`Day grouped by ${interval} (the interval's first day) matches date_trunc`, async () => {
      const a = await ok('DE-TimeSheets', { groupBy: [{ field: 'Day', interval }], aggregate: { function: 'sum', field: 'Hours' }, take: 10_000 });
      const e = await sqlRows(`date_trunc('${interval}', t.date)::date::text as k, sum(${HOURS})::float8 as v, count(*)::int as n`, 'group by 1 order by 1');
      assert.equal(a.groupCount, e.length);
      assert.deepEqual(
        a.data.map((d) => d.keys[0]),
        e.map((r) => r.k),
        'keys in date order',
      );
      a.data.forEach((d, i) => {
        close(d.value, e[i].v as number, `${interval} ${d.keys[0]}`);
        assert.equal(d.count, e[i].n);
      });
      if (interval === 'week')
        assert.ok(
          a.data.every((d) => new Date(`${d.keys[0]}T00:00:00Z`).getUTCDay() === 1),
          'ISO weeks start on Monday',
        );
    });
  }

  test('two groupings (Client by month) and a datetime grouped by day in UTC', async () => {
    const a = await ok('DE-TimeSheets', {
      groupBy: [{ field: 'Client' }, { field: 'Day', interval: 'month' }],
      aggregate: { function: 'max', field: 'Hours' },
      take: 10_000,
    });
    const e = await sqlRows(`cl.name as c, date_trunc('month', t.date)::date::text as m, max(${HOURS})::float8 as v`, 'group by 1, 2');
    assert.equal(a.groupCount, e.length);
    for (const r of e) {
      const g = a.data.find((d) => d.keys[0] === r.c && d.keys[1] === r.m);
      assert.ok(g, `group ${r.c} ${r.m}`);
      close(g.value, r.v as number, `max of ${r.c} ${r.m}`);
    }
    const m = await ok('DE-TimeSheets', { groupBy: [{ field: 'ModifiedOn' }], aggregate: { function: 'count' }, take: 10_000 });
    assert.deepEqual(m.groupBy, [{ field: 'ModifiedOn', interval: 'day' }]);
    const me = await sqlRows(`(t.modified_on_utc at time zone 'UTC')::date::text as k, count(*)::int as n`, 'group by 1 order by 1');
    assert.deepEqual(
      m.data.map((d) => [d.keys[0], d.value]),
      me.map((r) => [r.k, r.n]),
    );
    // A boolean and a guid group as themselves.
    const b = await ok('DE-TimeSheets', { groupBy: [{ field: 'IsBillable' }, { field: 'ClientId' }], aggregate: { function: 'avg', field: 'Hours' } });
    assert.ok(b.data.every((d) => typeof d.keys[0] === 'boolean'));
  });

  test('order by value and take bound the groups; groupCount and the total still cover them all', async () => {
    const all = await ok('DE-TimeSheets', { groupBy: [{ field: 'User' }], aggregate: { function: 'sum', field: 'Hours' }, take: 10_000 });
    const top = await ok('DE-TimeSheets', { groupBy: [{ field: 'User' }], aggregate: { function: 'sum', field: 'Hours' }, order: 'valueDesc', take: 3 });
    assert.ok(all.groupCount > 3);
    assert.equal(top.data.length, 3);
    assert.equal(top.groupCount, all.groupCount);
    assert.deepEqual(top.total, all.total);
    const sorted = [...all.data].sort((x, y) => (y.value ?? 0) - (x.value ?? 0));
    assert.deepEqual(
      top.data.map((d) => d.value),
      sorted.slice(0, 3).map((d) => d.value),
    );
    const none = await ok('DE-TimeSheets', { groupBy: [{ field: 'User' }], aggregate: { function: 'sum', field: 'Hours' }, take: 0 });
    assert.equal(none.data.length, 0);
    assert.equal(none.groupCount, all.groupCount, 'take 0 answers the counts and the total only');
    assert.deepEqual(none.total, all.total);
  });

  test('an empty filtered set: no groups, count 0, no sum', async () => {
    const filters = ['Day', '<', '1900-01-01'];
    const grouped = await ok('DE-TimeSheets', { queryBuilder: { filters }, groupBy: [{ field: 'Client' }], aggregate: { function: 'sum', field: 'Hours' } });
    assert.deepEqual(grouped.data, []);
    assert.deepEqual([grouped.groupCount, grouped.total], [0, { value: null, count: 0 }]);
    const counted = await ok('DE-TimeSheets', { queryBuilder: { filters }, groupBy: [{ field: 'Client' }], aggregate: { function: 'count' } });
    assert.deepEqual(counted.total, { value: 0, count: 0 });
  });
});

describe('custom tables', () => {
  test('CT-{tableName} aggregates its own columns: decimals, integers and dates by month', async () => {
    const api = apiFor(server, await appToken(server, tenant));
    const created = await api('POST', '/custom-tables/Sales', {
      KeyColumnName: 'Code',
      KeyDataTypeId: 5,
      Columns: [
        { ColumnName: 'Region', ColumnDataTypeId: 5 },
        { ColumnName: 'Amount', ColumnDataTypeId: 4 },
        { ColumnName: 'Qty', ColumnDataTypeId: 3 },
        { ColumnName: 'Sold', ColumnDataTypeId: 1 },
      ],
    });
    assert.ok(created.status < 300, created.text);
    const rows = [
      ['a', 'North', '10.25', 2, '2024-01-03'],
      ['b', 'North', '4.50', 1, '2024-02-10'],
      ['c', 'South', '7.00', 5, '2024-01-31'],
      ['d', null, '1.00', 1, '2024-02-01'],
    ] as const;
    const put = await api('PUT', '/custom-tables/Sales/rows', {
      OperationType: 'UpsertMany',
      UpsertManyModel: rows.map(([key, Region, Amount, Qty, Sold]) => ({
        KeyValue: key,
        Columns: Object.entries({ Region, Amount, Qty, Sold }).map(([ColumnName, Value]) => ({ ColumnName, Value })),
      })),
    });
    assert.ok(put.status < 300, put.text);
    const byRegion = await ok('CT-Sales', { groupBy: [{ field: 'Region' }], aggregate: { function: 'sum', field: 'Amount' } });
    assert.deepEqual(
      byRegion.data.map((d) => [d.keys[0], d.value, d.count]),
      [
        ['North', 14.75, 2],
        ['South', 7, 1],
        [null, 1, 1],
      ],
    );
    assert.deepEqual(byRegion.total, { value: 22.75, count: 4 });
    const byMonth = await ok('CT-Sales', { groupBy: [{ field: 'Sold', interval: 'month' }], aggregate: { function: 'max', field: 'Qty' } });
    assert.deepEqual(
      byMonth.data.map((d) => [d.keys[0], d.value]),
      [
        ['2024-01-01', 5],
        ['2024-02-01', 1],
      ],
    );
  });
});

describe('tenant isolation', () => {
  test("another tenant's aggregate sees none of this tenant's rows, even filtered by its ids", async () => {
    const [{ id }] = (await owner.query('select id from commercial_clients where tenant_id = $1 limit 1', [tenantId])).rows;
    const body = { queryBuilder: { filters: ['ClientId', '=', id] }, groupBy: [{ field: 'Client' }], aggregate: { function: 'count' } };
    const mine = await ok('DE-TimeSheets', body);
    assert.ok(mine.total.count > 0);
    const theirs = await ok('DE-TimeSheets', body, otherHeaders);
    assert.deepEqual([theirs.data, theirs.total.count, theirs.groupCount], [[], 0, 0]);
    const whole = await ok('DE-TimeSheets', { aggregate: { function: 'count' } }, otherHeaders);
    assert.equal(whole.total.count, 0);
  });
});

describe('bad input is a 400 naming what is wrong', () => {
  const bad = async (body: unknown, path: string, words: RegExp, name = 'DE-TimeSheets') => {
    const res = await aggregate(name, body);
    assert.equal(res.status, 400, res.text);
    assert.match(String(res.body.detail), words);
    if (path)
      assert.ok(
        (res.body.errors as { path: string }[]).some((e) => e.path === path),
        `${path} in ${res.text}`,
      );
  };
  test('unknown fields, a non-numeric sum, a misplaced interval, a count query, bounds', async () => {
    await bad({ groupBy: [{ field: 'Nope' }], aggregate: { function: 'count' } }, '/groupBy/0/field', /unknown field "Nope"/);
    await bad({ aggregate: { function: 'sum', field: 'Missing' } }, '/aggregate/field', /unknown field "Missing"/);
    await bad({ aggregate: { function: 'sum', field: 'Client' } }, '/aggregate/field', /Client is of type string; sum needs a numeric field/);
    await bad({ aggregate: { function: 'avg', field: 'Day' } }, '/aggregate/field', /Day is of type date; avg needs a numeric field/);
    await bad({ aggregate: { function: 'max' } }, '/aggregate/field', /max needs a numeric field/);
    await bad({ groupBy: [{ field: 'Client', interval: 'month' }], aggregate: { function: 'count' } }, '/groupBy/0/interval', /Client is of type string/);
    await bad({ queryBuilder: { filters: ['Nope', '=', 1] }, aggregate: { function: 'count' } }, '', /Nope/);
    await bad({ aggregate: { function: 'count' } }, '/', /count query/, 'DE-TimeSheetsCount');
    await bad({ aggregate: { function: 'median', field: 'Hours' } }, '', /function/);
    await bad({ groupBy: [{ field: 'Client' }, { field: 'User' }, { field: 'Day' }], aggregate: { function: 'count' } }, '', /groupBy/);
    await bad({ aggregate: { function: 'count' }, take: 10_001 }, '', /take/);
  });
});
