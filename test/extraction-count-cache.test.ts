// totalCount is always exact, and a paging client does not recount unchanged data: the next page of the
// same query and filters answers the kept count (GET /metrics counts hits), while any write to a table
// the count reads — through the API's tenant binding, as the owner, or a bulk COPY with triggers switched
// off as the demo loader does — makes the next page count again, or, when the only writes since are inserts of
// timesheets logged with their ids (decision 0070), add the inserted rows its filters match (the 'delta').
// Writes of another tenant, or to tables the count does not read, keep it.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { sweepChangeLog } from '../src/extraction/pages/count-cache.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { resultCounts } from './extraction-paging.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: TenantCredentials;
let other: TenantCredentials;
let owner: pg.Client;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Counted', { demoData: true, scale: 0.2 });
  other = await server.createTenant('Other', { demoData: true, scale: 0.05 });
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner?.end();
  await server?.close();
});

const counts = () => resultCounts(server, 'atrium_extraction_counts_total', ['hit', 'miss', 'uncached', 'delta']);
type Via = 'hit' | 'miss' | 'uncached' | 'delta';

/** A page of DE-TimeSheets, and how the count was answered meanwhile. */
async function page(skip: number, filters?: unknown[]): Promise<{ totalCount: number; via: Via }> {
  const before = await counts();
  const res = await server.request('POST', '/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute', {
    headers: appHeaders(tenant),
    json: { queryBuilder: { skip, take: 5, fields: ['TimesheetId'], orderBy: [{ field: 'Day', direction: 'desc' }], filters } },
  });
  assert.equal(res.status, 200, res.text);
  const now = await counts();
  const via = (['hit', 'miss', 'uncached', 'delta'] as const).find((k) => now[k] > before[k]);
  assert.ok(via, 'the page counted');
  return { totalCount: res.body.totalCount, via };
}

const live = async (tenantId: string) =>
  Number((await owner.query('select count(*) as n from timesheets where tenant_id = $1 and deleted_on is null', [tenantId])).rows[0].n);

test('the next page answers the kept count until a write to a table it reads; always exact', async () => {
  const n = await live(tenant.tenantId);
  assert.deepEqual(await page(0), { totalCount: n, via: 'miss' });
  assert.deepEqual(await page(5), { totalCount: n, via: 'hit' });
  assert.deepEqual(await page(10), { totalCount: n, via: 'hit' });

  // Another tenant's writes, bound to that tenant as every API write is, leave this tenant's count alone.
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [other.tenantId]);
  await owner.query('update timesheets set status = status where tenant_id = $1', [other.tenantId]);
  await owner.query('commit');
  assert.deepEqual(await page(15), { totalCount: n, via: 'hit' });

  // A table the count does not read (jobs: no filter names a job) changes nothing either.
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
  await owner.query(`update jobs set name = name || ' (renamed)' where tenant_id = $1`, [tenant.tenantId]);
  await owner.query('commit');
  assert.deepEqual(await page(20), { totalCount: n, via: 'hit' });

  // This tenant's write: the next page counts again, and sees it.
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
  await owner.query(
    `update timesheets set deleted_on = now() where tenant_id = $1 and id = (select id from timesheets where tenant_id = $1 and deleted_on is null order by id limit 1)`,
    [tenant.tenantId],
  );
  await owner.query('commit');
  assert.deepEqual(await page(25), { totalCount: n - 1, via: 'miss' });
  assert.deepEqual(await page(30), { totalCount: n - 1, via: 'hit' });

  // A write without a tenant binding (the owner, a migration) counts for every tenant.
  await owner.query(`update timesheets set deleted_on = null where tenant_id = $1 and deleted_on > now() - interval '1 hour'`, [tenant.tenantId]);
  assert.deepEqual(await page(35), { totalCount: n, via: 'miss' });
});

test('a bulk COPY with triggers switched off (as the demo loader loads) still invalidates the count', async () => {
  const n = await live(tenant.tenantId);
  assert.equal((await page(0)).totalCount, n);
  assert.equal((await page(5)).via, 'hit');
  // Copy three of the tenant's timesheets under new ids, through COPY FROM STDIN with session_replication_role = replica.
  await owner.query('begin');
  await owner.query('set local session_replication_role = replica');
  await owner.query(`create temp table copied on commit drop as select * from timesheets where tenant_id = $1 and deleted_on is null limit 3`, [
    tenant.tenantId,
  ]);
  await owner.query('update copied set id = gen_random_uuid()');
  const chunks: Buffer[] = [];
  for await (const c of owner.query(copyTo('copy copied to stdout')) as AsyncIterable<Buffer>) chunks.push(c);
  await pipeline(Readable.from(chunks), owner.query(copyFrom('copy timesheets from stdin')));
  await owner.query('commit');
  // Logged (ENABLE ALWAYS) without a tenant: a change for every tenant, so counted again, not brought up to date.
  assert.deepEqual(await page(10), { totalCount: n + 3, via: 'miss' });
});

