// A paging client's next page seeks past the kept position of the page before it (decision 0039), and
// the answer is still exactly the offset page's: pages read through the seek equal the single-statement
// plan's pages at the same skips, for orders on the key, dates, strings ignoring case and columns with
// nulls in both directions; a write to a table the key statement reads between two pages makes the next
// page skip again (and still answer exactly), while a write to a table it does not read keeps the seek.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { readAheadSettled } from '../src/extraction/pages/read-ahead.ts';
import type { ExecuteBody } from '../src/extraction/query/query-builder.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { offsetPage as offset, httpPage as paged, resultCounts, touch as write } from './extraction-paging.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: TenantCredentials;
let db: DatabaseHandle;
let owner: pg.Client;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Sought', { demoData: true, scale: 0.05 });
  db = new DatabaseHandle(server.databaseUrl);
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner?.end();
  await db?.close();
  await server?.close();
});

const seeks = () => resultCounts(server, 'atrium_extraction_seeks_total', ['hit', 'stale', 'miss']);
const readAhead = () => resultCounts(server, 'atrium_extraction_read_ahead_pages_total', ['hit']);
const httpPage = (body: ExecuteBody) => paged(server, tenant, body);
const offsetPage = (body: ExecuteBody) => offset(db, tenant, body);
const touch = (sqlText: string) => write(owner, tenant, sqlText);

const ORDERS: ExecuteBody['queryBuilder'][] = [
  // The loader's pattern: the key's order.
  {},
  { orderBy: [{ field: 'Day', direction: 'desc' }] },
  // Strings ignoring case, then a decimal descending.
  { orderBy: [{ field: 'User' }, { field: 'Hours', direction: 'desc' }] },
  // Columns with nulls (no product, no cost), in both directions, on a looked-up column (the full keys source).
  { orderBy: [{ field: 'ProductCode', direction: 'desc' }, { field: 'HourlyUserCost' }] },
  { orderBy: [{ field: 'ProductCode' }, { field: 'Day', direction: 'desc' }], filters: ['Hours', '>', 1] },
];

test('pages read through kept seek positions equal the offset pages, for every order', async () => {
  for (const order of ORDERS) {
    // About five pages, the last one short.
    const take = Math.ceil((await httpPage({ queryBuilder: { ...order, take: 0 } })).totalCount / 4.5);
    const before = await seeks();
    const beforeAhead = await readAhead();
    let pages = 0;
    for (let skip = 0; ; skip += take) {
      const body = { queryBuilder: { ...order, skip, take } };
      const sought = await httpPage(body);
      assert.deepEqual(sought, await offsetPage(body), `${JSON.stringify(body)}`);
      pages++;
      if (sought.data.length < take) break;
    }
    assert.ok(pages > 3, `${JSON.stringify(order)}: ${pages} pages`);
    const now = await seeks();
    // Every page after the first sought past the one before it, or was read ahead (decision 0041) by a batch that did.
    const ahead = (await readAhead()).hit - beforeAhead.hit;
    assert.equal(now.hit - before.hit + ahead, pages - 1, `${JSON.stringify(order)} sought`);
    assert.equal(now.stale + now.miss - before.stale - before.miss, 0);
  }
});

test('a write to a table the page reads between two pages makes the next page skip again, exactly', async () => {
  const order = { orderBy: [{ field: 'Day', direction: 'desc' }] };
  const first = await httpPage({ queryBuilder: { ...order, skip: 0, take: 50 } });
  // The newest timesheet (on the first page) is deleted: every later row moves up one place.
  await touch(`update timesheets set deleted_on = now() where tenant_id = $1
      and id = (select id from timesheets where tenant_id = $1 and deleted_on is null order by date desc, id limit 1)`);
  const before = await seeks();
  const next = await httpPage({ queryBuilder: { ...order, skip: 50, take: 50 } });
  assert.deepEqual(await seeks(), { ...before, stale: before.stale + 1 });
  assert.deepEqual(next, await offsetPage({ queryBuilder: { ...order, skip: 50, take: 50 } }));
  assert.equal(next.totalCount, first.totalCount - 1);
  // The row that moved up is on the second page's first place, not lost between the pages.
  assert.deepEqual(next.data[0], (await offsetPage({ queryBuilder: { ...order, skip: 49, take: 2 } })).data[1]);
  // The page just read kept its own position, in a snapshot that saw the write: the page after it seeks.
  const again = await seeks();
  assert.deepEqual(await httpPage({ queryBuilder: { ...order, skip: 100, take: 50 } }), await offsetPage({ queryBuilder: { ...order, skip: 100, take: 50 } }));
  assert.deepEqual(await seeks(), { ...again, hit: again.hit + 1 });
});

