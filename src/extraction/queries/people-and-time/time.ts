// Named queries over time: timesheets, leaves, attendances and workloads, their counts and their
// tombstones (deleted rows). DE-TimeSheets runs on a million rows: see the note on its source.
import type { RawBuilder } from 'kysely';
import { type NamedQueryDefinition, type QueryContext, sql } from '../../definition.ts';
import { numberAndName, periodInForce, userName, utcMidnight } from '../fragments.ts';

// Names of the approvers of a leave in one role, comma-joined.
const leaveApprovers = (role: 'Approver' | 'HR') => sql`
  (select string_agg(${userName('au')}, ', ' order by ${userName('au')})
     from approvals ap
     join users au on au.tenant_id = ap.tenant_id and au.id = ap.approver_id
    where ap.tenant_id = l.tenant_id and ap.document_id = l.id and ap.role = ${role})`;

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

/** DE-TimeSheets' columns that are the timesheet's own, as its source computes them. */
const OWN_COLUMNS = ['TimesheetId', 'UserId', 'Day', 'Hours', 'JobId', 'IsBillable', 'Status', 'ModifiedOn', 'RequestedApproval'];
const ownColumns = sql`t.id as "TimesheetId", t.user_id as "UserId", t.date as "Day", round(t.duration_minutes / 60.0, 4) as "Hours",
  t.job_id as "JobId", t.is_billable as "IsBillable", t.status as "Status", t.modified_on_utc as "ModifiedOn",
  t.requested_approval as "RequestedApproval"`;

/** Where DE-TimeSheets looks up the periods in force: the timesheet's user on its day. */
const period = { tenant: 't.tenant_id', user: 't.user_id', day: 't.date' };

