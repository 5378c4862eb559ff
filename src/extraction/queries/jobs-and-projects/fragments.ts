// SQL pieces shared by the job, project, request and contract queries: per-user flags, the "today"
// that delays are measured against, and the estimated totals of a project or contract.
import type { RawBuilder } from 'kysely';
import { type QueryContext, sql } from '../../definition.ts';

/** The calendar day delays are counted from; UTC, like every date the API accepts without an offset. */
export const TODAY = sql`(now() at time zone 'UTC')::date`;

/** A date column as the start of that day in UTC (the catalogue types some agreed dates as datetime). */
export const utcMidnight = (column: string): RawBuilder<Date> => sql<Date>`(${sql.ref(column)}::timestamp at time zone 'UTC')`;

/** A user's display name: the full name, else the login. */
export const userName = (alias: string): RawBuilder<string> => sql<string>`coalesce(${sql.ref(`${alias}.name`)}, ${sql.ref(`${alias}.user_name`)})`;

/** Stage types whose documents are finished: a job there is never delayed. */
const CLOSED_STAGE_TYPES = sql`('Completed', 'Canceled')`;

/**
 * True when a job (aliases: the job, and its stage type joined as `stageTypeAlias`) is past its agreed
 * date while its stage is still open. A job without an agreed date or stage type is never delayed.
 */
export const jobIsDelayed = (jobAlias: string, stageTypeAlias: string): RawBuilder<boolean> =>
  sql<boolean>`(${sql.ref(`${jobAlias}.end_date`)} < ${TODAY} and coalesce(${sql.ref(`${stageTypeAlias}.name`)}, '') not in ${CLOSED_STAGE_TYPES})`;

/** Days overdue as the platform reports them: agreed date minus today, negative for a late job. */
export const daysOverdue = (jobAlias: string): RawBuilder<number> => sql<number>`(${sql.ref(`${jobAlias}.end_date`)} - ${TODAY})`;

type PerUserTable = 'document_reads' | 'assignments' | 'favorites' | 'approvals';

/** The per-user link row of `documentIdColumn` for the calling user, as a WHERE over alias x. */
function perUserWhere(ctx: QueryContext, userId: string, table: PerUserTable, documentIdColumn: string): RawBuilder<unknown> {
  const userColumn = table === 'approvals' ? sql`x.approver_id` : sql`x.user_id`;
  const pending = table === 'approvals' ? sql` and x.status = 'Pending'` : sql``;
  return sql`from ${sql.table(table)} x where x.tenant_id = ${ctx.tenantId} and x.document_id = ${sql.ref(documentIdColumn)} and ${userColumn} = ${userId}${pending}`;
}

/**
 * Whether the calling user has a row in `table` for the document: read it (document_reads), is on its
 * team (assignments), marked it favourite (favorites), or has a pending approval on it (approvals).
 * Always false without an X-AppUser.
 */
export function forCurrentUser(ctx: QueryContext, table: PerUserTable, documentIdColumn: string): RawBuilder<boolean> {
  if (ctx.userId === null) return sql<boolean>`false`;
  return sql<boolean>`exists (select 1 ${perUserWhere(ctx, ctx.userId, table, documentIdColumn)})`;
}

/** The id of the calling user's read mark or favourite of the document (null without an X-AppUser). */
export function currentUserRowId(ctx: QueryContext, table: 'document_reads' | 'favorites', documentIdColumn: string): RawBuilder<string | null> {
  if (ctx.userId === null) return sql<null>`null::uuid`;
  return sql<string | null>`(select x.id ${perUserWhere(ctx, ctx.userId, table, documentIdColumn)} limit 1)`;
}

/**
 * LATERAL subquery `alias` with the estimated totals of the estimates whose `estimateColumn`
 * (project_id or contract_id) is `ownerIdColumn`: cost, cost_tax, sell, sell_tax, each rounded to
 * money scale and 0 when there is none. Draft and Canceled estimates do not count. Values are
 * converted to the company currency with each estimate's exchange rate, so estimates in other
 * currencies add up. Line cost = quantity × unit price − discount (VAT: the line's supplier VAT);
 * line sell = quantity × unit price − discount + agency commission (VAT: the item's VAT).
 */
export function estimatedTotals(ctx: QueryContext, estimateColumn: 'project_id' | 'contract_id', ownerIdColumn: string, alias: string): RawBuilder<unknown> {
  return sql`left join lateral (
    select
      round(coalesce(sum(v.cost), 0), 4) as cost,
      round(coalesce(sum(v.cost * coalesce(dv.percentage, 0) / 100), 0), 4) as cost_tax,
      round(coalesce(sum(v.sell), 0), 4) as sell,
      round(coalesce(sum(v.sell * coalesce(iv.percentage, 0) / 100), 0), 4) as sell_tax
    from estimates e
    left join workflow_stages es on es.tenant_id = e.tenant_id and es.id = e.stage_id
    left join workflow_stage_types est on est.tenant_id = es.tenant_id and est.id = es.stage_type_id
    join estimate_items i on i.tenant_id = e.tenant_id and i.estimate_id = e.id
    left join vats iv on iv.tenant_id = i.tenant_id and iv.id = i.vat_id
    join estimate_item_details d on d.tenant_id = i.tenant_id and d.estimate_item_id = i.id
    left join vats dv on dv.tenant_id = d.tenant_id and dv.id = d.vat_id
    cross join lateral (
      select
        (d.quantity_cost * d.unit_price_cost - d.discount_cost) * e.exchange as cost,
        (d.quantity_income * d.unit_price_income - d.discount_income + d.agency_commission_value) * e.exchange as sell
    ) v
    where e.tenant_id = ${ctx.tenantId}
      and ${sql.ref(`e.${estimateColumn}`)} = ${sql.ref(ownerIdColumn)}
      and coalesce(est.name, '') not in ('Draft', 'Canceled')
  ) ${sql.raw(alias)} on true`;
}

/** The six Estimated* output columns from an estimatedTotals subquery. */
export const estimatedColumns = (alias: string): RawBuilder<unknown> => {
  const a = (c: string) => sql.ref(`${alias}.${c}`);
  return sql`${a('cost')} as "EstimatedWithoutTaxCost",
    ${a('cost_tax')} as "EstimatedTaxCost",
    ${a('cost')} + ${a('cost_tax')} as "EstimatedWithTaxCost",
    ${a('sell')} as "EstimatedWithoutTaxSell",
    ${a('sell_tax')} as "EstimatedTaxSell",
    ${a('sell')} + ${a('sell_tax')} as "EstimatedWithTaxSell"`;
};
