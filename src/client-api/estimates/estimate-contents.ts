// What an estimate's answer shows besides its fields: its items with their quote lines and amounts, and its
// totals, in its currency and the company's (docs/data-model.md, "Estimate amounts"). Read by the
// estimate's view hook (estimate-type.ts) and by PUT …/items (estimate-routes.ts).
import { sql } from 'kysely';
import { estimateAmounts } from '../../domain/money.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { Row } from '../documents/registry.ts';

/** Amount columns of a lateral estimateAmounts `a`, in the estimate's currency and (× exchange, cents) the company's. */
const amountJson = (a: string, exchange: string) => {
  const c = (x: string) => sql.ref(`${a}.${x}`);
  const x = sql.ref(exchange);
  return sql`jsonb_build_object(
      'ValueWithoutVatIncome', ${c('sell')}, 'VatValueIncome', ${c('sell_vat')}, 'ValueWithVatIncome', ${c('sell')} + ${c('sell_vat')},
      'ValueWithoutVatCost', ${c('cost')}, 'VatValueCost', ${c('cost_vat')}, 'ValueWithVatCost', ${c('cost')} + ${c('cost_vat')},
      'CompanyValueWithoutVatIncome', round(${c('sell')} * ${x}, 2), 'CompanyVatValueIncome', round(${c('sell_vat')} * ${x}, 2),
      'CompanyValueWithVatIncome', round(${c('sell')} * ${x}, 2) + round(${c('sell_vat')} * ${x}, 2),
      'CompanyValueWithoutVatCost', round(${c('cost')} * ${x}, 2), 'CompanyVatValueCost', round(${c('cost_vat')} * ${x}, 2),
      'CompanyValueWithVatCost', round(${c('cost')} * ${x}, 2) + round(${c('cost_vat')} * ${x}, 2))`;
};

/** The estimate's totals alone (what PUT …/items answers), by the same rule as its full view. */
export async function estimateTotals(trx: Trx, estimateId: string): Promise<Row> {
  const { rows } = await sql<{ totals: Row }>`
    select ${amountJson('t', 'e.exchange')} || jsonb_build_object('Exchange', e.exchange) as totals
      from estimates e
      ${estimateAmounts('estimate', 'e.id', 't')}
     where e.id = ${estimateId}`.execute(trx);
  return rows[0]?.totals ?? {};
}

const DETAIL_TYPES = ['Resource', 'ThirdParty', 'Expense'];

/** Items (each with its line's prices, details and amounts), and the estimate's totals. */
export async function estimateContents(trx: Trx, estimateId: string): Promise<{ Items: Row[]; Totals: Row }> {
  const { rows } = await sql<{ totals: Row; items: Row[] | null }>`
    select ${amountJson('t', 'e.exchange')} || jsonb_build_object('Exchange', e.exchange) as totals,
      (select jsonb_agg(jsonb_build_object(
          'Id', i.id, 'EstimateId', i.estimate_id, 'Order', i.sort_order, 'Name', i.name, 'Description', i.description, 'VatId', i.vat_id,
          'ArticleId', i.service_id, 'Retainer', i.is_retainer, 'Approved', i.approved, 'Billed', i.billed,
          'AgencyCommissionPercentage', i.agency_commission_percentage, 'ClientDirectValue', i.client_direct_value,
          'QuantityIncome', coalesce(l.quantity_income, 0), 'UnitPriceIncome', coalesce(l.unit_price_income, 0),
          'QuantityCost', coalesce(l.quantity_cost, 0), 'UnitPriceCost', coalesce(l.unit_price_cost, 0),
          'AgencyCommissionValue', coalesce(l.agency_commission_value, 0),
          'Details', (select coalesce(jsonb_agg(jsonb_build_object(
              'Id', d.id, 'EstimateItemId', d.estimate_item_id, 'DetailType', d.detail_type,
              'DetailTypeName', (${DETAIL_TYPES}::text[])[d.detail_type + 1], 'Description', d.description, 'SupplierId', d.supplier_id,
              'ArticleId', d.service_id, 'DepartmentId', d.department_id, 'TypologyGroupId', d.typology_group_id, 'UserId', d.user_id,
              'VatCostId', d.vat_id, 'QuantityIncome', d.quantity_income, 'UnitPriceIncome', d.unit_price_income, 'DiscountIncome', d.discount_income,
              'QuantityCost', d.quantity_cost, 'UnitPriceCost', d.unit_price_cost, 'DiscountCost', d.discount_cost,
              'AgencyCommissionValue', d.agency_commission_value, 'TableRate', d.table_rate) order by d.created_on_utc, d.id), '[]')
            from estimate_item_details d where d.estimate_item_id = i.id and not d.is_item_line)
        ) || ${amountJson('it', 'e.exchange')} order by i.sort_order, i.created_on_utc, i.id)
        from estimate_items i
        left join estimate_item_details l on l.tenant_id = i.tenant_id and l.estimate_item_id = i.id and l.is_item_line
        ${estimateAmounts('item', 'i.id', 'it')}
       where i.estimate_id = e.id) as items
      from estimates e
      ${estimateAmounts('estimate', 'e.id', 't')}
     where e.id = ${estimateId}`.execute(trx);
  return { Items: rows[0]?.items ?? [], Totals: rows[0]?.totals ?? {} };
}
