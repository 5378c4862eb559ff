// Read-ahead for paging clients (decision 0041): once a client asks for the page after the one before it, its
// next pages are computed ahead in batches, and each is answered exactly as the offset page at its skip would
// be: for orders on the key, a date and strings ignoring case; after a write to a table the pages read (the
// pages read ahead are dropped, the next page is the new data's); and for two tenants paging the same query
// with the same filters at once (neither is answered the other's pages).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import pg from 'pg';
import { request as fetchRaw } from 'undici';
import { readAheadSettled } from '../src/extraction/pages/read-ahead.ts';
import type { ExecuteBody } from '../src/extraction/query/query-builder.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { offsetPage as offset, httpPage as paged, resultCounts, touch as write } from './extraction-paging.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenants: TenantCredentials[];
let db: DatabaseHandle;
let owner: pg.Client;

before(async () => {
  server = await startTestServer();
  tenants = [await server.createTenant('Ahead', { demoData: true, scale: 0.05 }), await server.createTenant('Also ahead', { demoData: true, scale: 0.05 })];
  db = new DatabaseHandle(server.databaseUrl);
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner?.end();
  await db?.close();
  await server?.close();
});

const readAhead = () => resultCounts(server, 'atrium_extraction_read_ahead_pages_total', ['read', 'hit', 'stale', 'unused']);
const httpPage = (tenant: TenantCredentials, body: ExecuteBody) => paged(server, tenant, body);
const offsetPage = (tenant: TenantCredentials, body: ExecuteBody) => offset(db, tenant, body);
const touch = (tenant: TenantCredentials, sqlText: string) => write(owner, tenant, sqlText);

const batches = () => resultCounts(server, 'atrium_extraction_read_ahead_batches_total', ['range', 'keys']);

const ORDERS: ExecuteBody['queryBuilder'][] = [
  // The key's order, by default or asked for as the platform's loader asks (its batches read a key range), also filtered.
  {},
  { orderBy: [{ field: 'TimesheetId', direction: 'asc' }] },
  { filters: [['Hours', '>', 1], 'and', ['Job', 'contains', 'a']] },
  { orderBy: [{ field: 'Day', direction: 'desc' }] },
  { orderBy: [{ field: 'User' }, { field: 'Hours', direction: 'desc' }], filters: ['Hours', '>', 1] },
];

test('pages read ahead equal the offset pages, for every order; every page after the second is read ahead', async () => {
  const [tenant] = tenants;
  for (const order of ORDERS) {
    // About twelve pages, the last one short: two batches of eight pages and more.
    const take = Math.ceil((await httpPage(tenant, { queryBuilder: { ...order, take: 0 } })).totalCount / 11.5);
    const before = await readAhead();
    const batchesBefore = await batches();
    let pages = 0;
    for (let skip = 0; ; skip += take) {
      const body = { queryBuilder: { ...order, skip, take } };
      const page = await httpPage(tenant, body);
      assert.deepEqual(page, await offsetPage(tenant, body), `${JSON.stringify(body)}`);
      pages++;
      if (page.data.length < take) break;
    }
    assert.ok(pages >= 12, `${JSON.stringify(order)}: ${pages} pages`);
    const now = await readAhead();
    // The first page is an offset page, the second seeks past it and starts reading ahead: every later page was read ahead.
    assert.equal(now.hit - before.hit, pages - 2, `${JSON.stringify(order)} read ahead`);
    assert.equal(now.stale - before.stale, 0);
    // In the key's order every batch is read as a key range; in any other, by its keys.
    const inKeyOrder = !order?.orderBy || order.orderBy[0].field === 'TimesheetId';
    const read = await batches();
    assert.ok(read[inKeyOrder ? 'range' : 'keys'] > batchesBefore[inKeyOrder ? 'range' : 'keys'], `${JSON.stringify(order)}: batches ${JSON.stringify(read)}`);
    assert.equal(
      read[inKeyOrder ? 'keys' : 'range'],
      batchesBefore[inKeyOrder ? 'keys' : 'range'],
      `${JSON.stringify(order)}: batches ${JSON.stringify(read)}`,
    );
  }
});

