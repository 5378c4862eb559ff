// The money rules, one definition each, used by every query that shows an amount: the Data Extraction
// named queries and the Client API's estimates and expenses (docs/data-model.md, "Estimate amounts").
import { type RawBuilder, sql } from 'kysely';

/**
 * VAT of a net amount at a percentage, rounded to cents per line (as on an invoice line), so
 * ValueWithVat = ValueWithoutVat + VatValue holds exactly. Every document's VAT is computed this way.
 */
export const lineVat = (net: RawBuilder<unknown>, percentage: RawBuilder<unknown>): RawBuilder<string> =>
  sql`round(${net} * coalesce(${percentage}, 0) / 100, 2)::numeric(19,4)`;

/**
 * LEFT JOIN LATERAL `t` with the totals of a money document (bill, purchase order, expense sheet) from
 * its lines `li` in `itemsTable` whose `ownerColumn` is `ownerIdColumn`: net = Σ `lineNet`, vat = Σ
 * lineVat of each line's net at the line's VAT. Null (no row values) for a document without lines.
 */
export function documentTotals(
  itemsTable: 'bill_items' | 'purchase_order_items' | 'expense_items',
  ownerColumn: 'bill_id' | 'purchase_order_id' | 'expense_sheet_id',
  ownerIdColumn: string,
  lineNet: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`left join lateral (
        select round(sum(${lineNet}), 4) as net, sum(${lineVat(lineNet, sql`v.percentage`)}) as vat
        from ${sql.table(itemsTable)} li
        left join vats v on v.tenant_id = li.tenant_id and v.id = li.vat_id
        where li.tenant_id = ${sql.ref(ownerIdColumn.replace(/\.id$/, '.tenant_id'))} and ${sql.ref(`li.${ownerColumn}`)} = ${sql.ref(ownerIdColumn)}
      ) t on true`;
}

// Estimate amounts (docs/data-model.md, "Estimate amounts"). In the estimate's own currency a quote
// line's cost and income are rounded to cents, its VAT is lineVat of that; an item's and an estimate's
// amounts are the exact sums of their lines. In the company currency, amounts are the estimate's
// amounts times its exchange rate, summed unrounded and rounded to cents once, on the figure shown.

/**
 * The platform's quote-line figures (DE-EstimatesQuotes, DE-EstimatesQuotesMonth): a line's hours are its
 * sold quantity (`quantity_income`, hours for a resource line); its cost and income are unit price × hours,
 * without discount or commission, unrounded.
 */
export const LINE_HOURS_COST: RawBuilder<string> = sql`(dt.unit_price_cost * dt.quantity_income)`;
export const LINE_HOURS_INCOME: RawBuilder<string> = sql`(dt.unit_price_income * dt.quantity_income)`;

/** Cost of the quote line `dt`: quantity × unit cost − cost discount, in cents. */
export const LINE_COST: RawBuilder<string> = sql`round(dt.quantity_cost * dt.unit_price_cost - dt.discount_cost, 2)`;

/** Income (sell) of the quote line `dt`: quantity × unit price − discount + agency commission, in cents. */
export const LINE_INCOME: RawBuilder<string> = sql`round(dt.quantity_income * dt.unit_price_income - dt.discount_income + dt.agency_commission_value, 2)`;

/** Cost VAT of the quote line `dt` at its own (supplier) VAT joined as `cv`. */
export const LINE_COST_VAT: RawBuilder<string> = lineVat(LINE_COST, sql`cv.percentage`);

/** Income VAT of the quote line `dt` at its item's VAT joined as `iv`; client-direct values are not agency income. */
export const LINE_INCOME_VAT: RawBuilder<string> = lineVat(LINE_INCOME, sql`iv.percentage`);

/**
 * LEFT JOIN LATERAL `alias` with the amounts of one estimate (`scope` 'estimate', id in `idColumn`) or
 * one estimate item ('item'), in the estimate's currency: cost, cost_vat, sell, sell_vat, each the sum
 * of its quote lines (0 when it has none).
 */
export function estimateAmounts(scope: 'estimate' | 'item', idColumn: string, alias: string): RawBuilder<unknown> {
  const owner = sql.ref(idColumn);
  const ownerTenant = sql.ref(idColumn.replace(/\.id$/, '.tenant_id'));
  // The items are `ei`, not `i`, so that an owner column of an outer item `i` still names the outer one.
  const match = scope === 'estimate' ? sql`ei.estimate_id = ${owner}` : sql`ei.id = ${owner}`;
  return sql`left join lateral (
      select coalesce(sum(${LINE_COST}), 0) as cost, coalesce(sum(${LINE_COST_VAT}), 0) as cost_vat,
             coalesce(sum(${LINE_INCOME}), 0) as sell, coalesce(sum(${LINE_INCOME_VAT}), 0) as sell_vat
        from estimate_items ei
        join estimate_item_details dt on dt.tenant_id = ei.tenant_id and dt.estimate_item_id = ei.id
        left join vats cv on cv.tenant_id = dt.tenant_id and cv.id = dt.vat_id
        left join vats iv on iv.tenant_id = ei.tenant_id and iv.id = ei.vat_id
       where ei.tenant_id = ${ownerTenant} and ${match}
    ) ${sql.raw(alias)} on true`;
}

/**
 * Whether an estimate counts in its project's and contract's figures: its stage type (joined as
 * `stageTypeAlias`) is neither Draft nor Canceled. An estimate without a stage counts.
 */
export const estimateCounts = (stageTypeAlias: string): RawBuilder<boolean> =>
  sql<boolean>`coalesce(${sql.ref(`${stageTypeAlias}.name`)}, '') not in ('Draft', 'Canceled')`;