test('filtered counts are kept per filter, and a filter on a looked-up name follows writes to that table', async () => {
  const filters = ['Job', 'contains', 'renamed'];
  const first = await page(0, filters);
  assert.equal(first.via, 'miss');
  assert.equal((await page(5, filters)).via, 'hit');
  // jobs is read by this count: renaming one job back changes the answer, and the count follows.
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
  const { rows } = await owner.query(
    `update jobs set name = replace(name, ' (renamed)', '') where tenant_id = $1
        and id = (select job_id from timesheets where tenant_id = $1 and deleted_on is null group by job_id order by count(*) desc limit 1)
      returning (select count(*) from timesheets t where t.tenant_id = $1 and t.job_id = jobs.id and t.deleted_on is null)::int as n`,
    [tenant.tenantId],
  );
  await owner.query('commit');
  assert.deepEqual(await page(10, filters), { totalCount: first.totalCount - rows[0].n, via: 'miss' });
});

test('an insert, a delete and an update moving a row out of the filter: the next page counts exactly, in its key statement', async () => {
  // The kept count's check and, when it fails, the count ride in the offset page's key statement (decision 0062):
  // atrium_changed_since is PARALLEL RESTRICTED so that statement keeps its parallel plan.
  const { rows: fn } = await owner.query(`select proparallel from pg_proc where proname = 'atrium_changed_since'`);
  assert.deepEqual(
    fn.map((r) => r.proparallel),
    ['r'],
  );
  const { rows: span } = await owner.query(`select min(date)::text as lo, max(date)::text as hi from timesheets where tenant_id = $1 and deleted_on is null`, [
    tenant.tenantId,
  ]);
  const filters = ['Day', 'between', [span[0].lo, span[0].hi]];
  const inRange = async () =>
    Number(
      (
        await owner.query('select count(*) as n from timesheets where tenant_id = $1 and deleted_on is null and date between $2 and $3', [
          tenant.tenantId,
          span[0].lo,
          span[0].hi,
        ])
      ).rows[0].n,
    );
  const asTenant = async (text: string) => {
    await owner.query('begin');
    await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
    await owner.query(text, [tenant.tenantId]);
    await owner.query('commit');
  };
  const one = `(select id from timesheets where tenant_id = $1 and deleted_on is null order by id limit 1)`;
  // Skips that are no kept position (each page answers from an offset page, whose key statement counts).
  let skip = 1;
  const next = () => {
    skip += 7;
    return page(skip, filters);
  };
  assert.equal((await next()).totalCount, await inRange());
  assert.equal((await next()).via, 'hit');
  const copied = 'tenant_id, user_id, job_id, work_type_id, date, duration_minutes, is_billable, status, booked_hourly_cost';
  await asTenant(`insert into timesheets (${copied}) select ${copied} from timesheets where tenant_id = $1 and id = ${one}`);
  assert.deepEqual(await next(), { totalCount: await inRange(), via: 'delta' });
  await asTenant(`update timesheets set deleted_on = now() where tenant_id = $1 and id = ${one}`);
  assert.deepEqual(await next(), { totalCount: await inRange(), via: 'miss' });
  await asTenant(`update timesheets set date = date - 1 where tenant_id = $1 and id = (select id from timesheets where tenant_id = $1
      and deleted_on is null and date = (select min(date) from timesheets where tenant_id = $1 and deleted_on is null) limit 1)`);
  const moved = await next();
  assert.deepEqual(moved, { totalCount: await inRange(), via: 'miss' });
  assert.deepEqual(await next(), { totalCount: moved.totalCount, via: 'hit' });
});

