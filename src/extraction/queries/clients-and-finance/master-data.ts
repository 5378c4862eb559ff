// Named queries over client and supplier master data: clients, their companies, brands and products,
// suppliers and expense types. Not documents: no team, so no visibility rule.
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { userName } from '../fragments.ts';

export const masterData: NamedQueryDefinition[] = [
  {
    name: 'DE-Brands',
    key: ['BrandId'],
    parameters: { ModifiedFrom: 'ModifiedOn' },
    source: (ctx) => sql`
      select cc.id as "ClientId", cc.name as "Client", b.id as "BrandId", b.name as "Brand", b.modified_on_utc as "ModifiedOn"
      from brands b
      join commercial_clients cc on cc.tenant_id = b.tenant_id and cc.id = b.commercial_client_id
      where b.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Clients',
    key: ['ClientId'],
    parameters: { ModifiedFrom: 'ModifiedOn' },
    source: (ctx) => sql`
      select
        cc.id as "DocumentOid", cc.id as "ClientId", cc.name as "Client", cc.external_id as "ExternalId", cc.code as "Code",
        cc.email as "Email", cc.phone as "Phone", cc.head_office as "HeadOffice", cc.street as "Street", cc.street2 as "Street2",
        coalesce(cc.city, ci.name) as "Location", cc.created_on_utc as "CreatedOn", cc.modified_on_utc as "ModifiedOn",
        cc.allows_timesheet as "AllowsTimesheet", cg.id as "ClientGroupId", cg.name as "ClientGroup",
        cc.tax_payer_number as "TaxPayerNumber", cc.margin as "Margin", cc.full_time_employee_time as "FullTimeEmployeeTime",
        cc.supplier_margin as "SupplierMargin", ws.id as "StageId", ws.name as "Stage", wst.id as "StageTypeId", wst.name as "StageType",
        m.id as "ManagerId", ${userName('m')} as "ManagerName", m.image_file_id is not null as "ManagerHasImage",
        o.id as "OwnerId", ${userName('o')} as "OwnerName", o.image_file_id is not null as "OwnerHasImage"
      from commercial_clients cc
      left join cities ci on ci.tenant_id = cc.tenant_id and ci.id = cc.city_id
      left join client_groups cg on cg.tenant_id = cc.tenant_id and cg.id = cc.client_group_id
      left join workflow_stages ws on ws.tenant_id = cc.tenant_id and ws.id = cc.stage_id
      left join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
      left join users m on m.tenant_id = cc.tenant_id and m.id = cc.manager_id
      left join users o on o.tenant_id = cc.tenant_id and o.id = cc.owner_id
      -- Draft clients are left out, as the platform's statement does.
      where cc.tenant_id = ${ctx.tenantId} and wst.name is distinct from 'Draft'`,
  },
  {
    name: 'DE-ClientsCompanies',
    key: ['ClientId', 'CompanyId'],
    source: (ctx) => sql`
      -- Every client, with each company that has access to it (a client without one: a row with nulls), as the platform.
      select cc.id as "ClientId", cc.name as "Client", co.id as "CompanyId", co.name as "Company"
      from commercial_clients cc
      left join client_companies x on x.tenant_id = cc.tenant_id and x.commercial_client_id = cc.id
      left join companies co on co.tenant_id = x.tenant_id and co.id = x.company_id
      where cc.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Products',
    key: ['ProductId'],
    parameters: { ModifiedFrom: 'ModifiedOn' },
    source: (ctx) => sql`
      select cc.id as "ClientId", cc.name as "Client", p.id as "ProductId", p.name as "Product", b.id as "BrandId", b.name as "Brand",
        p.modified_on_utc as "ModifiedOn"
      from products p
      join commercial_clients cc on cc.tenant_id = p.tenant_id and cc.id = p.commercial_client_id
      left join brands b on b.tenant_id = p.tenant_id and b.id = p.brand_id
      where p.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-Suppliers',
    key: ['SupplierId'],
    source: (ctx) => sql`
      select
        s.id as "DocumentOid", s.id as "SupplierId", s.name as "Supplier", co.name as "Company", co.id as "CompanyId",
        dv.name as "Division", dv.id as "DivisionId", d.name as "Department", d.id as "DepartmentId",
        cur.name as "Currency", cur.id as "CurrencyId", v.id as "VatId", v.name as "Vat", s.external_id as "ExternalId",
        s.is_active as "IsActive", pc.id as "PaymentConditionId", pc.name as "PaymentCondition", s.category as "Category",
        s.created_by_id as "CreatedById", ${userName('cb')} as "CreatedBy",
        s.modified_by_id as "ModifiedById", ${userName('mb')} as "ModifiedBy",
        s.created_on_utc as "CreatedOnUtc", s.modified_on_utc as "ModifiedOnUtc", s.email as "Mail", s.remarks as "Remarks",
        s.discount_percentage as "DiscountPercentage", s.volume_discount_percentage as "VolumeDiscountPercentage",
        s.other_creditor as "OtherCreditor", s.street as "Street", s.tax_payer_number as "TaxPayerNumber",
        rd.name as "RelatedDepartment", rd.id as "RelatedDepartmentId", rc.name as "RelatedCompany", rc.id as "RelatedCompanyId",
        cn.name as "Country", coalesce(s.city, ci.name) as "City"
      from suppliers s
      join companies co on co.tenant_id = s.tenant_id and co.id = s.company_id
      left join departments d on d.tenant_id = s.tenant_id and d.id = s.department_id
      left join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
      left join currencies cur on cur.tenant_id = s.tenant_id and cur.id = s.currency_id
      left join vats v on v.tenant_id = s.tenant_id and v.id = s.vat_id
      left join payment_conditions pc on pc.tenant_id = s.tenant_id and pc.id = s.payment_condition_id
      left join users cb on cb.tenant_id = s.tenant_id and cb.id = s.created_by_id
      left join users mb on mb.tenant_id = s.tenant_id and mb.id = s.modified_by_id
      left join departments rd on rd.tenant_id = s.tenant_id and rd.id = s.related_department_id
      left join companies rc on rc.tenant_id = s.tenant_id and rc.id = s.related_company_id
      left join countries cn on cn.tenant_id = s.tenant_id and cn.id = s.country_id
      left join cities ci on ci.tenant_id = s.tenant_id and ci.id = s.city_id
      where s.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-ExpenseType',
    key: ['ExpenseTypeId'],
    source: (ctx) => sql`
      select
        et.id as "ExpenseTypeId", et.name as "ExpenseType", co.name as "Company", co.id as "CompanyId", v.name as "Vat",
        et.external_id as "ExternalId", et.vat_deductible_percentage as "VatDeductiblePercentage", et.value as "Value",
        et.is_active as "Active", et.created_on_utc as "CreatedOnUtc", et.modified_on_utc as "ModifiedOnUtc",
        ${userName('cb')} as "CreatedByName", ${userName('mb')} as "ModifiedByName",
        et.created_by_id as "CreatedById", et.modified_by_id as "ModifiedById"
      from expense_types et
      join companies co on co.tenant_id = et.tenant_id and co.id = et.company_id
      left join vats v on v.tenant_id = et.tenant_id and v.id = et.vat_id
      left join users cb on cb.tenant_id = et.tenant_id and cb.id = et.created_by_id
      left join users mb on mb.tenant_id = et.tenant_id and mb.id = et.modified_by_id
      where et.tenant_id = ${ctx.tenantId}`,
  },
];
