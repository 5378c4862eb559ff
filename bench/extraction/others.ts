// Hand-written SQL for three more named queries with many rows per tenant (issue #12: "three other heavy
// queries get the same page comparison"): DE-History, DE-Workloads and DE-Leaves, each a page ordered by its
// date descending (ties by the key) at a given skip, and the count. $1 is the tenant; written keys-first,
// the order on the driving table's own column (the same order as the API's date-as-datetime column).
import type { Baseline } from './baselines.ts';

export interface OtherQuery {
  name: string;
  orderBy: string;
  baseline: (tenantId: string, skip: number, take: number) => Baseline;
}

/** `keys`: [key columns, FROM … WHERE …, ORDER BY of the keys]; the columns are joined for the page's keys `k`. */
const page = (keys: [string, string, string], columns: string, join: string, order: string) => (tenantId: string, skip: number, take: number) => ({
  page: `with k as materialized (select ${keys[0]} ${keys[1]} order by ${keys[2]} limit $2 offset $3) select ${columns} from k ${join} order by ${order}`,
  count: `select count(*) as n ${keys[1]}`,
  parameters: [tenantId, take, skip],
});

export const OTHER_QUERIES: OtherQuery[] = [
  {
    name: 'DE-History',
    orderBy: 'CreatedOnUtc',
    baseline: page(
      ['h.id, h.created_on_utc', 'from document_history h where h.tenant_id = $1', 'h.created_on_utc desc, h.id'],
      `h.id as "HistoryId", dt.full_name as "DocumentType", h.document_id as "DocumentId", h.version as "Version",
       h.start_date as "StartDate", h.end_date as "EndDate", h.user_id as "UserId", coalesce(u.name, u.user_name) as "User",
       u.image_file_id is not null as "UserHasImage", h.action as "Action",
       st.id as "StageId", st.name as "Stage", st.color as "StageColor",
       sty.id as "StageTypeId", sty.name as "StageType", sty.color as "StageTypeColor", h.created_on_utc as "CreatedOnUtc"`,
      `join document_history h on h.tenant_id = $1 and h.id = k.id
       left join document_types dt on dt.tenant_id = h.tenant_id and dt.id = h.document_type_id
       left join users u on u.tenant_id = h.tenant_id and u.id = h.user_id
       left join workflow_stages st on st.tenant_id = h.tenant_id and st.id = h.stage_id
       left join workflow_stage_types sty on sty.tenant_id = st.tenant_id and sty.id = st.stage_type_id`,
      'k.created_on_utc desc, k.id',
    ),
  },
  {
    name: 'DE-Workloads',
    orderBy: 'DayUtc',
    baseline: page(
      ['w.id, w.day', 'from workloads w join jobs j on j.tenant_id = w.tenant_id and j.id = w.document_id where w.tenant_id = $1', 'w.day desc, w.id'],
      `w.id as "WorkloadId", (w.day::timestamp at time zone 'UTC') as "DayUtc", round(w.workload_minutes / 60.0, 4) as "Workload",
       j.id as "JobId", w.timesheet_id as "TimesheetId", w.user_id as "UserIs", coalesce(u.name, u.user_name) as "User",
       cl.id as "ClientId", cl.name as "Client", p.id as "ProjectId", p.number || ' - ' || p.number as "Project", j.name as "Job"`,
      `join workloads w on w.tenant_id = $1 and w.id = k.id
       join jobs j on j.tenant_id = w.tenant_id and j.id = w.document_id
       left join users u on u.tenant_id = w.tenant_id and u.id = w.user_id
       left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
       left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id`,
      'k.day desc, k.id',
    ),
  },
  {
    name: 'DE-Leaves',
    orderBy: 'Day',
    baseline: page(
      ['l.id, l.day', 'from leaves l where l.tenant_id = $1 and l.deleted_on is null and l.requested_approval', 'l.day desc, l.id'],
      `c.id as "CompanyId", c.name as "Company", l.id as "LeaveId", lt.id as "LeaveTypeId", lt.name as "LeaveType",
       l.user_id as "UserId", coalesce(u.name, u.user_name) as "User", (l.day::timestamp at time zone 'UTC') as "Day", l.is_half_day as "IsHalfDay",
       round(case when lt.is_hourly then l.total_minutes / 60.0 when l.is_half_day then u.leave_day_hours / 2 else u.leave_day_hours end)::int as "Hours",
       lt.year as "LeaveTypeYear",
       (lt.expires_on::timestamp at time zone 'UTC') as "LeaveTypeExpiresOn", l.modified_on_utc as "ModifiedOn",
       l.requested_approval as "RequestedApproval",
       (case l.status when 'Draft' then 'New' when 'Canceled' then null else l.status end) as "Status",
       (select string_agg(coalesce(au.name, au.user_name), ', ' order by coalesce(au.name, au.user_name)) from approvals ap
          join users au on au.tenant_id = ap.tenant_id and au.id = ap.approver_id
         where ap.tenant_id = l.tenant_id and ap.document_id = l.id and ap.role = 'Approver' and ap.status = 'Approved') as "Approvers",
       null::text as "HRApprovers"`,
      `join leaves l on l.tenant_id = $1 and l.id = k.id
       left join users u on u.tenant_id = l.tenant_id and u.id = l.user_id
       left join leave_types lt on lt.tenant_id = l.tenant_id and lt.id = l.leave_type_id
       left join companies c on c.tenant_id = u.tenant_id and c.id = u.company_id`,
      'k.day desc, k.id',
    ),
  },
];
