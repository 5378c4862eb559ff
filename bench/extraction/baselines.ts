// The SQL a DBA writes by hand for DE-TimeSheets (issue #12): the same rows, columns and totalCount as the
// named query, written for the case at hand and run as the tenant (RLS applies). The bench checks that
// each answers exactly what the API answers. $1 is always the tenant.

/** Every output column of DE-TimeSheets for the timesheet `t` (company, department and cost as stored at booking). */
export const COLUMNS = `
  t.id as "TimesheetId", t.user_id as "UserId", coalesce(u.name, u.user_name) as "User",
  uc.id as "UserCompanyId", uc.name as "UserCompany", ud.id as "UserDepartmentId", ud.name as "UserDepartment",
  u.email as "UserEmail", ty.id as "TypologyId", ty.name as "Typology",
  t.date as "Day", round(t.duration_minutes / 60.0, 6) as "Hours",
  cl.id as "ClientId", cl.name as "Client", p.id as "ProjectId", p.name as "Project", p.number as "ProjectNumber",
  t.job_id as "JobId", j.name as "Job", j.number as "JobNumber", jt.name as "JobType", t.is_billable and cl.id is not null as "IsBillable",
  bc.id as "CompanyId", bc.name as "Company",
  pr.id as "ProductId", pr.name as "Product", pr.code as "ProductCode", pr.external_id as "ProductExternalId",
  b.id as "BrandId", b.name as "Brand", wt.id as "WorkTypeId", wt.name as "WorkType",
  t.status as "Status", coalesce(ap.names, coalesce(r.name, r.user_name)) as "Approvers",
  t.modified_on_utc as "ModifiedOn", t.requested_approval as "RequestedApproval",
  t.booked_hourly_cost as "HourlyUserCost", round(t.duration_minutes * t.booked_hourly_cost / 60, 4) as "TotalUserCost"`;

/** The lookups of COLUMNS, for the rows of `t` (a page's few rows: index lookups per row). */
export const LOOKUPS = `
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
  left join lateral (select string_agg(coalesce(au.name, au.user_name), ', ' order by coalesce(au.name, au.user_name)) as names
                       from assignments a
                       join teams tm on tm.tenant_id = a.tenant_id and tm.id = a.team_id
                       join users au on au.tenant_id = a.tenant_id and au.id = a.user_id
                      where a.tenant_id = t.tenant_id and a.document_id = t.job_id and tm.name = 'Approver') ap on true`;

export interface Baseline {
  page: string;
  count: string;
  parameters: unknown[];
}

/**
 * A page ordered by Day desc (ties by id): the keys filtered and sorted on the indexes first, then the
 * columns for those rows only; `job` (an ILIKE pattern) and `days` filter, as the API's contains/between.
 */
export function timesheetsPage(tenantId: string, o: { skip: number; take: number; job?: string; days?: [string, string] }): Baseline {
  const parameters: unknown[] = [tenantId];
  const where = ['t.tenant_id = $1', 't.deleted_on is null'];
  let join = '';
  if (o.job !== undefined) {
    parameters.push(o.job);
    join = `join jobs fj on fj.tenant_id = t.tenant_id and fj.id = t.job_id and fj.name ilike $${parameters.length}`;
  }
  if (o.days) {
    parameters.push(o.days[0], o.days[1]);
    where.push(`t.date between $${parameters.length - 1} and $${parameters.length}`);
  }
  const filtered = `from timesheets t ${join} where ${where.join(' and ')}`;
  parameters.push(o.take, o.skip);
  const page = `with k as materialized (select t.id, t.date ${filtered} order by t.date desc, t.id limit $${parameters.length - 1} offset $${parameters.length})
    select ${COLUMNS} from k join timesheets t on t.tenant_id = $1 and t.id = k.id ${LOOKUPS} order by k.date desc, k.id`;
  return { page, count: `select count(*) as n ${filtered}`, parameters };
}

/** The full export: every live timesheet with every column, set-wise (the approvers grouped once, hash-joined). */
export function timesheetsExport(tenantId: string): { sql: string; parameters: unknown[] } {
  const setWise = LOOKUPS.replace(/left join lateral \(select string_agg[\s\S]*$/, '');
  const sql = `select ${COLUMNS} from timesheets t ${setWise}
    left join (select a.document_id, string_agg(coalesce(au.name, au.user_name), ', ' order by coalesce(au.name, au.user_name)) as names
                 from assignments a join teams tm on tm.tenant_id = a.tenant_id and tm.id = a.team_id
                 join users au on au.tenant_id = a.tenant_id and au.id = a.user_id
                where a.tenant_id = $1 and tm.name = 'Approver' group by a.document_id) ap on ap.document_id = t.job_id
   where t.tenant_id = $1 and t.deleted_on is null`;
  return { sql, parameters: [tenantId] };
}
