// DE-Jobs and its count: one row per job, with the project's client and product, the department's
// company and division, the stage, and whether the job is late.
import type { NamedQueryDefinition } from '../../definition.ts';
import { sql } from '../../definition.ts';
import { daysOverdue, forCurrentUser, jobIsDelayed, userName, utcMidnight } from '../fragments.ts';

export const jobs: NamedQueryDefinition = {
  name: 'DE-Jobs',
  key: ['JobId'],
  parameters: { ModifiedFrom: 'ModifiedOn', JobId: 'JobId', JobNumber: 'JobNumber' },
  // The job with only the inner joins that decide which jobs there are (project, its client, department,
  // company), for keys and counts: planning the source's other lookups cost more than running the page.
  narrow: [
    {
      columns: ['DocumentOid', 'JobId', 'Job', 'JobNumber', 'ProjectId', 'ClientId', 'DepartmentId', 'CompanyId', 'ModifiedOn', 'BusinessValue', 'Version'],
      source: (ctx) => sql`
        select j.id as "DocumentOid", j.id as "JobId", j.name as "Job", j.number as "JobNumber", p.id as "ProjectId", cl.id as "ClientId",
               d.id as "DepartmentId", co.id as "CompanyId", j.modified_on_utc as "ModifiedOn", j.business_value as "BusinessValue",
               j.version as "Version"
          from jobs j
          join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
          join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
          join departments d on d.tenant_id = j.tenant_id and d.id = j.department_id
          join companies co on co.tenant_id = d.tenant_id and co.id = d.company_id
         where j.tenant_id = ${ctx.tenantId}`,
    },
  ],
  source: (ctx) => sql`
    select
      j.id as "DocumentOid",
      cl.id as "ClientId",
      cl.name as "Client",
      cl.image_file_id is not null as "ClientHasImage",
      p.id as "ProjectId",
      p.name as "Project",
      p.number as "ProjectNumber",
      j.id as "JobId",
      j.name as "Job",
      j.number as "JobNumber",
      j.business_value as "BusinessValue",
      pr.id as "ProductId",
      pr.name as "Product",
      s.id as "StageId",
      s.name as "Stage",
      s.color as "StageColor",
      st.id as "StageTypeId",
      st.name as "StageType",
      st.color as "StageTypeColor",
      jt.id as "TypeId",
      jt.name as "Type",
      co.id as "CompanyId",
      co.name as "Company",
      co.image_file_id is not null as "CompanyHasImage",
      dv.id as "DivisionId",
      dv.name as "Division",
      d.id as "DepartmentId",
      d.name as "Department",
      ${utcMidnight('j.start_date')} as "StartDate",
      ${utcMidnight('j.end_date')} as "EndDate",
      j.created_by_id as "CreatedById",
      ${userName('cu')} as "CreatedBy",
      cu.image_file_id is not null as "CreatedByHasImage",
      j.modified_by_id as "ModifiedId",
      ${userName('mu')} as "ModifiedBy",
      mu.image_file_id is not null as "ModifiedHasImage",
      j.modified_on_utc as "ModifiedOn",
      ${forCurrentUser(ctx, 'document_reads', 'j.id')} as "AlreadyRead",
      ${forCurrentUser(ctx, 'assignments', 'j.id')} as "CurrentUserInTeam",
      ${forCurrentUser(ctx, 'approvals', 'j.id')} as "CurrentUserPending",
      ${jobIsDelayed('j', 's')} as "IsDelayed",
      case when ${jobIsDelayed('j', 's')} then ${daysOverdue('j')} end as "Delayed",
      j.version as "Version",
      j.motive as "Motive"
    from jobs j
    join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
    join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
    left join products pr on pr.tenant_id = p.tenant_id and pr.id = p.product_id
    join departments d on d.tenant_id = j.tenant_id and d.id = j.department_id
    join companies co on co.tenant_id = d.tenant_id and co.id = d.company_id
    left join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
    left join job_types jt on jt.tenant_id = j.tenant_id and jt.id = j.job_type_id
    left join workflow_stages s on s.tenant_id = j.tenant_id and s.id = j.stage_id
    left join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
    left join users cu on cu.tenant_id = j.tenant_id and cu.id = j.created_by_id
    left join users mu on mu.tenant_id = j.tenant_id and mu.id = j.modified_by_id
    where j.tenant_id = ${ctx.tenantId}`,
};

/** The platform's count leaves Draft jobs out (its list keeps them). */
export const jobsCount: NamedQueryDefinition = {
  name: 'DE-JobsCount',
  key: [],
  countOf: 'DE-Jobs',
  countExcludes: { column: 'StageType', values: ['Draft'] },
  parameters: jobs.parameters,
};
