// DE-Projects (and count), DE-ProjectsAdditionalInformation (custom fields) and DE-ProjectsPlannedTime
// (and count): one row per project, per project with its user-field values, per planned-time entry.
import type { NamedQueryDefinition } from '../../definition.ts';
import { sql } from '../../definition.ts';
import { daysOverdue, estimatedColumns, estimatedTotals, forCurrentUser, jobIsDelayed, numberAndName, userName } from '../fragments.ts';

export const projects: NamedQueryDefinition = {
  name: 'DE-Projects',
  key: ['ProjectId'],
  parameters: { ModifiedFrom: 'ModifiedOn', ProjectNumber: 'ProjectNumber', ProjectId: 'ProjectId' },
  source: (ctx) => sql`
    select
      p.id as "DocumentOid",
      co.id as "CompanyId",
      co.name as "Company",
      co.image_file_id is not null as "CompanyHasImage",
      cl.id as "ClientId",
      cl.name as "Client",
      cl.image_file_id is not null as "ClientHasImage",
      ct.id as "ContractId",
      ct.name as "Contract",
      ct.number as "ContractNumber",
      p.id as "ProjectId",
      p.name as "Project",
      p.number as "ProjectNumber",
      p.start_date as "StartDate",
      p.end_date as "EndDate",
      p.modified_on_utc as "ModifiedOn",
      b.id as "BrandId",
      b.name as "Brand",
      pr.id as "ProductId",
      pr.name as "Product",
      pc.id as "ClassificationId",
      pc.name as "Classification",
      pn.id as "NatureId",
      pn.name as "Nature",
      s.id as "StageId",
      s.name as "Stage",
      s.color as "StageColor",
      st.id as "StageTypeId",
      st.name as "StageType",
      st.color as "StageTypeColor",
      cur.id as "CurrencyId",
      cur.name as "Currency",
      p.investment as "Investment",
      case when p.contract_id is not null then 'Contract' else 'Isolated' end as "ProjectType",
      rc.name as "RateCard",
      rcc.name as "RateCardColumn",
      ${estimatedColumns('est')},
      p.created_by_id as "CreatedById",
      ${userName('cu')} as "CreatedBy",
      cu.image_file_id is not null as "CreatedByHasImage",
      p.modified_by_id as "ModifiedId",
      ${userName('mu')} as "ModifiedBy",
      mu.image_file_id is not null as "ModifiedHasImage",
      ${forCurrentUser(ctx, 'document_reads', 'p.id')} as "AlreadyRead",
      ${forCurrentUser(ctx, 'assignments', 'p.id')} as "CurrentUserInTeam",
      ${forCurrentUser(ctx, 'approvals', 'p.id')} as "CurrentUserPending",
      late.delayed is not null as "IsDelayed",
      late.delayed as "Delayed"
    from projects p
    join companies co on co.tenant_id = p.tenant_id and co.id = p.company_id
    join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
    left join contracts ct on ct.tenant_id = p.tenant_id and ct.id = p.contract_id
    left join brands b on b.tenant_id = p.tenant_id and b.id = p.brand_id
    left join products pr on pr.tenant_id = p.tenant_id and pr.id = p.product_id
    left join project_classifications pc on pc.tenant_id = p.tenant_id and pc.id = p.classification_id
    left join project_natures pn on pn.tenant_id = p.tenant_id and pn.id = p.nature_id
    left join workflow_stages s on s.tenant_id = p.tenant_id and s.id = p.stage_id
    left join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
    left join currencies cur on cur.tenant_id = p.tenant_id and cur.id = p.currency_id
    left join rate_cards rc on rc.tenant_id = p.tenant_id and rc.id = p.rate_card_id
    left join rate_card_columns rcc on rcc.tenant_id = p.tenant_id and rcc.id = p.rate_card_column_id
    left join users cu on cu.tenant_id = p.tenant_id and cu.id = p.created_by_id
    left join users mu on mu.tenant_id = p.tenant_id and mu.id = p.modified_by_id
    ${estimatedTotals(ctx, 'project_id', 'p.id', 'est')}
    -- As the platform: the largest days overdue of its delayed jobs, i.e. the least late one (kept as the
    -- platform computes it, docs/named-queries.md).
    left join lateral (
      select max(${daysOverdue('j')}) as delayed
      from jobs j
      join workflow_stages js on js.tenant_id = j.tenant_id and js.id = j.stage_id
      where j.tenant_id = ${ctx.tenantId} and j.project_id = p.id and ${jobIsDelayed('j', 'js')}
    ) late on true
    where p.tenant_id = ${ctx.tenantId}`,
};

/** The platform's count leaves Draft projects out (its list keeps them). */
export const projectsCount: NamedQueryDefinition = {
  name: 'DE-ProjectsCount',
  key: [],
  countOf: 'DE-Projects',
  countExcludes: { column: 'StageType', values: ['Draft'] },
  parameters: { ModifiedFrom: 'ModifiedOn' },
};

/** Catalogue type of each user-field data type. */
const FIELD_TYPE = sql`case f.data_type when 'Text' then 'string' when 'Number' then 'decimal' when 'Date' then 'date' when 'Boolean' then 'boolean' else 'guid' end`;

