// Named queries over estimates: the estimates with their cost and sell totals, their billing
// conditions, their quote lines and the monthly split of those lines, and the matching counts.

import { estimateAmounts, estimateCounts, LINE_COST, LINE_COST_VAT, LINE_HOURS_COST, LINE_HOURS_INCOME, LINE_INCOME } from '../../../domain/money.ts';
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { numberAndName, userName, utcMidnight } from '../fragments.ts';

/** Joins of the estimate `e` every estimate query shows: department, stage, client, contract, project, product, currency. */
const ESTIMATE_JOINS = sql`
      join departments d on d.tenant_id = e.tenant_id and d.id = e.department_id
      join commercial_clients cc on cc.tenant_id = e.tenant_id and cc.id = e.commercial_client_id
      left join workflow_stages ws on ws.tenant_id = e.tenant_id and ws.id = e.stage_id
      left join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
      left join contracts ct on ct.tenant_id = e.tenant_id and ct.id = e.contract_id
      left join projects p on p.tenant_id = e.tenant_id and p.id = e.project_id
      left join products pr on pr.tenant_id = e.tenant_id and pr.id = e.product_id
      join currencies cur on cur.tenant_id = e.tenant_id and cur.id = e.currency_id`;

/** The joins of a quote line `dt` that decide which lines there are: its item, estimate and ESTIMATE_JOINS' inner joins. */
const QUOTE_LINE_ROWS = sql`
      join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
      join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
      join departments d on d.tenant_id = e.tenant_id and d.id = e.department_id
      join commercial_clients cc on cc.tenant_id = e.tenant_id and cc.id = e.commercial_client_id
      join currencies cur on cur.tenant_id = e.tenant_id and cur.id = e.currency_id`;

/** Joins of a quote line `dt` (of item `i`): supplier, services, resource department, typology group, user. */
const QUOTE_LINE_JOINS = sql`
      left join suppliers su on su.tenant_id = dt.tenant_id and su.id = dt.supplier_id
      left join services sv on sv.tenant_id = dt.tenant_id and sv.id = dt.service_id
      left join departments dd on dd.tenant_id = dt.tenant_id and dd.id = dt.department_id
      left join typology_groups tg on tg.tenant_id = dt.tenant_id and tg.id = dt.typology_group_id
      left join users du on du.tenant_id = dt.tenant_id and du.id = dt.user_id`;

