// A paging client's next page seeks past the kept position of the page before it (decision 0039), and
// the answer is still exactly the offset page's: pages read through the seek equal the single-statement
// plan's pages at the same skips, for orders on the key, dates, strings ignoring case and columns with
// nulls in both directions; a write to a table the key statement reads between two pages makes the next
// page skip again (and still answer exactly), while a write to a table it does not read keeps the seek.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
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
