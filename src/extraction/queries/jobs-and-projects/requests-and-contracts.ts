// DE-Requests (one row per request, with per-user read/favourite marks) and DE-Contracts (one row per
// contract that is past Draft, with its estimated totals).
import type { NamedQueryDefinition } from '../../definition.ts';
import { sql } from '../../definition.ts';
import { currentUserRowId, estimatedColumns, estimatedTotals, forCurrentUser, userName } from '../fragments.ts';

export const requests: NamedQueryDefinition = {
  name: 'DE-Requests',
  key: ['RequestId'],
  parameters: {},
  source: (ctx) => sql`
    select
      r.id as "DocumentOid",
      r.id as "RequestId",
      r.name as "Request",
      r.number as "RequestNumber",
      r.begin_date_utc as "BeginDateUtc",
      r.end_date_utc as "EndDateUtc",
      r.created_on_utc as "CreatedOnUtc",
      r.modified_on_utc as "ModifiedOnUtc",
      -- Calendar days from begin to end (UTC), as DATEDIFF(day, begin, end) counts them.
      -- As the platform: calendar days from today (UTC) to the end date, negative once it has passed.
      (r.end_date_utc at time zone 'UTC')::date - (now() at time zone 'UTC')::date as "Days",
      r.tags::text as "TagsJson",
      r.is_activated as "IsActivated",
      ${userName('cu')} as "CreatedBy",
      r.created_by_id as "CreatedById",
      cu.image_file_id is not null as "CreatedByHasImage",
      cu.tags::text as "CreatedByTags",
      co.name as "Company",
      co.id as "CompanyId",
      co.image_file_id is not null as "CompanyHasImage",
      cg.name as "ClientGroup",
      cl.name as "Client",
      cl.id as "ClientId",
      cl.image_file_id is not null as "ClientHasImage",
      cl.classification as "ClientClassification",
      jt.name as "Type",
      jt.style::text as "TypeStyle",
      pr.name as "Product",
      b.name as "Brand",
      ct.name as "Contract",
      ct.id as "ContractId",
      s.name as "Stage",
      coalesce(s.color, st.color) as "StageColor",
      ${userName('mu')} as "ModifiedBy",
      r.modified_by_id as "ModifiedById",
      mu.image_file_id is not null as "ModifiedByHasImage",
      st.name is not distinct from 'Draft' as "IsDraft",
      cuc.id as "CreatedByCompanyId",
      cuc.name as "CreatedByCompany",
      cuc.image_file_id is not null as "CreatedByCompanyHasImage",
      st.name as "StageType",
      ${forCurrentUser(ctx, 'document_reads', 'r.id')} as "AlreadyRead",
      ${forCurrentUser(ctx, 'assignments', 'r.id')} as "CurrentUserInTeam",
      ${currentUserRowId(ctx, 'document_reads', 'r.id')} as "BaseObjectReadId",
      ${currentUserRowId(ctx, 'favorites', 'r.id')} as "FavoriteId",
      ${forCurrentUser(ctx, 'favorites', 'r.id')} as "IsFavorite",
      wdt.name as "Workflow",
      r.priority as "Priority",
      r.version as "Version",
      d.name as "Department",
      d.id as "DepartmentId",
      dv.name as "Division",
      dv.id as "DivisionId"
    from requests r
    -- The request's company is its own department's; Department and Division are its type's (as the platform).
    join departments rd on rd.tenant_id = r.tenant_id and rd.id = r.department_id
    join companies co on co.tenant_id = rd.tenant_id and co.id = rd.company_id
    left join commercial_clients cl on cl.tenant_id = r.tenant_id and cl.id = r.commercial_client_id
    left join client_groups cg on cg.tenant_id = cl.tenant_id and cg.id = cl.client_group_id
    left join job_types jt on jt.tenant_id = r.tenant_id and jt.id = r.type_id
    left join departments d on d.tenant_id = jt.tenant_id and d.id = jt.department_id
    left join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
    left join products pr on pr.tenant_id = r.tenant_id and pr.id = r.product_id
    left join brands b on b.tenant_id = r.tenant_id and b.id = r.brand_id
    left join contracts ct on ct.tenant_id = r.tenant_id and ct.id = r.contract_id
    left join workflows w on w.tenant_id = r.tenant_id and w.id = r.workflow_id
    left join document_types wdt on wdt.tenant_id = w.tenant_id and wdt.id = w.document_type_id
    left join workflow_stages s on s.tenant_id = r.tenant_id and s.id = r.stage_id
    left join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
    left join users cu on cu.tenant_id = r.tenant_id and cu.id = r.created_by_id
    left join companies cuc on cuc.tenant_id = cu.tenant_id and cuc.id = cu.company_id
    left join users mu on mu.tenant_id = r.tenant_id and mu.id = r.modified_by_id
    where r.tenant_id = ${ctx.tenantId}`,
};

export const contracts: NamedQueryDefinition = {
  name: 'DE-Contracts',
  key: ['ContractId'],
  parameters: { ModifiedFrom: 'ModifiedOn', ContractNumber: 'ContractNumber', ContractId: 'ContractId' },
  source: (ctx) => sql`
    select
      cl.id as "ClientId",
      cl.name as "Client",
      c.id as "ContractId",
      c.name as "Contract",
      c.number as "ContractNumber",
      c.start_date as "StartDate",
      c.end_date as "EndDate",
      c.modified_on_utc as "ModifiedOn",
      b.id as "BrandId",
      b.name as "Brand",
      pr.id as "ProductId",
      pr.name as "Product",
      jt.id as "TypeId",
      jt.name as "Type",
      s.id as "StageId",
      s.name as "Stage",
      st.id as "StageTypeId",
      st.name as "StageType",
      ${estimatedColumns('est')}
    from contracts c
    join commercial_clients cl on cl.tenant_id = c.tenant_id and cl.id = c.commercial_client_id
    left join products pr on pr.tenant_id = c.tenant_id and pr.id = c.product_id
    -- The brand is the product's, as the platform's statement reads it.
    left join brands b on b.tenant_id = pr.tenant_id and b.id = pr.brand_id
    left join job_types jt on jt.tenant_id = c.tenant_id and jt.id = c.type_id
    left join workflow_stages s on s.tenant_id = c.tenant_id and s.id = c.stage_id
    left join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
    ${estimatedTotals(ctx, 'contract_id', 'c.id', 'est')}
    where c.tenant_id = ${ctx.tenantId}
      -- Contracts still in a Draft stage are not reported (as the platform's own query).
      and st.name is distinct from 'Draft'`,
};