export const projectsAdditionalInformation: NamedQueryDefinition = {
  name: 'DE-ProjectsAdditionalInformation',
  key: ['ProjectId'],
  parameters: { ProjectId: 'ProjectId', ProjectNumber: 'ProjectNumber' },
  source: (ctx) => sql`
    select
      p.id as "ProjectId",
      p.name as "Project",
      p.number as "ProjectNumber",
      coalesce((
        select jsonb_object_agg(f.column_name, v.value)
        from user_field_values v
        join user_fields f on f.tenant_id = v.tenant_id and f.id = v.user_field_id
        join document_types dt on dt.tenant_id = f.tenant_id and dt.id = f.document_type_id and dt.class_name = 'Project'
        where v.tenant_id = ${ctx.tenantId} and v.document_id = p.id
      ), '{}'::jsonb) as "__fields"
    from projects p
    where p.tenant_id = ${ctx.tenantId}`,
  userFields: {
    fields: (ctx) => sql<{ name: string; type: 'string' | 'decimal' | 'date' | 'boolean' | 'guid' }>`
      select f.column_name as name, ${FIELD_TYPE} as type
      from user_fields f
      join document_types dt on dt.tenant_id = f.tenant_id and dt.id = f.document_type_id and dt.class_name = 'Project'
      where f.tenant_id = ${ctx.tenantId}
      order by f.sort_order, f.column_name`,
  },
};

export const projectsPlannedTime: NamedQueryDefinition = {
  name: 'DE-ProjectsPlannedTime',
  // The catalogue gives no id column of the entry itself; project, resource, quote line and month identify it.
  key: ['ProjectId', 'Month', 'DepartmentId', 'ProjectPlannedUserTypologyGroupId', 'ProjectPlannedUserId', 'EstimateItemDetailId', 'ProjectPlannedTime'],
  // The catalogue gives this query no parameters but its count takes ProjectId/ProjectNumber; the
  // engine resolves a count's parameters through the counted query, so they are mapped here.
  parameters: { ProjectId: 'ProjectId', ProjectNumber: 'ProjectNumber' },
  // As the platform's statement: entries with a typology group, a user and a quote line (whose department,
  // division and company must exist), of projects that are neither Draft nor Canceled and have at least one
  // estimate that is neither. Times are in days: hours / the quote-line company's daily RequiredHours;
  // income is those days × the entry's actual sell rate (an hourly rate: kept as the platform computes it).
  source: (ctx) => sql`
    select
      cl.id as "ClientId",
      cl.name as "Client",
      p.id as "ProjectId",
      ${numberAndName('p')} as "Project",
      p.number as "ProjectNumber",
      pr.id as "ProductId",
      pr.name as "Product",
      pc.id as "ClassificationId",
      pc.name as "Classification",
      pn.id as "NatureId",
      pn.name as "Nature",
      d.id as "DepartmentId",
      d.name as "Department",
      tg.id as "ProjectPlannedUserTypologyGroupId",
      tg.name as "ProjectPlannedUserTypologyGroup",
      u.id as "ProjectPlannedUserId",
      ${userName('u')} as "ProjectPlannedUser",
      dt.id as "EstimateItemDetailId",
      m.hours / co.required_hours as "ProjectPlannedContractedTime",
      t.planned_hours / co.required_hours as "ProjectPlannedTime",
      t.planned_hours / co.required_hours * t.actual_sell_rate as "ProjectPlannedIncome",
      t.month as "Month",
      t.actual_sell_rate as "ActualSellRate",
      t.contracted_sell_rate as "ContractedSellRate",
      dt.table_rate as "RateCardSellRate",
      t.comments as "Comments",
      t.description as "Description"
    from project_planned_times t
    join projects p on p.tenant_id = t.tenant_id and p.id = t.project_id
    join workflow_stages s on s.tenant_id = p.tenant_id and s.id = p.stage_id
    join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
    join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
    left join products pr on pr.tenant_id = p.tenant_id and pr.id = p.product_id
    join project_classifications pc on pc.tenant_id = p.tenant_id and pc.id = p.classification_id
    join project_natures pn on pn.tenant_id = p.tenant_id and pn.id = p.nature_id
    join typology_groups tg on tg.tenant_id = t.tenant_id and tg.id = t.typology_group_id
    join users u on u.tenant_id = t.tenant_id and u.id = t.user_id
    join estimate_item_details dt on dt.tenant_id = t.tenant_id and dt.id = t.estimate_item_detail_id
    join departments d on d.tenant_id = dt.tenant_id and d.id = dt.department_id
    join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
    join companies co on co.tenant_id = d.tenant_id and co.id = d.company_id
    -- Contracted time: the quote line's hours in the entry's month.
    left join estimate_item_detail_months m
      on m.tenant_id = t.tenant_id and m.estimate_item_detail_id = t.estimate_item_detail_id and m.month = t.month
    where t.tenant_id = ${ctx.tenantId} and st.name not in ('Draft', 'Canceled')
      and exists (select 1 from estimates e
                    join workflow_stages es on es.tenant_id = e.tenant_id and es.id = e.stage_id
                    join workflow_stage_types est on est.tenant_id = es.tenant_id and est.id = es.stage_type_id
                   where e.tenant_id = p.tenant_id and e.project_id = p.id and est.name not in ('Draft', 'Canceled'))`,
};

export const projectsPlannedTimeCount: NamedQueryDefinition = {
  name: 'DE-ProjectsPlannedTimeCount',
  key: [],
  countOf: 'DE-ProjectsPlannedTime',
  parameters: { ProjectId: 'ProjectId', ProjectNumber: 'ProjectNumber' },
};