test('a write to a table the pages read drops the pages read ahead; the next page is the new data, exactly', async () => {
  const [tenant] = tenants;
  const order = { orderBy: [{ field: 'Day', direction: 'desc' }] };
  const take = 40;
  for (let skip = 0; skip <= 2 * take; skip += take) await httpPage(tenant, { queryBuilder: { ...order, skip, take } });
  // Pages up to the tenth are read ahead now; the rows statement reads the jobs' names.
  const before = await readAhead();
  assert.ok(before.read > 0);
  await touch(tenant, `update jobs set name = name || ' (renamed)' where tenant_id = $1`);
  // Six more pages: each the new data; reading ahead starts again (once a batch still in flight from before the
  // write has ended: a client has one batch at a time).
  for (let skip = 3 * take; skip <= 8 * take; skip += take) {
    const body = { queryBuilder: { ...order, skip, take } };
    const page = (await httpPage(tenant, body)) as { data: { Job: string }[]; totalCount: number };
    assert.deepEqual(page, await offsetPage(tenant, body));
    assert.ok(page.data.every((r) => r.Job === null || r.Job.endsWith(' (renamed)')));
  }
  const now = await readAhead();
  assert.ok(now.stale > before.stale, 'the pages read before the write were dropped');
  assert.ok(now.hit > before.hit, 'pages were read ahead again after the write');
});

test('two tenants paging the same query and filters at once are each answered their own pages', async () => {
  const order = { orderBy: [{ field: 'Day', direction: 'desc' }] };
  const take = 60;
  const before = await readAhead();
  // Their rows differ (ids at least), so an answer from the other tenant's pages could not pass.
  const firsts = await Promise.all(tenants.map((t) => offsetPage(t, { queryBuilder: { ...order, skip: 0, take } })));
  assert.notDeepEqual(firsts[0].data, firsts[1].data);
  for (let skip = 0; skip < 10 * take; skip += take) {
    for (const tenant of tenants) {
      const body = { queryBuilder: { ...order, skip, take } };
      assert.deepEqual(await httpPage(tenant, body), await offsetPage(tenant, body), `${tenant.slug} ${skip}`);
    }
  }
  // Both read ahead: eight pages each.
  assert.equal((await readAhead()).hit - before.hit, 2 * 8);
});