export const estimates: NamedQueryDefinition[] = [
  {
    // Estimates whose stage is neither Draft nor Canceled (as the platform's report). Cost VAT is the
    // line's (supplier) VAT, sell VAT the item's VAT; client-direct values are outside the sell totals.
    name: 'DE-Estimates',
    key: ['EstimateId'],
    parameters: { ModifiedFrom: 'ModifiedOn', EstimateId: 'EstimateId', EstimateNumber: 'EstimateNumber' },
    source: (ctx) => sql`
      select
        e.id as "EstimateId", ${numberAndName('e')} as "Estimate", e.number as "EstimateNumber",
        d.id as "DepartmentId", d.name as "Department", e.modified_on_utc as "ModifiedOn",
        ws.id as "StageId", ws.name as "Stage", jt.id as "TypeId", jt.name as "Type", cc.id as "ClientId", cc.name as "Client",
        ct.id as "ContractId", ${numberAndName('ct')} as "Contract", p.id as "ProjectId", ${numberAndName('p')} as "Project",
        pr.id as "ProductId", pr.name as "Product", cur.id as "CurrencyId", cur.name as "Currency", e.exchange as "Exchange",
        e.date as "StartDate", e.expiration_date as "EndDate",
        rc.id as "RateCardId", rc.name as "RateCard", rcc.id as "RateCardColumnId", rcc.name as "RateCardColumn",
        (select string_agg(coalesce(tag ->> 'label', tag #>> '{}'), ', ' order by n)
           from jsonb_array_elements(case when jsonb_typeof(e.tags) = 'array' then e.tags else '[]'::jsonb end) with ordinality as x(tag, n)
        ) as "Tags",
        t.cost as "ValueWithoutTaxCost", t.cost_vat as "TaxValueCost", t.cost + t.cost_vat as "ValueWithTaxCost",
        t.sell as "ValueWithoutTaxSell", t.sell_vat as "TaxValueSell", t.sell + t.sell_vat as "ValueWithTaxSell"
      from estimates e
      ${ESTIMATE_JOINS}
      left join job_types jt on jt.tenant_id = e.tenant_id and jt.id = e.type_id
      left join rate_cards rc on rc.tenant_id = e.tenant_id and rc.id = e.rate_card_id
      left join rate_card_columns rcc on rcc.tenant_id = e.tenant_id and rcc.id = e.rate_card_column_id
      ${estimateAmounts('estimate', 'e.id', 't')}
      where e.tenant_id = ${ctx.tenantId} and ${estimateCounts('wst')}`,
  },
  { name: 'DE-EstimatesCount', key: [], countOf: 'DE-Estimates' },
  {
    // Company and client are the estimate's (the company of its department: estimates carry no company);
    // BillingClient = name (external id), the platform's NameAndExternalId. A condition without a billing client
    // (the model allows one; the platform's inner join would drop it) is kept.
    name: 'DE-EstimatesBillingConditions',
    key: ['BillingConditionId'],
    source: (ctx) => sql`
      select
        bcn.id as "BillingConditionId", e.id as "EstimateId", ${numberAndName('e')} as "Estimate", e.number as "EstimateNumber",
        bc.id as "BillingClientId", bc.name || coalesce(' (' || bc.external_id || ')', '') as "BillingClient", bcn.condition_type as "Type", bcn.frequency as "Frequency",
        pc.name as "PaymentCondition", pc.id as "PaymentConditionId", bcn.amount_type as "AmountType",
        bcn.percentage as "Percentage", bcn.value as "Value", bcn.your_reference as "YourReference", bcn.date as "Date",
        bcn.day_of_month as "DayOfMonth", bcn.day_of_week as "DayOfWeek",
        co.id as "CompanyId", co.name as "Company", cc.id as "ClientId", cc.name as "Client"
      from estimate_billing_conditions bcn
      join estimates e on e.tenant_id = bcn.tenant_id and e.id = bcn.estimate_id
      join departments d on d.tenant_id = e.tenant_id and d.id = e.department_id
      join companies co on co.tenant_id = d.tenant_id and co.id = d.company_id
      join commercial_clients cc on cc.tenant_id = e.tenant_id and cc.id = e.commercial_client_id
      left join billing_clients bc on bc.tenant_id = bcn.tenant_id and bc.id = bcn.billing_client_id
      left join payment_conditions pc on pc.tenant_id = bcn.tenant_id and pc.id = bcn.payment_condition_id
      where bcn.tenant_id = ${ctx.tenantId}`,
  },
  {
    // One row per quote line (estimate item detail), with its item's totals repeated on each line.
    name: 'DE-EstimatesQuotes',
    key: ['EstimateItemDetailId'],
    // The line with only the joins that decide which lines there are, for keys and counts: planning the
    // source's twenty lookups cost more than running a page.
    narrow: [
      {
        columns: ['EstimateItemDetailId', 'EstimateItemId', 'EstimateId', 'EstimateNumber', 'ModifiedOn', 'DepartmentId', 'ClientId', 'CurrencyId'],
        source: (ctx) => sql`
          select dt.id as "EstimateItemDetailId", i.id as "EstimateItemId", e.id as "EstimateId", e.number as "EstimateNumber",
                 e.modified_on_utc as "ModifiedOn", d.id as "DepartmentId", cc.id as "ClientId", cur.id as "CurrencyId"
            from estimate_item_details dt
            ${QUOTE_LINE_ROWS}
           where dt.tenant_id = ${ctx.tenantId}`,
      },
    ],
    source: (ctx) => sql`
      select
        e.id as "EstimateId", ${numberAndName('e')} as "Estimate", e.number as "EstimateNumber",
        d.id as "DepartmentId", d.name as "Department", e.modified_on_utc as "ModifiedOn", ws.id as "StageId", ws.name as "Stage",
        cc.id as "ClientId", cc.name as "Client", ${numberAndName('qc')} as "Contract", qc.id as "ContractId",
        p.id as "ProjectId", ${numberAndName('p')} as "Project",
        i.id as "EstimateItemId", i.name as "EstimateItem", i.description as "EstimateItemDescription",
        dt.description as "EstimateItemDetailDescription", su.id as "SupplierId", su.name as "Supplier",
        sv.id as "ServiceId", sv.name as "Service", dt.detail_type as "EstimateItemDetailType",
        dd.id as "EstimateItemDetailDepartmentId", dd.name as "EstimateItemDetailDepartment",
        tg.id as "EstimateItemDetailTypologyGroupId", tg.name as "EstimateItemDetailTypologyGroup",
        du.id as "EstimateItemDetailUserId", ${userName('du')} as "EstimateItemDetailUser",
        pr.id as "ProductId", pr.name as "Product", br.id as "BrandId", br.name as "Brand", dt.id as "EstimateItemDetailId",
        cur.id as "CurrencyId", cur.name as "Currency", e.exchange as "Exchange",
        isv.id as "EstimateItemServiceId", isv.name as "EstimateItemService", i.is_retainer as "EstimateItemRetainer",
        i.quantity as "EstimateItemQuantityIncome", it.sell as "EstimateItemValueWithoutVatIncome",
        it.sell_vat as "EstimateItemVatValueIncome", it.sell + it.sell_vat as "EstimateItemValueWithVatIncome",
        i.client_direct_value as "EstimateItemClientDirectTotal",
        it.sell + it.sell_vat + i.client_direct_value as "EstimateItemValueWithVatIncomeWithClientDirect",
        ${LINE_HOURS_COST} as "EstimateItemDetailCost", ${LINE_HOURS_INCOME} as "EstimateItemDetailIncome",
        dt.table_rate as "EstimateItemDetailTableRate", dt.unit_price_cost as "EstimateItemDetailUnitPriceCost",
        ${LINE_HOURS_INCOME} as "EstimateItemDetailUnitPriceIncome",
        dt.discount_cost as "DiscountCost", dt.quantity_cost as "QuantityCost", ${LINE_COST} as "ValueWithoutVatCost",
        ${LINE_COST_VAT} as "VatValueCost", ${LINE_COST} + ${LINE_COST_VAT} as "ValueWithVatCost",
        dt.discount_income as "DiscountIncome", dt.quantity_income as "QuantityIncome", dt.agency_commission_value as "AgencyCommissionValue",
        ${LINE_INCOME} as "ValueWithoutVatIncome", ${LINE_INCOME} - ${LINE_COST} as "Margin",
        case when ${LINE_INCOME} <> 0 then round((${LINE_INCOME} - ${LINE_COST}) * 100 / ${LINE_INCOME}, 4) end as "MarginPercentage"
      from estimate_item_details dt
      join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
      join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
      ${ESTIMATE_JOINS}
      left join brands br on br.tenant_id = pr.tenant_id and br.id = pr.brand_id
      left join contracts qc on qc.tenant_id = e.tenant_id and qc.id = coalesce(e.contract_id, p.contract_id)
      left join services isv on isv.tenant_id = i.tenant_id and isv.id = i.service_id
      left join vats cv on cv.tenant_id = dt.tenant_id and cv.id = dt.vat_id
      ${QUOTE_LINE_JOINS}
      ${estimateAmounts('item', 'i.id', 'it')}
      where dt.tenant_id = ${ctx.tenantId}`,
  },
  { name: 'DE-EstimatesQuotesCount', key: [], countOf: 'DE-EstimatesQuotes' },
  {
    // As the platform's statement: the resource lines (with a typology group) of estimates that are neither
    // Draft nor Canceled, one row per month of the line's split (a line without a split gives one row with a
    // null month); Cost/Income = the line's unit price × the month's hours.
    name: 'DE-EstimatesQuotesMonth',
    key: ['EstimateItemDetailId', 'EstimateItemDetailMonth'],
    // The resource lines' months with only the joins that decide which there are, for keys and counts.
    narrow: [
      {
        columns: ['EstimateItemDetailId', 'EstimateItemDetailMonth', 'EstimateId', 'EstimateNumber', 'DepartmentId', 'ClientId', 'CurrencyId'],
        source: (ctx) => sql`
          select dt.id as "EstimateItemDetailId", ${utcMidnight('m.month')} as "EstimateItemDetailMonth", e.id as "EstimateId",
                 e.number as "EstimateNumber", d.id as "DepartmentId", cc.id as "ClientId", cur.id as "CurrencyId"
            from estimate_item_details dt
            ${QUOTE_LINE_ROWS}
            left join workflow_stages ws on ws.tenant_id = e.tenant_id and ws.id = e.stage_id
            left join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
            left join estimate_item_detail_months m on m.tenant_id = dt.tenant_id and m.estimate_item_detail_id = dt.id
            join typology_groups tg on tg.tenant_id = dt.tenant_id and tg.id = dt.typology_group_id
           where dt.tenant_id = ${ctx.tenantId} and wst.name not in ('Draft', 'Canceled')`,
      },
    ],
    source: (ctx) => sql`
      select
        e.id as "EstimateId", ${numberAndName('e')} as "Estimate", e.number as "EstimateNumber",
        d.id as "DepartmentId", d.name as "Department", ws.id as "StageId", ws.name as "Stage",
        cc.id as "ClientId", cc.name as "Client", p.id as "ProjectId", ${numberAndName('p')} as "Project",
        i.name as "EstimateItem", i.description as "EstimateItemDescription",
        dd.id as "EstimateItemDetailDepartmentId", dd.name as "EstimateItemDetailDepartment",
        tg.id as "EstimateItemDetailTypologyGroupId", tg.name as "EstimateItemDetailTypologyGroup",
        du.id as "EstimateItemDetailUserId", ${userName('du')} as "EstimateItemDetailUser",
        dt.description as "EstimateItemDetailDescription", pr.id as "ProductId", pr.name as "Product", dt.id as "EstimateItemDetailId",
        cur.id as "CurrencyId", cur.name as "Currency", e.exchange as "Exchange",
        m.hours as "EstimateItemDetailTime", dt.unit_price_cost * m.hours as "EstimateItemDetailCost",
        dt.unit_price_income * m.hours as "EstimateItemDetailIncome",
        ${utcMidnight('m.month')} as "EstimateItemDetailMonth",
        dt.table_rate as "EstimateItemDetailTableRate", dt.unit_price_cost as "EstimateItemDetailUnitPriceCost"
      from estimate_item_details dt
      join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
      join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
      ${ESTIMATE_JOINS}
      left join estimate_item_detail_months m on m.tenant_id = dt.tenant_id and m.estimate_item_detail_id = dt.id
      join typology_groups tg on tg.tenant_id = dt.tenant_id and tg.id = dt.typology_group_id
      left join departments dd on dd.tenant_id = dt.tenant_id and dd.id = dt.department_id
      left join users du on du.tenant_id = dt.tenant_id and du.id = dt.user_id
      where dt.tenant_id = ${ctx.tenantId} and wst.name not in ('Draft', 'Canceled')`,
  },
  { name: 'DE-EstimatesQuotesMonthCount', key: [], countOf: 'DE-EstimatesQuotesMonth' },
];
