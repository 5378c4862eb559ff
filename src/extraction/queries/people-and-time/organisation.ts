// Named queries over the organisation's master data: geography, currencies, companies and their
// structure, holidays, taxes, work types and the business-object-type catalogue.
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { userFieldsOf, userFieldValues, userName } from '../fragments.ts';

export const organisation: NamedQueryDefinition[] = [
  {
    name: 'DE-Cities',
    key: ['CityId'],
    source: (ctx) => sql`
      select ci.id as "CityId", ci.name as "City", co.id as "CountryId", co.name as "Country"
        from cities ci
        left join countries co on co.tenant_id = ci.tenant_id and co.id = ci.country_id
       where ci.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Countries',
    key: ['CountryId'],
    source: (ctx) => sql`
      select co.id as "CountryId", co.name as "Country"
        from countries co
       where co.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Currencies',
    key: ['CurrencyId'],
    source: (ctx) => sql`
      select cu.id as "CurrencyId", cu.name as "Currency", cu.iso_code as "IsoCode", cu.symbol as "Symbol",
             cu.modified_on_utc as "ModifiedOn"
        from currencies cu
       where cu.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Companies',
    key: ['CompanyId'],
    source: (ctx) => sql`
      select c.name as "Name", c.code as "Code", c.id as "Oid", c.name as "Company", c.id as "CompanyId",
             c.image_file_id is not null as "CompanyHasImage",
             cu.name as "Currency", c.currency_id as "CurrencyId", c.timesheet_start as "TimesheetStart",
             c.resource_type as "ResourceType", c.project_article_id as "ProjectArticle", c.hours_type as "HoursType",
             c.required_hours as "RequiredHours", c.margin_type as "MarginType",
             art.name as "Article", art.id as "ArticleId",
             c.created_on_utc as "CreatedOnUtc", c.created_by_id as "CreatedById", ${userName('cb')} as "CreatedBy",
             cb.image_file_id is not null as "CreatedByHasImage",
             c.modified_on_utc as "ModifiedOnUtc", c.modified_on_utc as "ModifiedOn", c.modified_by_id as "ModifiedById",
             ${userName('mb')} as "ModifiedBy", mb.image_file_id is not null as "ModifiedByHasImage"
        from companies c
        left join currencies cu on cu.tenant_id = c.tenant_id and cu.id = c.currency_id
        -- Article/ArticleId: the project article, as the platform's statement joins it.
        left join services art on art.tenant_id = c.tenant_id and art.id = c.project_article_id
        left join users cb on cb.tenant_id = c.tenant_id and cb.id = c.created_by_id
        left join users mb on mb.tenant_id = c.tenant_id and mb.id = c.modified_by_id
       where c.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-CompaniesAdditionalInformation',
    key: ['CompanyId'],
    // ModifiedFrom has no output column (the fixed columns are CompanyId, Company): it filters a hidden one.
    parameters: { ModifiedFrom: 'ModifiedOnUtc' },
    hiddenColumns: [{ name: 'ModifiedOnUtc', type: 'datetime' }],
    userFields: { fields: userFieldsOf('Company') },
    source: (ctx) => sql`
      select c.id as "CompanyId", c.name as "Company", ${userFieldValues('c.id', 'Company')} as "__fields",
             c.modified_on_utc as "ModifiedOnUtc"
        from companies c
       where c.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Divisions',
    key: ['DivisionId'],
    source: (ctx) => sql`
      select c.id as "CompanyId", c.name as "Company", dv.id as "DivisionId", dv.name as "Division"
        from divisions dv
        left join companies c on c.tenant_id = dv.tenant_id and c.id = dv.company_id
       where dv.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Departments',
    key: ['DepartmentId'],
    source: (ctx) => sql`
      select c.id as "CompanyId", c.name as "Company", dv.id as "DivisionId", dv.name as "Division",
             d.id as "DepartmentId", d.name as "Department", d.modified_on_utc as "ModifiedOn"
        -- As the platform: a department with its division and the division's company (departments without a division give none).
        from departments d
        join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
        join companies c on c.tenant_id = dv.tenant_id and c.id = dv.company_id
       where d.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Holidays',
    key: ['HolidayId'],
    parameters: { ModifiedFrom: 'ModifiedOn' },
    source: (ctx) => sql`
      select h.date as "Day", c.id as "CompanyId", c.name as "Company", h.id as "HolidayId", h.name as "Holiday",
             h.modified_on_utc as "ModifiedOn"
        from holidays h
        left join companies c on c.tenant_id = h.tenant_id and c.id = h.company_id
       where h.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Taxes',
    key: ['TaxId'],
    source: (ctx) => sql`
      select c.id as "CompanyId", c.name as "Company", c.image_file_id is not null as "CompanyHasImage",
             v.id as "TaxId", v.name as "Tax", v.percentage as "Percentage", v.is_active as "IsActive",
             v.external_id as "ExternalId", v.is_default as "Default"
        from vats v
        left join companies c on c.tenant_id = v.tenant_id and c.id = v.company_id
       where v.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-WorkTypes',
    key: ['WorkTypeId'],
    source: (ctx) => sql`
      select w.id as "WorkTypeId", w.name as "WorkType", c.id as "CompanyId", c.name as "Company"
        from work_types w
        left join companies c on c.tenant_id = w.tenant_id and c.id = w.company_id
       where w.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-BusinessObjectTypes',
    key: ['BusinessObjectTypeId'],
    source: (ctx) => sql`
      select b.id as "BusinessObjectTypeId", b.name as "BusinessObjectType", b.is_default as "Default",
             dt.name as "Document", b.document_type_id as "DocumentId",
             coalesce(b.configuration is not null and b.configuration not in ('{}'::jsonb, '[]'::jsonb, 'null'::jsonb), false)
               as "HasConfiguration"
        from business_object_types b
        left join document_types dt on dt.tenant_id = b.tenant_id and dt.id = b.document_type_id
       where b.tenant_id = ${ctx.tenantId}`,
  },
];
