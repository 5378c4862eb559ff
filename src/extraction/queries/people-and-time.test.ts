// The people-and-time named-query definitions against a demo tenant: exact catalogue columns and
// types, real rows, parameter and key columns, and values that are computed from the data.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { startTestServer, type TestServer } from '../../../test/helpers.ts';
import { CATALOGUE, type ColumnType, type NamedQueryDefinition, type QueryContext } from '../definition.ts';
import { NAMED_QUERIES } from './index.ts';
import { peopleAndTime } from './people-and-time.ts';

const MINE = [
  'DE-Leaves',
  'DE-Attendances',
  'DE-Cities',
  'DE-Companies',
  'DE-CompaniesAdditionalInformation',
  'DE-Countries',
  'DE-Currencies',
  'DE-Departments',
  'DE-Divisions',
  'DE-Employees',
  'DE-Holidays',
  'DE-LeavesCount',
  'DE-LeavesDeleted',
  'DE-LeavesDeletedCount',
  'DE-TimeSheets',
  'DE-TimeSheetsCount',
  'DE-TimeSheetsDeleted',
  'DE-TimeSheetsDeletedCount',
  'DE-Typologies',
  'DE-TypologyGroups',
  'DE-TypologyGroupsCompanies',
  'DE-TypologyGroupsDepartments',
  'DE-UserCosts',
  'DE-UserTypes',
  'DE-Users',
  'DE-UsersAdditionalInformation',
  'DE-UsersToBlock',
  'DE-UsersToUnblock',
  'DE-WorkTypes',
  'DE-Workloads',
  'DE-Taxes',
  'DE-Assignments',
  'DE-Comments',
  'DE-CommentsReplies',
  'DE-Descriptions',
  'DE-History',
  'DE-BusinessObjectTypes',
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const fits: Record<ColumnType, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  guid: (v) => typeof v === 'string' && UUID.test(v),
  decimal: (v) => typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v),
  integer: (v) => typeof v === 'number' && Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  date: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v),
  datetime: (v) => v instanceof Date && !Number.isNaN(v.getTime()),
  object: (v) => typeof v === 'object',
};

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let owner: pg.Client;

const entry = (name: string) => {
  const e = CATALOGUE.find((q) => q.name === name);
  assert.ok(e, `${name} is in the catalogue`);
  return e;
};
const def = (name: string): NamedQueryDefinition => {
  const d = peopleAndTime.find((q) => q.name === name);
  assert.ok(d, `${name} is defined`);
  return d;
};
/** The output column names a source must produce, in order. */
const expectedColumns = (name: string): string[] => {
  const cols = entry(name)
    .columns.map((c) => c.name)
    .filter((c) => c !== '*');
  const hidden = (def(name).hiddenColumns ?? []).map((c) => c.name);
  return [...cols, ...(def(name).userFields ? ['__fields'] : []), ...hidden];
};
async function rows(name: string, userId: string | null = null, limit = 200): Promise<Record<string, unknown>[]> {
  const ctx: QueryContext = { tenantId: tenant.tenantId, userId };
  const source = def(name).source;
  assert.ok(source, `${name} has a source`);
  const result = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) =>
    sql<Record<string, unknown>>`select * from (${source(ctx)}) q limit ${limit}`.execute(trx),
  );
  return result.rows;
}
const num = (v: unknown): number => Number(v);

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('People Time Agency', { demoData: true, scale: 0.05 });
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner.end();
  await server.close();
});

describe('people-and-time definitions: shape', () => {
  test('the file defines exactly its 37 queries, each in the catalogue and in NAMED_QUERIES', () => {
    assert.deepEqual(peopleAndTime.map((d) => d.name).sort(), [...MINE].sort());
    for (const d of peopleAndTime) {
      entry(d.name);
      assert.equal(NAMED_QUERIES.filter((q) => q.name === d.name).length, 1, `${d.name} once in NAMED_QUERIES`);
    }
  });

  test('count definitions count a defined query and map their parameters to its columns', () => {
    for (const d of peopleAndTime.filter((q) => q.countOf)) {
      assert.equal(d.source, undefined, d.name);
      assert.deepEqual(d.key, [], d.name);
      const counted = NAMED_QUERIES.find((q) => q.name === d.countOf);
      assert.ok(counted?.source, `${d.name} counts ${d.countOf}, which has a source`);
      const cols = expectedColumns(counted.name);
      for (const p of entry(d.name).parameters) {
        if (d.ignoredParameters?.includes(p)) continue;
        assert.ok(cols.includes(d.parameters?.[p] ?? '?'), `${d.name} ${p} -> ${d.parameters?.[p]}`);
      }
    }
  });

  test('every catalogue parameter is mapped to an output column; keys name output columns', () => {
    for (const d of peopleAndTime.filter((q) => q.source)) {
      const cols = expectedColumns(d.name);
      for (const [p, col] of Object.entries(d.parameters ?? {})) {
        assert.ok(entry(d.name).parameters.includes(p as never), `${d.name}: ${p} is a catalogue parameter`);
        assert.ok(cols.includes(col), `${d.name}: ${p} -> ${col} is an output column`);
      }
      const unmapped = entry(d.name).parameters.filter((p) => !d.parameters?.[p] && !d.ignoredParameters?.includes(p));
      assert.deepEqual(unmapped, [], `${d.name}: unmapped parameters`);
      assert.ok(d.key.length > 0, `${d.name} has a key`);
      for (const k of d.key) assert.ok(cols.includes(k), `${d.name}: key ${k}`);
    }
  });
});

