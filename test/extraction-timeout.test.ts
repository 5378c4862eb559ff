// The 30-second limit, shortened: a query that outlives the request deadline is cancelled in the
// database and answers 504 with advice, while the server keeps answering other requests.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { type Runtime, startServer } from '../src/server.ts';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let short: Runtime;
let headers: Record<string, string>;

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Slow');
  headers = appHeaders(tenant);
  const api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/Big', { KeyColumnName: 'Id', KeyDataTypeId: 3, Columns: [{ ColumnName: 'Text', ColumnDataTypeId: 7 }] });
  assert.equal(created.status, 201, created.text);
  // 200,000 rows straight into the physical table (the API path would itself hit the short deadline).
  const owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  const { rows } = await owner.query(
    `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'customtables' and c.relkind = 'r' and c.relname like '%big%'`,
  );
  const physical = rows[0].relname as string;
  const cols = await owner.query(
    `select column_name from information_schema.columns where table_schema = 'customtables' and table_name = $1 order by ordinal_position`,
    [physical],
  );
  const [tenantCol, idCol, textCol] = cols.rows.map((r) => `"${r.column_name}"`);
  await owner.query(
    `insert into customtables."${physical}" (${tenantCol}, ${idCol}, ${textCol}) select $1, g, md5(g::text) || md5((g * 7)::text) from generate_series(1, 200000) g`,
    [tenant.tenantId],
  );
  await owner.end();
  // A second server on the same database with a 300 ms request limit.
  short = await startServer(
    loadConfig({
      DATABASE_URL: server.databaseUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'),
      ATRIUM_RATE_LIMIT_PER_MINUTE: '0',
      ATRIUM_REQUEST_TIMEOUT_MS: '300',
      ATRIUM_ROLE: 'api',
      DATA_DIR: `${process.env.TMPDIR ?? '/tmp'}/atrium-test-data-short-${randomBytes(4).toString('hex')}`,
    }),
    () => {},
  );
});
after(async () => {
  await short?.close();
  await server?.close();
});

// 400 ORed contains per row over 200,000 rows: far beyond 300 ms.
const expensive = Array.from({ length: 400 }, (_, i) => ['Text', 'contains', `zz${i}q`]).flatMap((c, i) => (i ? ['or', c] : [c]));

test('a query past the deadline answers 504 with advice; the server still answers', async () => {
  const url = `${short.address}/api/v3/analytics/named-query/CT-Big/dynamic-execute`;
  const post = (body: unknown) => fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await post({ queryBuilder: { take: 1 } }); // warms the app-secret cache so the deadline is spent on the query
  const started = Date.now();
  const slow = post({ queryBuilder: { take: 10, orderBy: [{ field: 'Text' }], filters: expensive } });
  // Meanwhile, a cheap request is answered.
  const quick = await post({ queryBuilder: { take: 1, filters: ['Id', '=', 5] } });
  assert.equal(quick.status, 200);
  const res = await slow;
  const body = (await res.json()) as { status: number; detail: string };
  assert.equal(res.status, 504, JSON.stringify(body));
  assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
  assert.match(body.detail, /Narrow the query with filters .* page it with skip and take/);
  assert.ok(Date.now() - started < 5000, 'cancelled near the deadline');
  // The CSV stream is bound by the same limit and answers the same problem before any row.
  const csv = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'text/csv' },
    body: JSON.stringify({ queryBuilder: { filters: expensive, orderBy: [{ field: 'Text' }] } }),
  });
  assert.equal(csv.status, 504);
  await csv.text();
  // Cancelled in the database: nothing of ours is still running there.
  const owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  // The cancel request travels on its own connection after the 504, so allow it a moment to land.
  let running = -1;
  for (let i = 0; i < 40 && running !== 0; i++) {
    if (i) await new Promise((r) => setTimeout(r, 50));
    const active = await owner.query(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'active' and query like '%ilike%' and pid <> pg_backend_pid()`,
    );
    running = active.rows[0].n;
  }
  await owner.end();
  assert.equal(running, 0, 'the cancelled statements still run 2 s after the 504');
  const after = await post({ queryBuilder: { take: 2, filters: ['Id', '<', 2] } });
  assert.equal(after.status, 200, `${Date.now() - started} ms ${await after.text()}`);
});
