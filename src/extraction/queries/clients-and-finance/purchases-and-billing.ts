// Named queries over the money documents: bills, purchase orders, expense sheets and their expense
// items. Values are summed from the document's lines; per-user flags use the calling user.

import { documentTotals, lineVat } from '../../../domain/money.ts';
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { currentUserRowId, forCurrentUser, inCurrentUserDepartment, numberAndName, userName } from '../fragments.ts';

export const purchasesAndBilling: NamedQueryDefinition[] = [
  {
    name: 'DE-Bills',
    key: ['BillId'],
    source: (ctx) => sql`
      select
        b.id as "Oid", b.id as "DocumentOid", b.id as "BillId", b.name as "Bill", b.number as "BillNumber",
        b.due_date as "Due", b.date as "Date", b.management_date as "ManagementDate",
        co.name as "Company", co.id as "CompanyId", co.image_file_id is not null as "CompanyHasImage",
        cg.name as "ClientGroup", cc.name as "Client", cc.id as "ClientId", cc.image_file_id is not null as "ClientHasImage",
        bc.name as "BillingClient",
        b.created_on_utc as "CreatedOnUtc", ${userName('cb')} as "CreatedBy", b.created_by_id as "CreatedById",
        cb.image_file_id is not null as "CreatedByHasImage",
        b.modified_on_utc as "ModifiedOnUtc", ${userName('mb')} as "ModifiedBy", b.modified_by_id as "ModifiedById",
        mb.image_file_id is not null as "ModifiedByHasImage",
        p.id as "ProjectId", ${numberAndName('p')} as "Project", ct.id as "ContractId", ${numberAndName('ct')} as "Contract",
        e.id as "EstimateId", ${numberAndName('e')} as "Estimate", d.name as "Department",
        cur.name as "Currency", cur.iso_code as "CurrencyIsoCode", cur.symbol as "CurrencySymbol", pc.name as "PaymentCondition",
        b.your_reference as "YourReference",
        coalesce(t.net, 0) as "ValueWithoutVat", coalesce(t.vat, 0) as "VatValue", coalesce(t.net + t.vat, 0) as "ValueWithVat",
        b.external_id is not null as "External", b.external_id as "ExternalId", b.external_error as "ExternalError",
        b.paid as "Paid", b.paid_value as "PaidValue", b.remarks as "Remarks",
        ws.name as "Stage", ws.color as "StageColor", wst.name as "StateType", wst.name as "StageType",
        ${forCurrentUser(ctx, 'document_reads', 'b.id')} as "AlreadyRead", ${forCurrentUser(ctx, 'assignments', 'b.id')} as "CurrentUserInTeam",
        ${currentUserRowId(ctx, 'document_reads', 'b.id')} as "BaseObjectReadId", ${currentUserRowId(ctx, 'favorites', 'b.id')} as "FavoriteId",
        ${forCurrentUser(ctx, 'favorites', 'b.id')} as "IsFavorite"
      from bills b
      join companies co on co.tenant_id = b.tenant_id and co.id = b.company_id
      join commercial_clients cc on cc.tenant_id = b.tenant_id and cc.id = b.commercial_client_id
      left join client_groups cg on cg.tenant_id = cc.tenant_id and cg.id = cc.client_group_id
      join billing_clients bc on bc.tenant_id = b.tenant_id and bc.id = b.billing_client_id
      left join users cb on cb.tenant_id = b.tenant_id and cb.id = b.created_by_id
      left join users mb on mb.tenant_id = b.tenant_id and mb.id = b.modified_by_id
      left join projects p on p.tenant_id = b.tenant_id and p.id = b.project_id
      left join contracts ct on ct.tenant_id = b.tenant_id and ct.id = b.contract_id
      left join estimates e on e.tenant_id = b.tenant_id and e.id = b.estimate_id
      -- The platform shows the estimate's department (none without an estimate).
      left join departments d on d.tenant_id = e.tenant_id and d.id = e.department_id
      join currencies cur on cur.tenant_id = b.tenant_id and cur.id = b.currency_id
      left join payment_conditions pc on pc.tenant_id = b.tenant_id and pc.id = b.payment_condition_id
      left join workflow_stages ws on ws.tenant_id = b.tenant_id and ws.id = b.stage_id
      left join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
      ${documentTotals('bill_items', 'bill_id', 'b.id', sql`li.quantity * li.unit_price`)}
      where b.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-PurchaseOrders',
    key: ['Oid'],
    source: (ctx) => sql`
      select
        po.id as "Oid", po.id as "DocumentOid", po.number as "Name", po.number as "Number",
        po.status as "Status", po.financial_status as "FinancialStatus",
        po.created_on_utc as "CreatedOnUtc", po.created_by_id as "CreatedById", ${userName('cb')} as "CreatedBy",
        cb.image_file_id is not null as "CreatedByHasImage",
        po.modified_on_utc as "ModifiedOnUtc", po.modified_by_id as "ModifiedById", ${userName('mb')} as "ModifiedBy",
        mb.image_file_id is not null as "ModifiedByHasImage",
        po.date as "StartDate", po.delivery_date as "DeliveryDate",
        cc.name as "Client", cc.id as "ClientId", cc.image_file_id is not null as "ClientHasImage", d.name as "Department",
        ct.id as "ContractId", ct.name as "Contract", ${numberAndName('p')} as "Project", p.id as "ProjectId",
        e.name as "Estimate", e.id as "EstimateId",
        co.name as "Company", co.id as "CompanyId", co.image_file_id is not null as "CompanyHasImage",
        s.name || coalesce(' (' || s.external_id || ')', '') as "Supplier",
        coalesce(t.net, 0) as "ValueWithoutVat", coalesce(t.net + t.vat, 0) as "ValueWithVat", coalesce(t.vat, 0) as "VatValue",
        po.invoiced as "Invoiced", po.invoiced_value as "InvoicedValue", po.controlled_value as "ControlledValue",
        po.external_id is not null as "External", po.external_id as "ExternalId", po.external_error as "ExternalError",
        wst.name as "StageType", ws.name as "Stage", coalesce(ws.color, wst.color) as "Color",
        ${forCurrentUser(ctx, 'document_reads', 'po.id')} as "AlreadyRead",
        -- The platform's team lookup for purchase orders joins jobs, so it never matches: always false.
        false as "CurrentUserInTeam", false as "CurrentUserPending",
        ${inCurrentUserDepartment(ctx, 'e.department_id')} as "CurrentUserInDepartment",
        cur.iso_code as "CurrencyIsoCode", cur.name as "Currency",
        -- The articles (services) of every line, repeats kept, in line order.
        (select string_agg(sv.name, ', ' order by i.sort_order, i.id)
           from purchase_order_items i
           join services sv on sv.tenant_id = i.tenant_id and sv.id = i.service_id
          where i.tenant_id = po.tenant_id and i.purchase_order_id = po.id) as "Articles"
      from purchase_orders po
      join companies co on co.tenant_id = po.tenant_id and co.id = po.company_id
      join suppliers s on s.tenant_id = po.tenant_id and s.id = po.supplier_id
      -- As the platform: client and department are the estimate's, the contract is the project's.
      left join projects p on p.tenant_id = po.tenant_id and p.id = po.project_id
      left join estimates e on e.tenant_id = po.tenant_id and e.id = po.estimate_id
      left join commercial_clients cc on cc.tenant_id = e.tenant_id and cc.id = e.commercial_client_id
      left join departments d on d.tenant_id = e.tenant_id and d.id = e.department_id
      left join contracts ct on ct.tenant_id = p.tenant_id and ct.id = p.contract_id
      join currencies cur on cur.tenant_id = po.tenant_id and cur.id = po.currency_id
      left join users cb on cb.tenant_id = po.tenant_id and cb.id = po.created_by_id
      left join users mb on mb.tenant_id = po.tenant_id and mb.id = po.modified_by_id
      left join workflow_stages ws on ws.tenant_id = po.tenant_id and ws.id = po.stage_id
      left join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
      ${documentTotals('purchase_order_items', 'purchase_order_id', 'po.id', sql`li.quantity * li.unit_price`)}
      where po.tenant_id = ${ctx.tenantId}`,
  },
  {
    name: 'DE-ExpenseSheets',
    key: ['ExpenseSheetId'],
    source: (ctx) => sql`
      select
        es.id as "ExpenseSheetId", es.number as "ExpenseSheet", es.number as "ExpenseSheetNumber",
        es.external_name as "ExternalName", es.external_error as "ExternalError",
        es.emission_date as "Emission", es.due_date as "Due", es.exchange as "Exchange", es.blocked as "Blocked",
        es.paid as "Paid", es.paid_value as "PaidValue",
        coalesce(t.net + t.vat, 0) as "ValueWithVat", coalesce(t.net, 0) as "ValueWithoutVat", coalesce(t.vat, 0) as "VatValue",
        co.name as "Company", co.id as "CompanyId", es.created_on_utc as "CreatedOnUtc", es.modified_on_utc as "ModifiedOnUtc",
        ${userName('cb')} as "CreatedByName", ${userName('mb')} as "ModifiedByName",
        es.created_by_id as "CreatedById", es.modified_by_id as "ModifiedById"
      from expense_sheets es
      join companies co on co.tenant_id = es.tenant_id and co.id = es.company_id
      left join users cb on cb.tenant_id = es.tenant_id and cb.id = es.created_by_id
      left join users mb on mb.tenant_id = es.tenant_id and mb.id = es.modified_by_id
      ${documentTotals('expense_items', 'expense_sheet_id', 'es.id', sql`li.value_without_vat`)}
      where es.tenant_id = ${ctx.tenantId}`,
  },
  {
    // A row is one expense item; ExpenseId/ExpenseNumber are the item's own id and number, as the platform's
    // statement answers them (the sheet is DE-ExpenseSheets). Company is the sheet's: items carry none.
    name: 'DE-Expenses',
    key: ['ExpenseId'],
    source: (ctx) => sql`
      select
        ei.id as "ExpenseId", ei.number as "ExpenseNumber", ei.billable as "Billable", ei.motive as "Motive",
        et.id as "ExpenseTypeId", et.name as "ExpenseType", co.name as "Company", co.id as "CompanyId",
        v.id as "VatId", v.name as "Vat", v.percentage as "VatPercentage",
        ei.value_without_vat + ${lineVat(sql`ei.value_without_vat`, sql`v.percentage`)} as "ValueWithVat",
        ${lineVat(sql`ei.value_without_vat`, sql`v.percentage`)} as "VatValue",
        ei.created_on_utc as "CreatedOnUtc", ei.modified_on_utc as "ModifiedOnUtc",
        ${userName('cb')} as "CreatedByName", ${userName('mb')} as "ModifiedByName",
        ei.created_by_id as "CreatedById", ei.modified_by_id as "ModifiedById"
      from expense_items ei
      join expense_sheets es on es.tenant_id = ei.tenant_id and es.id = ei.expense_sheet_id
      join expense_types et on et.tenant_id = ei.tenant_id and et.id = ei.expense_type_id
      join companies co on co.tenant_id = es.tenant_id and co.id = es.company_id
      left join vats v on v.tenant_id = ei.tenant_id and v.id = ei.vat_id
      left join users cb on cb.tenant_id = ei.tenant_id and cb.id = ei.created_by_id
      left join users mb on mb.tenant_id = ei.tenant_id and mb.id = ei.modified_by_id
      where ei.tenant_id = ${ctx.tenantId}`,
  },
];