test('a write to a table the key statement does not read keeps the seek; a page at another skip does not seek', async () => {
  const order = { orderBy: [{ field: 'Day', direction: 'desc' }] };
  await httpPage({ queryBuilder: { ...order, skip: 0, take: 40 } });
  // Ordered by the timesheet's own day, the key statement reads the timesheets alone.
  await touch(`update jobs set name = name || ' (renamed)' where tenant_id = $1`);
  const before = await seeks();
  const body = { queryBuilder: { ...order, skip: 40, take: 40 } };
  assert.deepEqual(await httpPage(body), await offsetPage(body));
  assert.deepEqual(await seeks(), { ...before, hit: before.hit + 1 });
  // No page ended at 41: the offset page.
  const other = { queryBuilder: { ...order, skip: 41, take: 40 } };
  assert.deepEqual(await httpPage(other), await offsetPage(other));
  assert.deepEqual(await seeks(), { ...before, hit: before.hit + 1, miss: before.miss + 1 });
});

/** Copies of timesheets with the given ids (the same order values), each with the id beside it. */
const copies = (pairs: [original: string, id: string][]) =>
  `insert into timesheets (tenant_id, id, user_id, job_id, work_type_id, date, duration_minutes, is_billable, status, requested_approval,
      description, booked_company_id, booked_department_id, booked_typology_id, booked_hourly_cost)
   select t.tenant_id, c.id, t.user_id, t.job_id, t.work_type_id, t.date, t.duration_minutes, t.is_billable, t.status, t.requested_approval,
      'seek test copy', t.booked_company_id, t.booked_department_id, t.booked_typology_id, t.booked_hourly_cost
     from (values ${pairs.map(([o, id]) => `('${o}'::uuid, '${id}'::uuid)`).join(', ')}) as c(original, id)
     join timesheets t on t.tenant_id = $1 and t.id = c.original`;
const lowId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

test('rows inserted before a stale position: the next page is found from the position and its rank now, exactly the offset page', async () => {
  const relocations = () => resultCounts(server, 'atrium_extraction_seeks_total', ['hit', 'stale', 'miss', 'relocated', 'delta']);
  const shifted = async () => (await resultCounts(server, 'atrium_extraction_read_ahead_pages_total', ['hit_shifted'])).hit_shifted;
  for (const order of ORDERS) {
    const take = 30;
    const first = (await httpPage({ queryBuilder: { ...order, skip: 0, take } })) as { data: { TimesheetId: string }[] };
    await httpPage({ queryBuilder: { ...order, skip: take, take } });
    // Copies of three rows of the first page, with ids lower than any (the key breaks their ties with the originals
    // first): three rows before the kept position of the third page, in every order. Inserted once the batch read
    // ahead from that position has read: one that reads after the insert finds the position again itself.
    await readAheadSettled(server.runtime.ctx.db);
    await touch(copies([1, 2, 3].map((i) => [first.data[i].TimesheetId, lowId(i)])));
    const before = await relocations();
    const shiftedBefore = await shifted();
    for (const skip of [2 * take, 3 * take]) {
      const body = { queryBuilder: { ...order, skip, take } };
      assert.deepEqual(await httpPage(body), await offsetPage(body), `${JSON.stringify(body)}`);
    }
    const now = await relocations();
    if (!order?.orderBy) {
      // In the key's order both pages were read ahead before the insert, and are answered moved by the three rows
      // (decision 0083): no seek.
      assert.equal((await shifted()) - shiftedBefore, 2, `${JSON.stringify(order)}: answered moved`);
      assert.equal(now.relocated - before.relocated, 0, `${JSON.stringify(order)}: answered moved`);
    } else {
      assert.equal(now.relocated - before.relocated, 1, `${JSON.stringify(order)}: found from the rank`);
      // Only inserts into timesheets since: the rank was brought up to date from them, not counted (decision 0077).
      assert.equal(now.delta - before.delta, 1, `${JSON.stringify(order)}: ranked from the inserts`);
      assert.equal(now.stale - before.stale, 1);
    }
    // More rows inserted before the position than a page holds: the offset page.
    await touch(copies(Array.from({ length: take + 1 }, (_, i) => [first.data[1].TimesheetId, lowId(100 + i)])));
    const more = await relocations();
    for (const skip of [4 * take, 5 * take]) {
      const body = { queryBuilder: { ...order, skip, take } };
      assert.deepEqual(await httpPage(body), await offsetPage(body), `${JSON.stringify(body)}`);
    }
    const last = await relocations();
    assert.equal(last.relocated - more.relocated, 0, `${JSON.stringify(order)}: skipped`);
    assert.equal(last.delta - more.delta, 0);
    assert.ok(last.stale - more.stale >= 1);
    await touch(`delete from timesheets where tenant_id = $1 and description = 'seek test copy'`);
  }
});