test('a client that accepts gzip or br is answered the pages read ahead compressed while they waited, the same JSON', async () => {
  const [tenant] = tenants;
  const take = Math.ceil((await httpPage(tenant, { queryBuilder: { take: 0 } })).totalCount / 11.5);
  for (const encoding of ['gzip', 'br', 'identity'] as const) {
    const before = await resultCounts(server, 'atrium_extraction_read_ahead_pages_total', ['hit', 'encoded']);
    let pages = 0;
    for (let skip = 0; ; skip += take) {
      const body = { queryBuilder: { skip, take } };
      const res = await fetchRaw(`${server.baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, {
        method: 'POST',
        headers: { ...appHeaders(tenant), 'content-type': 'application/json', 'accept-encoding': encoding },
        body: JSON.stringify(body),
      });
      assert.equal(res.statusCode, 200);
      const raw = Buffer.from(await res.body.arrayBuffer());
      assert.equal(res.headers['content-encoding'], encoding === 'identity' ? undefined : encoding, `${encoding} page at ${skip}`);
      if (encoding !== 'identity') assert.match(String(res.headers.vary), /accept-encoding/i);
      const json = encoding === 'gzip' ? gunzipSync(raw) : encoding === 'br' ? brotliDecompressSync(raw) : raw;
      const page = JSON.parse(json.toString('utf8'));
      assert.deepEqual(page, await offsetPage(tenant, body), `${encoding} ${JSON.stringify(body)}`);
      pages++;
      if (page.data.length < take) break;
    }
    const now = await resultCounts(server, 'atrium_extraction_read_ahead_pages_total', ['hit', 'encoded']);
    // Every page after the second is read ahead; in an encoding the client accepts, each of them was compressed ahead.
    assert.equal(now.hit - before.hit, pages - 2, `${encoding}: pages read ahead`);
    assert.equal(now.encoded - before.encoded, encoding === 'identity' ? 0 : pages - 2, `${encoding}: answered compressed ahead`);
  }
});

test('timesheets inserted after a page read ahead leave it as it is; inserted before it, it is answered moved; inside it, it is dropped (decision 0083)', async () => {
  const [tenant] = tenants;
  const counts = () => resultCounts(server, 'atrium_extraction_read_ahead_pages_total', ['hit', 'hit_after_inserts', 'hit_shifted', 'stale']);
  const readAheadHits = (c: Record<string, number>) => c.hit + c.hit_after_inserts + c.hit_shifted;
  // A timesheet copied from a live one (it passes the filters), with the id given; once the batches in flight have
  // read (one that reads after the insert starts from it, and the pages it reads are not the ones looked at here).
  const insert = async (id: string) => {
    await readAheadSettled(server.runtime.ctx.db);
    await touch(
      tenant,
      `insert into timesheets (id, tenant_id, user_id, job_id, work_type_id, date, duration_minutes, is_billable, status, description,
          booked_company_id, booked_department_id, booked_typology_id, booked_hourly_cost)
       select '${id}', tenant_id, user_id, job_id, work_type_id, date, 45, is_billable, status, 'read-ahead probe',
          booked_company_id, booked_department_id, booked_typology_id, booked_hourly_cost
         from timesheets where tenant_id = $1 and deleted_on is null and duration_minutes > 60 and job_id is not null order by id limit 1`,
    );
  };
  // The loader's order, and a filter the inserted rows pass.
  for (const order of [{ orderBy: [{ field: 'TimesheetId', direction: 'asc' as const }] }, { filters: ['Hours', '>', 0.5] }]) {
    const take = 10;
    const page = async (skip: number) => {
      const body = { queryBuilder: { ...order, skip, take } };
      const answer = await httpPage(tenant, body);
      assert.deepEqual(answer, await offsetPage(tenant, body), `${JSON.stringify(body)}`);
      return answer;
    };
    // The demo's ids are dense counters: a row inside a later page is deleted first, so one can be inserted there later.
    const pages = 24;
    const gap = ((await offsetPage(tenant, { queryBuilder: { ...order, skip: (4 + 2 * pages) * take + 3, take: 1 } })).data as { TimesheetId: string }[])[0]
      .TimesheetId;
    await touch(tenant, `delete from timesheets where tenant_id = $1 and id = '${gap}'`);
    for (let skip = 0; skip <= 3 * take; skip += take) await page(skip);
    const total = (await page(3 * take)).totalCount;
    // A timesheet inserted after every key: the pages read ahead before it are answered, and the batches after it
    // start from the positions those batches kept. Every page is read ahead, each has the new totalCount.
    const before = await counts();
    await insert('ffffffff-ffff-4fff-bfff-ffffffffff01');
    for (let n = 4; n < 4 + pages; n++) assert.equal((await page(n * take)).totalCount, total + 1, `totalCount at page ${n}`);
    const after = await counts();
    assert.ok(after.hit_after_inserts > before.hit_after_inserts, `${JSON.stringify(order)}: pages read before the insert were answered`);
    assert.equal(readAheadHits(after) - readAheadHits(before), pages, `${JSON.stringify(order)}: every page read ahead`);
    assert.equal(after.stale, before.stale);
    // One inserted before every key moves every row one place on: each page read ahead is answered as the row
    // before it and its first take - 1 rows, and batches start from their positions moved one row back.
    await insert('00000000-0000-4000-8000-000000000001');
    for (let n = 4 + pages; n < 4 + 2 * pages; n++) assert.equal((await page(n * take)).totalCount, total + 2, `totalCount at page ${n}`);
    const shifted = await counts();
    assert.ok(shifted.hit_shifted > after.hit_shifted, `${JSON.stringify(order)}: pages answered shifted`);
    assert.equal(readAheadHits(shifted) - readAheadHits(after), pages, `${JSON.stringify(order)}: every page read ahead after the insert before them`);
    assert.equal(shifted.stale, after.stale);
    // One inserted inside the next page (where a row was deleted before the read): that page is not the page it was, it is dropped.
    const between = gap;
    await insert(between);
    assert.equal((await page((4 + 2 * pages) * take)).totalCount, total + 3);
    assert.ok((await counts()).stale > shifted.stale, `${JSON.stringify(order)}: dropped`);
    await touch(tenant, `delete from timesheets where tenant_id = $1 and description = 'read-ahead probe'`);
  }
});