describe('people-and-time definitions: rows from the demo tenant', () => {
  test('every source returns rows with exactly the catalogue columns, typed as the catalogue says, with and without a user', async () => {
    // The AD blocker's queries answer only users with an Active Directory account whose access ended or came
    // back; the demo tenant has none, and test/ad-blocker.test.ts checks their rows.
    const AD_BLOCKER = new Set(['DE-UsersToBlock', 'DE-UsersToUnblock']);
    for (const d of peopleAndTime.filter((q) => q.source && !AD_BLOCKER.has(q.name))) {
      const types = new Map([...entry(d.name).columns, ...(d.hiddenColumns ?? [])].map((c) => [c.name, c.type]));
      for (const userId of [tenant.userId, null]) {
        const got = await rows(d.name, userId);
        assert.ok(got.length > 0, `${d.name} returns rows`);
        for (const row of got) {
          assert.deepEqual(Object.keys(row), expectedColumns(d.name), `${d.name} columns`);
          for (const [col, v] of Object.entries(row)) {
            if (v === null) continue;
            if (col === '__fields') assert.equal(typeof v, 'object', d.name);
            else assert.ok(fits[types.get(col)!](v), `${d.name}.${col} = ${JSON.stringify(v)} is a ${types.get(col)}`);
          }
        }
        // The key identifies a row.
        const keys = got.map((r) => JSON.stringify(d.key.map((k) => r[k])));
        assert.equal(new Set(keys).size, keys.length, `${d.name}: key is unique`);
      }
    }
  });

  test('DE-TimeSheets: one row per live timesheet; Hours = minutes/60; TotalUserCost = Hours x HourlyUserCost; statuses', async () => {
    const all = await rows('DE-TimeSheets', null, 1_000_000);
    const live = await owner.query<{ id: string; duration_minutes: number }>(
      'select id, duration_minutes from timesheets where tenant_id = $1 and deleted_on is null',
      [tenant.tenantId],
    );
    assert.equal(all.length, live.rowCount);
    const minutes = new Map(live.rows.map((r) => [r.id, r.duration_minutes]));
    const statuses = new Set<unknown>();
    for (const r of all) {
      assert.equal(num(r.Hours), minutes.get(r.TimesheetId as string)! / 60);
      assert.ok(r.HourlyUserCost !== null, 'every demo timesheet has a covering cost');
      assert.ok(Math.abs(num(r.TotalUserCost) - num(r.Hours) * num(r.HourlyUserCost)) < 0.0001);
      assert.ok(r.Approvers, 'approvers from the job team or the responsible');
      statuses.add(r.Status);
    }
    for (const s of statuses) assert.ok(['Draft', 'New', 'Approved', 'Rejected', 'Canceled'].includes(s as string));
    assert.ok(statuses.has('Approved') && statuses.has('New'));
    // Deleted ones are only in DE-TimeSheetsDeleted, with their deletion time.
    const deleted = await rows('DE-TimeSheetsDeleted', null, 100_000);
    const tomb = await owner.query('select id, deleted_on from timesheets where tenant_id = $1 and deleted_on is not null', [tenant.tenantId]);
    assert.deepEqual(deleted.map((r) => r.TimesheetId).sort(), tomb.rows.map((r) => r.id).sort());
    assert.deepEqual(new Set(all.map((r) => r.TimesheetId)).size, all.length);
  });

  test('DE-TimeSheets: company, department and cost are the ones stored at booking; typology is the user’s current one', async () => {
    const [ts] = (
      await owner.query(
        `select t.id, t.user_id, t.date::text as date, t.booked_hourly_cost, t.booked_department_id, t.booked_company_id, u.typology_id, u.department_id
           from timesheets t join users u on u.tenant_id = t.tenant_id and u.id = t.user_id
          where t.tenant_id = $1 and t.deleted_on is null order by t.date limit 1`,
        [tenant.tenantId],
      )
    ).rows;
    const other = (await owner.query('select id, name from typologies where tenant_id = $1 and id <> $2 limit 1', [tenant.tenantId, ts.typology_id])).rows[0];
    const userCompany = (
      await owner.query(
        'select company_id, (select currency_id from companies c where c.tenant_id = u.tenant_id and c.id = u.company_id) as currency_id from users u where tenant_id = $1 and id = $2',
        [tenant.tenantId, ts.user_id],
      )
    ).rows[0];
    // After booking: a retroactive cost for that day, a new typology and another department for the user.
    await owner.query(
      `insert into user_costs (tenant_id, user_id, company_id, currency_id, hourly_value, start_date, end_date) values ($1, $2, $3, $4, 123.45, $5, $5)`,
      [tenant.tenantId, ts.user_id, userCompany.company_id, userCompany.currency_id, ts.date],
    );
    const otherDept = (await owner.query('select id from departments where tenant_id = $1 and id <> $2 limit 1', [tenant.tenantId, ts.booked_department_id]))
      .rows[0];
    await owner.query('update users set typology_id = $3, department_id = $4 where tenant_id = $1 and id = $2', [
      tenant.tenantId,
      ts.user_id,
      other.id,
      otherDept.id,
    ]);
    try {
      const all = await rows('DE-TimeSheets', null, 1_000_000);
      const row = all.find((r) => r.TimesheetId === ts.id)!;
      assert.equal(row.TypologyId, other.id, 'the current typology');
      assert.equal(row.Typology, other.name);
      assert.equal(row.HourlyUserCost, ts.booked_hourly_cost, 'the cost stored at booking, not the retroactive one');
      assert.notEqual(row.HourlyUserCost, '123.4500');
      assert.equal(num(row.TotalUserCost), Math.round(num(row.Hours) * num(ts.booked_hourly_cost) * 10000) / 10000);
      assert.equal(row.UserDepartmentId, ts.booked_department_id, 'the department at booking');
      assert.equal(row.CompanyId, ts.booked_company_id, 'the company the time was booked in');
    } finally {
      await owner.query('update users set typology_id = $3, department_id = $4 where tenant_id = $1 and id = $2', [
        tenant.tenantId,
        ts.user_id,
        ts.typology_id,
        ts.department_id,
      ]);
      await owner.query('delete from user_costs where tenant_id = $1 and hourly_value = 123.45', [tenant.tenantId]);
    }
  });

  test('DE-TimeSheets: a count over a date range reads no lookup table it does not need (joins are removable; only the period joins stay)', async () => {
    const source = def('DE-TimeSheets').source!({ tenantId: tenant.tenantId, userId: null });
    const plan = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) =>
      sql<{
        'QUERY PLAN': string;
      }>`explain select count(*) from (${source}) q where q."Day" between '2025-03-01' and '2025-03-31' and q."User" ilike ${'%a%'}`.execute(trx),
    );
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    for (const table of ['assignments', 'teams', 'jobs', 'projects', 'companies', 'work_types']) {
      assert.ok(!new RegExp(`\\b${table}\\b`).test(text), `plan does not read ${table}:\n${text}`);
    }
    assert.match(text, /\busers\b/);
  });

  test('DE-Leaves: requested leaves only; Hours by the leave type; approvers who approved; HRApprovers null as on the platform', async () => {
    const all = await rows('DE-Leaves', null, 100_000);
    const db = await owner.query(
      `select l.id, l.total_minutes, l.is_half_day, lt.is_hourly, u.leave_day_hours,
              (select string_agg(coalesce(au.name, au.user_name), ', ' order by coalesce(au.name, au.user_name)) from approvals a
                 join users au on au.tenant_id = a.tenant_id and au.id = a.approver_id
                where a.tenant_id = l.tenant_id and a.document_id = l.id and a.role = 'Approver' and a.status = 'Approved') as approved
         from leaves l join leave_types lt on lt.tenant_id = l.tenant_id and lt.id = l.leave_type_id
         join users u on u.tenant_id = l.tenant_id and u.id = l.user_id
        where l.tenant_id = $1 and l.deleted_on is null and l.requested_approval`,
      [tenant.tenantId],
    );
    assert.equal(all.length, db.rowCount);
    const drafts = await owner.query('select count(*)::int as n from leaves where tenant_id = $1 and deleted_on is null and not requested_approval', [
      tenant.tenantId,
    ]);
    assert.ok(drafts.rows[0].n > 0, 'the demo has leaves not yet requested, which are left out');
    const byId = new Map(db.rows.map((r) => [r.id, r]));
    for (const r of all) {
      const d = byId.get(r.LeaveId)!;
      const hours = d.is_hourly ? d.total_minutes / 60 : d.leave_day_hours === null ? null : num(d.leave_day_hours) / (d.is_half_day ? 2 : 1);
      assert.equal(r.Hours, hours === null ? null : Math.round(hours));
      assert.equal(r.Approvers, d.approved);
      assert.equal(r.HRApprovers, null);
      assert.notEqual(r.Status, 'Canceled');
      assert.equal((r.Day as Date).getUTCHours(), 0);
    }
    assert.ok(all.some((r) => r.Approvers !== null));
    const deleted = await rows('DE-LeavesDeleted', null, 100_000);
    assert.ok(deleted.every((r) => !byId.has(r.LeaveId)));
  });

  test('DE-Users: country from the city, client membership, hourly cost in force today', async () => {
    const all = await rows('DE-Users', null, 10_000);
    const db = await owner.query(
      `select u.id, ci.country_id, (select count(*)::int from commercial_client_users x where x.tenant_id = u.tenant_id and x.user_id = u.id) as clients
         from users u left join cities ci on ci.tenant_id = u.tenant_id and ci.id = u.city_id where u.tenant_id = $1`,
      [tenant.tenantId],
    );
    const byId = new Map(db.rows.map((r) => [r.id, r]));
    for (const r of all) {
      const d = byId.get(r.UserId)!;
      if (d.country_id) assert.equal(r.CountryId, d.country_id);
      assert.equal(r.IsClient, d.clients > 0);
      assert.equal(r.ClientIds === null ? 0 : (r.ClientIds as string).split(',').length, d.clients);
    }
    assert.ok(all.some((r) => r.IsClient) && all.some((r) => r.HourlyValue !== null));
  });

  test('*AdditionalInformation: fields in order with catalogue types, values pivoted per document', async () => {
    const ctx = { tenantId: tenant.tenantId, userId: null };
    const fields = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) => def('DE-UsersAdditionalInformation').userFields!.fields(ctx).execute(trx));
    assert.deepEqual(fields.rows, [
      { name: 'BadgeNumber', type: 'string' },
      { name: 'SeniorityYears', type: 'decimal' },
      { name: 'RemoteWorker', type: 'boolean' },
    ]);
    const users = await rows('DE-UsersAdditionalInformation');
    assert.ok(users.some((r) => typeof (r.__fields as Record<string, unknown>).BadgeNumber === 'string'));
    const companies = await rows('DE-CompaniesAdditionalInformation');
    const demo = companies.filter((r) => Object.keys(r.__fields as object).length > 0);
    assert.ok(demo.length > 0);
    for (const r of demo) assert.match((r.__fields as Record<string, string>).FoundedOn, /^\d{4}-\d{2}-\d{2}$/);
  });

  test('collaboration: HasReplies, LatestVersion/IsLastVersion, workloads in hours, attendance hours and minutes', async () => {
    const comments = await rows('DE-Comments', null, 100_000);
    const replies = await rows('DE-CommentsReplies', null, 100_000);
    const withReplies = new Set(replies.map((r) => r.CommentsId));
    for (const c of comments) assert.equal(c.HasReplies, withReplies.has(c.CommentsId));
    assert.ok(comments.some((c) => c.HasReplies) && comments.some((c) => !c.HasReplies));

    const descriptions = await rows('DE-Descriptions', null, 100_000);
    const latest = new Map<unknown, number>();
    for (const d of descriptions) latest.set(d.DocumentId, Math.max(latest.get(d.DocumentId) ?? 0, d.Version as number));
    for (const d of descriptions) {
      assert.equal(d.LatestVersion, latest.get(d.DocumentId));
      assert.equal(d.IsLastVersion, d.Version === d.LatestVersion);
    }
    assert.ok(descriptions.some((d) => !d.IsLastVersion));

    const workloads = await rows('DE-Workloads', null, 100_000);
    const wl = await owner.query('select id, workload_minutes from workloads where tenant_id = $1', [tenant.tenantId]);
    const wlMinutes = new Map(wl.rows.map((r) => [r.id, r.workload_minutes]));
    for (const w of workloads) assert.equal(num(w.Workload), wlMinutes.get(w.WorkloadId) / 60);

    const attendances = await rows('DE-Attendances', null, 100_000);
    const att = await owner.query('select user_id, day::text as day, worked_minutes from attendances where tenant_id = $1', [tenant.tenantId]);
    const worked = new Map(att.rows.map((r) => [`${r.user_id}:${r.day}`, r.worked_minutes]));
    for (const a of attendances) assert.equal((a.Hours as number) * 60 + (a.Minutes as number), worked.get(`${a.UserId}:${a.Day}`));

    const assignments = await rows('DE-Assignments', null, 100_000);
    assert.ok(
      assignments.some((a) => a.DocumentType === 'Deliverable' && a.DocumentSubType !== null),
      'jobs carry their sub-type',
    );
  });
});