test('inserts of timesheets add to the kept count the rows its filter matches, committed or not when it was counted', async () => {
  // Decision 0070: a kept count whose only changes since are inserts into timesheets logged with their ids is brought
  // up to date by counting those rows alone, through the same filters, in the snapshot of the statement that asks.
  const { rows: span } = await owner.query(
    `select min(date)::text as lo, (min(date) + (max(date) - min(date)) / 2)::text as mid, (max(date) + 30)::text as past
       from timesheets where tenant_id = $1 and deleted_on is null`,
    [tenant.tenantId],
  );
  const { lo, mid, past } = span[0];
  const filters = ['Day', 'between', [lo, mid]];
  const inRange = async () =>
    Number(
      (
        await owner.query('select count(*) as n from timesheets where tenant_id = $1 and deleted_on is null and date between $2 and $3', [
          tenant.tenantId,
          lo,
          mid,
        ])
      ).rows[0].n,
    );
  const copied = 'tenant_id, user_id, job_id, work_type_id, duration_minutes, is_billable, status, booked_hourly_cost';
  const one = `(select id from timesheets where tenant_id = $1 and deleted_on is null order by id limit 1)`;
  /** Copies of one timesheet dated `dates` (one statement), as the tenant's write on `client`; committed unless `open`. */
  const insert = async (client: pg.Client, dates: string[], open = false) => {
    await client.query('begin');
    await client.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
    await client.query(
      `insert into timesheets (${copied}, date) select ${copied}, d::date from timesheets, unnest($2::text[]) as d where tenant_id = $1 and id = ${one}`,
      [tenant.tenantId, dates],
    );
    if (!open) await client.query('commit');
  };
  let skip = 2;
  const next = () => {
    skip += 7;
    return page(skip, filters);
  };
  const n0 = await inRange();
  assert.deepEqual(await next(), { totalCount: n0, via: 'miss' });

  // One statement inserts a row the filter matches and one it does not: the kept count gains one, not two.
  await insert(owner, [lo, past]);
  assert.deepEqual(await next(), { totalCount: n0 + 1, via: 'delta' });
  assert.equal(await inRange(), n0 + 1);
  assert.deepEqual(await next(), { totalCount: n0 + 1, via: 'hit' });

  // A count taken while an insert was in flight (uncommitted in its snapshot) gains that row once it commits.
  const writer = new pg.Client({ connectionString: server.databaseUrl });
  await writer.connect();
  try {
    await insert(writer, [lo], true);
    assert.deepEqual(await next(), { totalCount: n0 + 1, via: 'hit' }, 'an uncommitted insert is not counted');
    // An update since the kept count: the next page counts again, in a snapshot where the insert is still in flight.
    await owner.query('begin');
    await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
    await owner.query(`update timesheets set status = status where tenant_id = $1 and id = ${one}`, [tenant.tenantId]);
    await owner.query('commit');
    assert.deepEqual(await next(), { totalCount: n0 + 1, via: 'miss' });
    await writer.query('commit');
  } finally {
    await writer.end();
  }
  assert.deepEqual(await next(), { totalCount: n0 + 2, via: 'delta' });
  assert.equal(await inRange(), n0 + 2);

  // A count answered without a key statement (take 0) takes the delta in a statement of its own.
  await insert(owner, [mid, mid]);
  const before = await counts();
  const res = await server.request('POST', '/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute', {
    headers: appHeaders(tenant),
    json: { queryBuilder: { skip: 0, take: 0, fields: ['TimesheetId'], orderBy: [{ field: 'Day', direction: 'desc' }], filters } },
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.totalCount, n0 + 4);
  assert.equal((await counts()).delta, before.delta + 1);

  // An insert, then a delete of what it inserted: not only inserts since, so the page counts again.
  await insert(owner, [lo]);
  await owner.query('begin');
  await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
  await owner.query(
    `delete from timesheets where tenant_id = $1 and id = (select id from timesheets where tenant_id = $1 order by created_on_utc desc, id limit 1)`,
    [tenant.tenantId],
  );
  await owner.query('commit');
  assert.deepEqual(await next(), { totalCount: await inRange(), via: 'miss' });

  // A statement inserting more rows than the log keeps ids for: counted again.
  await insert(
    owner,
    Array.from({ length: 1001 }, (_, i) => (i % 2 ? lo : past)),
  );
  assert.deepEqual(await next(), { totalCount: await inRange(), via: 'miss' });
  assert.deepEqual(await next(), { totalCount: await inRange(), via: 'hit' });
});

test('the maintenance sweep deletes change rows only below a horizon older than any kept count', async () => {
  const db = new DatabaseHandle(server.databaseUrl);
  try {
    const rows = async () => Number((await owner.query('select count(*) as n from extraction_changes')).rows[0].n);
    await owner.query('delete from extraction_change_horizon');
    const before = await rows();
    assert.ok(before > 0, 'the writes above were logged');
    // The first sweep only takes a horizon; a sweep within COUNT_TTL_MS of it deletes nothing.
    assert.equal(await sweepChangeLog(db), 0);
    assert.equal(await sweepChangeLog(db), 0);
    assert.equal(await rows(), before);
    // Once the horizon is older than a kept count can be, the rows below it go; newer ones stay.
    await owner.query(`update timesheets set status = status where tenant_id = $1 and id = (select id from timesheets where tenant_id = $1 limit 1)`, [
      tenant.tenantId,
    ]);
    await owner.query(`update extraction_change_horizon set taken_on_utc = now() - interval '1 hour'`);
    // The horizon is the cluster's oldest running transaction: another test file's open transaction can hold
    // it below some of the rows above, and those stay.
    const below = Number(
      (await owner.query('select count(*) as n from extraction_changes where xid < (select oldest_xid from extraction_change_horizon)')).rows[0].n,
    );
    assert.ok(below > 0, 'the horizon has rows below it');
    assert.equal(await sweepChangeLog(db), below);
    assert.equal(await rows(), before - below + 1);
    // And counts stay exact: the next page after a further write counts again.
    const n = await live(tenant.tenantId);
    assert.equal((await page(0)).totalCount, n);
  } finally {
    await db.close();
  }
});
