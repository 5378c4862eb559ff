// Named queries over time: timesheets, leaves, attendances and workloads, their counts and their
// tombstones (deleted rows). DE-TimeSheets runs on a million rows: see the note on its source.
import type { RawBuilder } from 'kysely';
import { type NamedQueryDefinition, type QueryContext, sql } from '../../definition.ts';
import { userName, utcMidnight } from '../fragments.ts';

/**
 * A leave's Status as the platform derives it: New, Approved or Rejected (a requested leave is never a
 * draft here); the platform has no Canceled status, so a canceled leave's Status is null.
 */
const LEAVE_STATUS = sql`(case l.status when 'Draft' then 'New' when 'Canceled' then null else l.status end)`;

/** A *Deleted query: the id and deletion time of each tombstoned row of `table`. */
const tombstones =
  (table: 'timesheets' | 'leaves', idColumn: string) =>
  (ctx: QueryContext): RawBuilder<unknown> =>
    sql`
      select x.id as ${sql.id(idColumn)}, x.deleted_on as "ModifiedOnUtc"
        from ${sql.table(table)} x
       where x.tenant_id = ${ctx.tenantId} and x.deleted_on is not null`;

/**
 * LEFT JOIN `ap` with `ap.names`: the names of the Approver team of the timesheet's job, comma-joined.
 * A scan groups every job's approvers once and hash-joins them; the keys-first page asks per row (an
 * aggregate without GROUP BY: one row, so the key and count phases drop it).
 */
const jobApprovers = (ctx: QueryContext): RawBuilder<unknown> => {
  const names = sql`string_agg(${userName('au')}, ', ' order by ${userName('au')})`;
  const approvers = sql`from assignments a
        join teams tm on tm.tenant_id = a.tenant_id and tm.id = a.team_id
        join users au on au.tenant_id = a.tenant_id and au.id = a.user_id
       where tm.name = 'Approver'`;
  if (ctx.plan === 'keys')
    return sql`left join lateral (select ${names} as names ${approvers} and a.tenant_id = t.tenant_id and a.document_id = t.job_id) ap on true`;
  return sql`left join (select a.document_id, ${names} as names ${approvers} and a.tenant_id = ${ctx.tenantId}
                    group by a.document_id) ap on ap.document_id = t.job_id`;
};

/** A timesheet's hours as the platform gives them: minutes / 60, to 6 decimals (T-SQL's precision). */
const HOURS = sql`round(t.duration_minutes / 60.0, 6)`;

/** DE-TimeSheets' columns that are the timesheet's own, as its source computes them. */
const OWN_COLUMNS = ['TimesheetId', 'UserId', 'Day', 'Hours', 'JobId', 'Status', 'ModifiedOn', 'RequestedApproval'];
const ownColumns = sql`t.id as "TimesheetId", t.user_id as "UserId", t.date as "Day", ${HOURS} as "Hours",
  t.job_id as "JobId", t.status as "Status", t.modified_on_utc as "ModifiedOn",
  t.requested_approval as "RequestedApproval"`;

