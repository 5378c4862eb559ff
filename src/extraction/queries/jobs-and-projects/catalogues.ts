// Master data behind projects and jobs: project classifications and types, services and their groups,
// and rate-card columns (one row per column × row of each rate card, with its hourly rate).
import type { NamedQueryDefinition } from '../../definition.ts';
import { sql } from '../../definition.ts';
import { userName } from '../fragments.ts';

export const projectsClassifications: NamedQueryDefinition = {
  name: 'DE-ProjectsClassifications',
  key: ['ProjectClassificationId'],
  source: (ctx) => sql`
    select
      pc.id as "ProjectClassificationId",
      pc.name as "ProjectClassification",
      pc.is_active as "Active",
      pc.billable as "Billable",
      pc.code as "Code",
      pc.is_default as "Default",
      co.name as "Company",
      co.image_file_id is not null as "CompanyHasImage",
      co.id as "CompanyId"
    from project_classifications pc
    join companies co on co.tenant_id = pc.tenant_id and co.id = pc.company_id
    where pc.tenant_id = ${ctx.tenantId}`,
};

/**
 * DE-ProjectsTypes reads project natures on the platform (its ProjectTypeId is DE-Projects' NatureId), so it
 * reads `project_natures` here; a nature's document type is the Project document type.
 */
export const projectsTypes: NamedQueryDefinition = {
  name: 'DE-ProjectsTypes',
  key: ['ProjectTypeId'],
  source: (ctx) => sql`
    select
      pn.id as "DocumentOid",
      pn.id as "ProjectTypeId",
      pn.name as "ProjectType",
      co.name as "Company",
      co.id as "CompanyId",
      co.image_file_id is not null as "CompanyHasImage",
      dt.name as "DocumentType",
      pn.template_file_name as "TemplateFileName",
      pn.allows_timesheet as "AllowsTimesheet",
      pn.is_deliverable as "IsDeliverable",
      pn.is_active as "Active"
    from project_natures pn
    join companies co on co.tenant_id = pn.tenant_id and co.id = pn.company_id
    join document_types dt on dt.tenant_id = pn.tenant_id and dt.class_name = 'Project'
    where pn.tenant_id = ${ctx.tenantId}`,
};

export const services: NamedQueryDefinition = {
  name: 'DE-Services',
  key: ['ServiceId'],
  source: (ctx) => sql`
    select
      sv.id as "Oid",
      sv.id as "ServiceId",
      sv.name as "Service",
      co.name as "Company",
      co.id as "CompanyId",
      co.image_file_id is not null as "CompanyHasImage",
      sv.is_active as "Active",
      sv.internal_service as "InternalService",
      sv.department_required as "DepartmentRequired",
      sv.unit_hour as "UnitHour",
      sv.default_margin as "DefaultMargin",
      sv.external_id as "ExternalId",
      sv.vat_deductible_percentage as "VatDeductiblePercentage",
      sv.unit as "Unit",
      sg.id as "ServiceGroupId",
      sg.name as "ServiceGroup"
    from services sv
    join companies co on co.tenant_id = sv.tenant_id and co.id = sv.company_id
    left join service_groups sg on sg.tenant_id = sv.tenant_id and sg.id = sv.service_group_id
    where sv.tenant_id = ${ctx.tenantId}`,
};

export const servicesGroups: NamedQueryDefinition = {
  name: 'DE-ServicesGroups',
  key: ['ServiceGroupId'],
  source: (ctx) => sql`
    select
      sg.id as "Oid",
      sg.id as "ServiceGroupId",
      sg.name as "ServiceGroup",
      co.name as "Company",
      co.id as "CompanyId",
      co.image_file_id is not null as "CompanyHasImage"
    from service_groups sg
    join companies co on co.tenant_id = sg.tenant_id and co.id = sg.company_id
    where sg.tenant_id = ${ctx.tenantId}`,
};

export const rateCardsColumns: NamedQueryDefinition = {
  name: 'DE-RateCardsColumns',
  // As the platform: one row per cell that holds a rate, of a row with a typology group (empty cells and
  // rows without a group give none). Active/StartDate/EndDate are the column's: the model keeps validity there.
  key: ['RateCardColumnId', 'RateCardItemId'],
  source: (ctx) => sql`
    select
      rc.id as "RateCardId",
      rc.name as "RateCard",
      col.id as "RateCardColumnId",
      col.name as "RateCardColumn",
      it.id as "RateCardItemId",
      v.id as "RateCardItemValueId",
      col.is_active as "Active",
      col.start_date as "StartDate",
      col.end_date as "EndDate",
      cur.id as "CurrencyId",
      cur.name as "Currency",
      co.id as "CompanyId",
      co.name as "Company",
      d.id as "RateCardItemDepartmentId",
      d.name as "RateCardItemDepartment",
      tg.id as "RateCardItemTypologyGroupId",
      tg.name as "RateCardItemTypologyGroup",
      u.id as "RateCardItemUserId",
      ${userName('u')} as "RateCardItemUser",
      v.value as "Cost"
    from rate_card_columns col
    join rate_cards rc on rc.tenant_id = col.tenant_id and rc.id = col.rate_card_id
    join rate_card_items it on it.tenant_id = rc.tenant_id and it.rate_card_id = rc.id
    join companies co on co.tenant_id = rc.tenant_id and co.id = rc.company_id
    join currencies cur on cur.tenant_id = rc.tenant_id and cur.id = rc.currency_id
    join rate_card_item_values v on v.tenant_id = it.tenant_id and v.rate_card_item_id = it.id and v.rate_card_column_id = col.id
    left join departments d on d.tenant_id = it.tenant_id and d.id = it.department_id
    join typology_groups tg on tg.tenant_id = it.tenant_id and tg.id = it.typology_group_id
    left join users u on u.tenant_id = it.tenant_id and u.id = it.user_id
    where col.tenant_id = ${ctx.tenantId}`,
};