export const time: NamedQueryDefinition[] = [
  {
    name: 'DE-TimeSheets',
    key: ['TimesheetId'],
    parameters: { ModifiedFrom: 'ModifiedOn', ProjectNumber: 'ProjectNumber', ProjectId: 'ProjectId', From: 'Day', To: 'Day' },
    // The job's team decides who sees a timesheet, and the department of the person whose time it is.
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
    source: (ctx) => sql`
      select t.id as "TimesheetId", t.user_id as "UserId", ${userName('u')} as "User",
             uc.id as "UserCompanyId", uc.name as "UserCompany", ud.id as "UserDepartmentId", ud.name as "UserDepartment",
             u.email as "UserEmail",
             ty.id as "TypologyId", ty.name as "Typology",
             t.date as "Day", round(t.duration_minutes / 60.0, 4) as "Hours",
             cl.id as "ClientId", cl.name as "Client", p.id as "ProjectId", p.name as "Project", p.number as "ProjectNumber",
             t.job_id as "JobId", j.name as "Job", j.number as "JobNumber", jt.name as "JobType", t.is_billable as "IsBillable",
             jc.id as "CompanyId", jc.name as "Company",
             pr.id as "ProductId", pr.name as "Product", pr.code as "ProductCode", pr.external_id as "ProductExternalId",
             b.id as "BrandId", b.name as "Brand", wt.id as "WorkTypeId", wt.name as "WorkType",
             t.status as "Status",
             coalesce(ap.names, ${userName('r')}) as "Approvers",
             t.modified_on_utc as "ModifiedOn", t.requested_approval as "RequestedApproval",
             uc_at.value as "HourlyUserCost", round(t.duration_minutes * uc_at.value / 60, 4) as "TotalUserCost"
        from timesheets t
        left join users u on u.tenant_id = t.tenant_id and u.id = t.user_id
        left join companies uc on uc.tenant_id = u.tenant_id and uc.id = u.company_id
        left join departments ud on ud.tenant_id = u.tenant_id and ud.id = u.department_id
        left join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
        left join job_types jt on jt.tenant_id = j.tenant_id and jt.id = j.job_type_id
        left join departments jd on jd.tenant_id = j.tenant_id and jd.id = j.department_id
        left join companies jc on jc.tenant_id = jd.tenant_id and jc.id = jd.company_id
        left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
        left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
        left join products pr on pr.tenant_id = p.tenant_id and pr.id = p.product_id
        left join brands b on b.tenant_id = t.tenant_id and b.id = coalesce(p.brand_id, pr.brand_id)
        left join work_types wt on wt.tenant_id = t.tenant_id and wt.id = t.work_type_id
        left join users r on r.tenant_id = u.tenant_id and r.id = u.responsible_id
        ${jobApprovers(ctx)}
        ${periodInForce(ctx, 'user_typology_histories', 'typology_id', period, 'th')}
        left join typologies ty on ty.tenant_id = t.tenant_id and ty.id = coalesce(th.value, u.typology_id)
        ${periodInForce(ctx, 'user_costs', 'hourly_value', period, 'uc_at')}
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
    // Only the id and the deletion time are output, so From/To apply to the deletion time too.
    parameters: { ModifiedFrom: 'ModifiedOnUtc', From: 'ModifiedOnUtc', To: 'ModifiedOnUtc' },
    source: tombstones('timesheets', 'TimesheetId'),
  },
  {
    name: 'DE-TimeSheetsDeletedCount',
    key: [],
    countOf: 'DE-TimeSheetsDeleted',
    parameters: { ModifiedFrom: 'ModifiedOnUtc', From: 'ModifiedOnUtc', To: 'ModifiedOnUtc' },
  },
  {
    name: 'DE-Leaves',
    key: ['LeaveId'],
    parameters: { ModifiedFrom: 'ModifiedOn' },
    // The leave's own columns, for keys and counts that read nothing else (the common orders and filters):
    // planned without the lookups and approver lists, which a 100-row page's key statement and count paid for.
    narrow: [
      {
        columns: ['LeaveId', 'UserId', 'Day', 'IsHalfDay', 'Hours', 'ModifiedOn', 'RequestedApproval', 'Status'],
        source: (ctx) => sql`
          select l.id as "LeaveId", l.user_id as "UserId", ${utcMidnight('l.day')} as "Day", l.is_half_day as "IsHalfDay",
                 round(l.total_minutes / 60.0)::int as "Hours", l.modified_on_utc as "ModifiedOn",
                 l.requested_approval as "RequestedApproval", l.status as "Status"
            from leaves l
           where l.tenant_id = ${ctx.tenantId} and l.deleted_on is null`,
      },
    ],
    // One row per live leave day. Hours is an integer in the catalogue: total minutes / 60, rounded.
    source: (ctx) => sql`
      select c.id as "CompanyId", c.name as "Company", l.id as "LeaveId", lt.id as "LeaveTypeId", lt.name as "LeaveType",
             l.user_id as "UserId", ${userName('u')} as "User", ${utcMidnight('l.day')} as "Day", l.is_half_day as "IsHalfDay",
             round(l.total_minutes / 60.0)::int as "Hours", lt.year as "LeaveTypeYear",
             ${utcMidnight('lt.expires_on')} as "LeaveTypeExpiresOn", l.modified_on_utc as "ModifiedOn",
             l.requested_approval as "RequestedApproval", l.status as "Status",
             ${leaveApprovers('Approver')} as "Approvers", ${leaveApprovers('HR')} as "HRApprovers"
        from leaves l
        left join users u on u.tenant_id = l.tenant_id and u.id = l.user_id
        left join leave_types lt on lt.tenant_id = l.tenant_id and lt.id = l.leave_type_id
        left join companies c on c.tenant_id = l.tenant_id and c.id = coalesce(u.company_id, lt.company_id)
       where l.tenant_id = ${ctx.tenantId} and l.deleted_on is null`,
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
    // One row per clock event of a day (a day without events still gives one row, event columns null).
    source: (ctx) => sql`
      select at.day as "Day", at.user_id as "UserId", ${userName('u')} as "User",
             at.worked_minutes / 60 as "Hours", at.worked_minutes % 60 as "Minutes",
             at.offset_total_minutes as "OffSetTotalMinutes", at.tardiness_total_minutes as "TardinessTotalMinutes",
             at.break_total_minutes as "BreakTotalMinutes", at.home_office as "HomeOffice", at.half_day as "HalfDay",
             ad.time as "Time", ad.entry_type as "Type", ad.adjusted_time as "AdjustedTime", ad.motive as "Motive",
             ad.is_offset as "Offset", ad.offset_minutes as "OffsetMinutes"
        from attendances at
        left join users u on u.tenant_id = at.tenant_id and u.id = at.user_id
        left join attendance_details ad on ad.tenant_id = at.tenant_id and ad.attendance_id = at.id
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
    // Workloads planned on jobs only (the inner join); Workload in decimal hours; Project is "number - name".
    source: (ctx) => sql`
      select w.id as "WorkloadId", ${utcMidnight('w.day')} as "DayUtc", round(w.workload_minutes / 60.0, 4) as "Workload",
             j.id as "JobId", w.timesheet_id as "TimesheetId", w.user_id as "UserIs", ${userName('u')} as "User",
             cl.id as "ClientId", cl.name as "Client", p.id as "ProjectId", ${numberAndName('p')} as "Project",
             j.name as "Job"
        from workloads w
        join jobs j on j.tenant_id = w.tenant_id and j.id = w.document_id
        left join users u on u.tenant_id = w.tenant_id and u.id = w.user_id
        left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
        left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
       where w.tenant_id = ${ctx.tenantId}`,
  },
];