export const time: NamedQueryDefinition[] = [
  {
    name: 'DE-TimeSheets',
    key: ['TimesheetId'],
    // A timesheet saved adds its row to kept counts whose filters it matches (decision 0070).
    keyTable: 'timesheets',
    parameters: { ModifiedFrom: 'ModifiedOn', ProjectNumber: 'ProjectNumber', ProjectId: 'ProjectId', From: 'Day', To: 'Day' },
    // The timesheet's own columns, then with its job's name and number (the common filter): for keys and
    // counts that read nothing else.
    narrow: [
      { columns: OWN_COLUMNS, source: (ctx) => sql`select ${ownColumns} from timesheets t where t.tenant_id = ${ctx.tenantId} and t.deleted_on is null` },
      {
        columns: [...OWN_COLUMNS, 'Job', 'JobNumber'],
        source: (ctx) => sql`
          select ${ownColumns}, j.name as "Job", j.number as "JobNumber"
            from timesheets t
            left join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
           where t.tenant_id = ${ctx.tenantId} and t.deleted_on is null`,
      },
    ],
    // As the platform's statement: Company, UserDepartment and HourlyUserCost are what was stored when the
    // time was booked (the booked_* snapshot); Typology is the user's current one; Brand is the product's;
    // IsBillable is false without a client; Hours are unrounded (6 decimals, as T-SQL's minutes / 60.0).
    source: (ctx) => sql`
      select t.id as "TimesheetId", t.user_id as "UserId", ${userName('u')} as "User",
             uc.id as "UserCompanyId", uc.name as "UserCompany", ud.id as "UserDepartmentId", ud.name as "UserDepartment",
             u.email as "UserEmail",
             ty.id as "TypologyId", ty.name as "Typology",
             t.date as "Day", ${HOURS} as "Hours",
             cl.id as "ClientId", cl.name as "Client", p.id as "ProjectId", p.name as "Project", p.number as "ProjectNumber",
             t.job_id as "JobId", j.name as "Job", j.number as "JobNumber", jt.name as "JobType",
             t.is_billable and cl.id is not null as "IsBillable",
             bc.id as "CompanyId", bc.name as "Company",
             pr.id as "ProductId", pr.name as "Product", pr.code as "ProductCode", pr.external_id as "ProductExternalId",
             b.id as "BrandId", b.name as "Brand", wt.id as "WorkTypeId", wt.name as "WorkType",
             t.status as "Status",
             coalesce(ap.names, ${userName('r')}) as "Approvers",
             t.modified_on_utc as "ModifiedOn", t.requested_approval as "RequestedApproval",
             t.booked_hourly_cost as "HourlyUserCost", round(t.duration_minutes * t.booked_hourly_cost / 60, 4) as "TotalUserCost"
        from timesheets t
        left join users u on u.tenant_id = t.tenant_id and u.id = t.user_id
        left join companies uc on uc.tenant_id = u.tenant_id and uc.id = u.company_id
        left join departments ud on ud.tenant_id = t.tenant_id and ud.id = t.booked_department_id
        left join companies bc on bc.tenant_id = t.tenant_id and bc.id = t.booked_company_id
        left join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
        left join job_types jt on jt.tenant_id = j.tenant_id and jt.id = j.job_type_id
        left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
        left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
        left join products pr on pr.tenant_id = p.tenant_id and pr.id = p.product_id
        left join brands b on b.tenant_id = pr.tenant_id and b.id = pr.brand_id
        left join work_types wt on wt.tenant_id = t.tenant_id and wt.id = t.work_type_id
        left join users r on r.tenant_id = u.tenant_id and r.id = u.responsible_id
        left join typologies ty on ty.tenant_id = u.tenant_id and ty.id = u.typology_id
        ${jobApprovers(ctx)}
       where t.tenant_id = ${ctx.tenantId} and t.deleted_on is null`,
  },
  {
    name: 'DE-TimeSheetsCount',
    key: [],
    countOf: 'DE-TimeSheets',
    parameters: { ModifiedFrom: 'ModifiedOn', ProjectNumber: 'ProjectNumber', ProjectId: 'ProjectId', From: 'Day', To: 'Day' },
  },
  {
    name: 'DE-TimeSheetsDeleted',
    key: ['TimesheetId'],
    // The platform's statement reads only ModifiedFrom (on the deletion time); From/To are accepted and ignored.
    parameters: { ModifiedFrom: 'ModifiedOnUtc' },
    ignoredParameters: ['From', 'To'],
    source: tombstones('timesheets', 'TimesheetId'),
  },
  {
    name: 'DE-TimeSheetsDeletedCount',
    key: [],
    countOf: 'DE-TimeSheetsDeleted',
    parameters: { ModifiedFrom: 'ModifiedOnUtc' },
    ignoredParameters: ['From', 'To'],
  },
  {
    name: 'DE-Leaves',
    key: ['LeaveId'],
    parameters: { ModifiedFrom: 'ModifiedOn' },
    // The leave's own columns, for keys and counts that read nothing else (the common orders and filters):
    // planned without the lookups and approver lists, which a 100-row page's key statement and count paid for.
    narrow: [
      {
        columns: ['LeaveId', 'UserId', 'Day', 'IsHalfDay', 'ModifiedOn', 'RequestedApproval', 'Status'],
        source: (ctx) => sql`
          select l.id as "LeaveId", l.user_id as "UserId", ${utcMidnight('l.day')} as "Day", l.is_half_day as "IsHalfDay",
                 l.modified_on_utc as "ModifiedOn", l.requested_approval as "RequestedApproval", ${LEAVE_STATUS} as "Status"
            from leaves l
           where l.tenant_id = ${ctx.tenantId} and l.deleted_on is null and l.requested_approval`,
      },
    ],
    // As the platform's statement: only leaves whose approval was requested; Hours = the leave's minutes / 60
    // for an hour-based type, else the user's LeaveDayHours (half of it for a half day), as the whole number
    // the catalogue types; Approvers = who approved it; HRApprovers is always null on the platform (its join
    // tests the wrong alias) and so here: docs/named-queries.md, "Kept as the platform computes it".
    source: (ctx) => sql`
      select c.id as "CompanyId", c.name as "Company", l.id as "LeaveId", lt.id as "LeaveTypeId", lt.name as "LeaveType",
             l.user_id as "UserId", ${userName('u')} as "User", ${utcMidnight('l.day')} as "Day", l.is_half_day as "IsHalfDay",
             round(case when lt.is_hourly then l.total_minutes / 60.0
                        when l.is_half_day then u.leave_day_hours / 2 else u.leave_day_hours end)::int as "Hours",
             lt.year as "LeaveTypeYear",
             ${utcMidnight('lt.expires_on')} as "LeaveTypeExpiresOn", l.modified_on_utc as "ModifiedOn",
             l.requested_approval as "RequestedApproval", ${LEAVE_STATUS} as "Status",
             (select string_agg(${userName('au')}, ', ' order by ${userName('au')})
                from approvals ap
                join users au on au.tenant_id = ap.tenant_id and au.id = ap.approver_id
               where ap.tenant_id = l.tenant_id and ap.document_id = l.id and ap.role = 'Approver' and ap.status = 'Approved') as "Approvers",
             null::text as "HRApprovers"
        from leaves l
        left join users u on u.tenant_id = l.tenant_id and u.id = l.user_id
        left join leave_types lt on lt.tenant_id = l.tenant_id and lt.id = l.leave_type_id
        left join companies c on c.tenant_id = u.tenant_id and c.id = u.company_id
       where l.tenant_id = ${ctx.tenantId} and l.deleted_on is null and l.requested_approval`,
  },
  {
    name: 'DE-LeavesCount',
    key: [],
    countOf: 'DE-Leaves',
    parameters: { ModifiedFrom: 'ModifiedOn', From: 'Day', To: 'Day' },
  },
  {
    name: 'DE-LeavesDeleted',
    key: ['LeaveId'],
    parameters: { ModifiedFrom: 'ModifiedOnUtc' },
    source: tombstones('leaves', 'LeaveId'),
  },
  {
    name: 'DE-LeavesDeletedCount',
    key: [],
    countOf: 'DE-LeavesDeleted',
    parameters: { ModifiedFrom: 'ModifiedOnUtc' },
  },
  {
    name: 'DE-Attendances',
    key: ['UserId', 'Day', 'Time', 'Type'],
    parameters: { From: 'Day', To: 'Day' },
    // The day's and the clock event's own columns (no user lookup), for keys and counts.
    narrow: [
      {
        columns: ['Day', 'UserId', 'Time', 'Type', 'AdjustedTime', 'Offset', 'OffsetMinutes', 'HomeOffice', 'HalfDay'],
        source: (ctx) => sql`
          select at.day as "Day", at.user_id as "UserId", ad.time as "Time", ad.entry_type as "Type", ad.adjusted_time as "AdjustedTime",
                 ad.is_offset as "Offset", ad.offset_minutes as "OffsetMinutes", at.home_office as "HomeOffice", at.half_day as "HalfDay"
            from attendances at
            join attendance_details ad on ad.tenant_id = at.tenant_id and ad.attendance_id = at.id
           where at.tenant_id = ${ctx.tenantId}`,
      },
    ],
    // One row per clock event of a day; a day without events gives none (the platform's inner join).
    source: (ctx) => sql`
      select at.day as "Day", at.user_id as "UserId", ${userName('u')} as "User",
             at.worked_minutes / 60 as "Hours", at.worked_minutes % 60 as "Minutes",
             at.offset_total_minutes as "OffSetTotalMinutes", at.tardiness_total_minutes as "TardinessTotalMinutes",
             at.break_total_minutes as "BreakTotalMinutes", at.home_office as "HomeOffice", at.half_day as "HalfDay",
             ad.time as "Time", ad.entry_type as "Type", ad.adjusted_time as "AdjustedTime", ad.motive as "Motive",
             ad.is_offset as "Offset", ad.offset_minutes as "OffsetMinutes"
        from attendances at
        left join users u on u.tenant_id = at.tenant_id and u.id = at.user_id
        join attendance_details ad on ad.tenant_id = at.tenant_id and ad.attendance_id = at.id
       where at.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Workloads',
    key: ['WorkloadId'],
    // The workload's own columns (on jobs only, as the source), for keys and counts that read nothing else.
    narrow: [
      {
        columns: ['WorkloadId', 'DayUtc', 'Workload', 'JobId', 'TimesheetId', 'UserIs'],
        source: (ctx) => sql`
          select w.id as "WorkloadId", ${utcMidnight('w.day')} as "DayUtc", round(w.workload_minutes / 60.0, 4) as "Workload",
                 j.id as "JobId", w.timesheet_id as "TimesheetId", w.user_id as "UserIs"
            from workloads w
            join jobs j on j.tenant_id = w.tenant_id and j.id = w.document_id
           where w.tenant_id = ${ctx.tenantId}`,
      },
    ],
    // Workloads planned on jobs only (the inner join); Workload in decimal hours; Project is "number - number"
    // as the platform's statement writes it (kept as the platform computes it).
    source: (ctx) => sql`
      select w.id as "WorkloadId", ${utcMidnight('w.day')} as "DayUtc", round(w.workload_minutes / 60.0, 4) as "Workload",
             j.id as "JobId", w.timesheet_id as "TimesheetId", w.user_id as "UserIs", ${userName('u')} as "User",
             cl.id as "ClientId", cl.name as "Client", p.id as "ProjectId", p.number || ' - ' || p.number as "Project",
             j.name as "Job"
        from workloads w
        join jobs j on j.tenant_id = w.tenant_id and j.id = w.document_id
        left join users u on u.tenant_id = w.tenant_id and u.id = w.user_id
        left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
        left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
       where w.tenant_id = ${ctx.tenantId}`,
  },
];
