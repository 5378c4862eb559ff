// The SQL fragments the named queries share: one definition of each rule that more than one query
// shows (a user's name, a document's label, per-user flags, delays, user fields, estimated totals). The
// money rules themselves (VAT per line, document totals, estimate amounts) are the shared core's: domain/money.ts.
import type { RawBuilder } from 'kysely';
import { estimateAmounts, estimateCounts } from '../../domain/money.ts';
import { type ColumnType, type QueryContext, sql } from '../definition.ts';

/** A user's display name: the full name, else the login (names are optional, logins are not). */
export const userName = (alias: string): RawBuilder<string> => sql<string>`coalesce(${sql.ref(`${alias}.name`)}, ${sql.ref(`${alias}.user_name`)})`;

/** The label of a numbered document (project, contract, estimate): `Number - Name`. */
export const numberAndName = (alias: string): RawBuilder<string> => sql<string>`${sql.ref(`${alias}.number`)} || ' - ' || ${sql.ref(`${alias}.name`)}`;

/** A calendar date exposed as a catalogue datetime: midnight UTC of that day. */
export const utcMidnight = (column: string): RawBuilder<Date> => sql<Date>`(${sql.ref(column)}::timestamp at time zone 'UTC')`;

/** The calendar day delays are counted from; UTC, like every date the API accepts without an offset. */
const TODAY = sql`(now() at time zone 'UTC')::date`;

/**
 * True when a job is late as the platform decides it: its agreed date is before today and its current
 * stage (joined as `stageAlias`) carries the stage's own Delayed flag (`workflow_stages.delayed`). A job
 * without an agreed date or stage is never delayed.
 */
export const jobIsDelayed = (jobAlias: string, stageAlias: string): RawBuilder<boolean> =>
  sql<boolean>`(${sql.ref(`${jobAlias}.end_date`)} < ${TODAY} and coalesce(${sql.ref(`${stageAlias}.delayed`)}, false))`;

/** Days overdue as the platform reports them: agreed date minus today, negative for a late job. */
export const daysOverdue = (jobAlias: string): RawBuilder<number> => sql<number>`(${sql.ref(`${jobAlias}.end_date`)} - ${TODAY})`;

type PerUserTable = 'document_reads' | 'assignments' | 'favorites' | 'approvals';

/** The per-user link row of `documentIdColumn` for the calling user, as a FROM … WHERE over alias x. */
function perUserWhere(ctx: QueryContext, userId: string, table: PerUserTable, documentIdColumn: string): RawBuilder<unknown> {
  const userColumn = table === 'approvals' ? sql`x.approver_id` : sql`x.user_id`;
  const pending = table === 'approvals' ? sql` and x.status = 'Pending'` : sql``;
  return sql`from ${sql.table(table)} x where x.tenant_id = ${ctx.tenantId} and x.document_id = ${sql.ref(documentIdColumn)} and ${userColumn} = ${userId}${pending}`;
}

/**
 * Whether the calling user has a row in `table` for the document: read it (document_reads, the
 * AlreadyRead flag), is on its team (assignments, CurrentUserInTeam), marked it favourite (favorites,
 * IsFavorite), or has a pending approval on it (approvals, CurrentUserPending). False without an X-AppUser.
 */
export function forCurrentUser(ctx: QueryContext, table: PerUserTable, documentIdColumn: string): RawBuilder<boolean> {
  if (ctx.userId === null) return sql<boolean>`false`;
  return sql<boolean>`exists (select 1 ${perUserWhere(ctx, ctx.userId, table, documentIdColumn)})`;
}

/** The id of the calling user's read mark (BaseObjectReadId) or favourite (FavoriteId) of the document; null without an X-AppUser. */
export function currentUserRowId(ctx: QueryContext, table: 'document_reads' | 'favorites', documentIdColumn: string): RawBuilder<string | null> {
  if (ctx.userId === null) return sql<null>`null::uuid`;
  return sql<string | null>`(select x.id ${perUserWhere(ctx, ctx.userId, table, documentIdColumn)} limit 1)`;
}

/** CurrentUserInDepartment: the calling user belongs to the department in `departmentIdColumn`. */
export const inCurrentUserDepartment = (ctx: QueryContext, departmentIdColumn: string): RawBuilder<boolean> =>
  ctx.userId === null
    ? sql<boolean>`false`
    : sql<boolean>`exists (select 1 from users cu where cu.tenant_id = ${ctx.tenantId} and cu.id = ${ctx.userId} and cu.department_id = ${sql.ref(departmentIdColumn)})`;

/** The tenant's user-defined fields of one document type (by class name), in column order, typed as the catalogue types. */
export const userFieldsOf =
  (className: string) =>
  (ctx: QueryContext): RawBuilder<{ name: string; type: ColumnType }> =>
    sql<{ name: string; type: ColumnType }>`
      select uf.column_name as name,
             case uf.data_type when 'Text' then 'string' when 'Number' then 'decimal' when 'Date' then 'date'
                               when 'Boolean' then 'boolean' else 'guid' end as type
        from user_fields uf
        join document_types dt on dt.tenant_id = uf.tenant_id and dt.id = uf.document_type_id
       where uf.tenant_id = ${ctx.tenantId} and dt.class_name = ${className}
       order by uf.sort_order, uf.column_name`;

/**
 * The `__fields` column of an *AdditionalInformation row: field column name -> stored JSON scalar, for
 * the document whose id is `idColumn` (fields of other document types are ignored).
 */
export const userFieldValues = (idColumn: string, className: string): RawBuilder<unknown> => sql`
  coalesce((select jsonb_object_agg(uf.column_name, v.value order by uf.sort_order)
              from user_field_values v
              join user_fields uf on uf.tenant_id = v.tenant_id and uf.id = v.user_field_id
              join document_types dt on dt.tenant_id = uf.tenant_id and dt.id = uf.document_type_id
             where v.tenant_id = ${sql.ref(idColumn.replace(/\.id$/, '.tenant_id'))} and v.document_id = ${sql.ref(idColumn)}
               and dt.class_name = ${className}), '{}'::jsonb)`;

/**
 * LEFT JOIN LATERAL `alias` with the estimated totals of a project or contract as the platform sums them:
 * the estimates whose `estimateColumn` is `ownerIdColumn` and that count, each estimate's totals (the sum
 * of its lines) **in its own currency**, added without exchange (a project with estimates in two
 * currencies adds the figures as they are: docs/named-queries.md, "Kept as the platform computes it"):
 * cost, cost_tax, sell, sell_tax.
 */
export function estimatedTotals(ctx: QueryContext, estimateColumn: 'project_id' | 'contract_id', ownerIdColumn: string, alias: string): RawBuilder<unknown> {
  return sql`left join lateral (
    select
      coalesce(sum(a.cost), 0) as cost,
      coalesce(sum(a.cost_vat), 0) as cost_tax,
      coalesce(sum(a.sell), 0) as sell,
      coalesce(sum(a.sell_vat), 0) as sell_tax
    from estimates e
    left join workflow_stages es on es.tenant_id = e.tenant_id and es.id = e.stage_id
    left join workflow_stage_types est on est.tenant_id = es.tenant_id and est.id = es.stage_type_id
    ${estimateAmounts('estimate', 'e.id', 'a')}
    where e.tenant_id = ${ctx.tenantId} and ${sql.ref(`e.${estimateColumn}`)} = ${sql.ref(ownerIdColumn)} and ${estimateCounts('est')}
  ) ${sql.raw(alias)} on true`;
}

/** The six Estimated* output columns from an estimatedTotals subquery; WithTax is WithoutTax + Tax. */
export const estimatedColumns = (alias: string): RawBuilder<unknown> => {
  const a = (c: string) => sql.ref(`${alias}.${c}`);
  return sql`${a('cost')} as "EstimatedWithoutTaxCost",
    ${a('cost_tax')} as "EstimatedTaxCost",
    ${a('cost')} + ${a('cost_tax')} as "EstimatedWithTaxCost",
    ${a('sell')} as "EstimatedWithoutTaxSell",
    ${a('sell_tax')} as "EstimatedTaxSell",
    ${a('sell')} + ${a('sell_tax')} as "EstimatedWithTaxSell"`;
};

/**
 * LEFT JOIN `alias` with `alias.value`: the `value` of the user's period (typology history, cost) in force
 * on a day — the latest-starting period covering it, the highest id among equal starts; null when none.
 * For a scan (ctx.plan 'scan') the user's periods are cut into disjoint segments at every start and end,
 * each carrying the value in force, so one hash join on (user, day) serves every row without per-row
 * lookups (they would cost microseconds each on a million-row export). For the keys-first page the same
 * value is an aggregate over a LATERAL `limit 1` index lookup: exactly one row per row, which PostgreSQL can
 * prove, so it drops the join from the key and count phases and looks it up only for the page's rows.
 */
export function periodInForce(
  ctx: QueryContext,
  table: 'user_typology_histories' | 'user_costs',
  value: 'typology_id' | 'hourly_value',
  on: { tenant: string; user: string; day: string },
  alias: string,
): RawBuilder<unknown> {
  const [tenant, user, day] = [sql.ref(on.tenant), sql.ref(on.user), sql.ref(on.day)];
  if (ctx.plan === 'keys') {
    return sql`left join lateral (
        select (array_agg(pf.value))[1] as value
          from (select p.${sql.ref(value)} as value from ${sql.table(table)} p
                 where p.tenant_id = ${tenant} and p.user_id = ${user} and p.start_date <= ${day}
                   and coalesce(p.end_date, 'infinity'::date) >= ${day}
                 order by p.start_date desc, p.id desc limit 1) pf
      ) ${sql.raw(alias)} on true`;
  }
  return sql`left join (with p as (select p.id, p.user_id, p.start_date, coalesce(p.end_date, 'infinity'::date) as end_date, p.${sql.ref(value)} as value
                from ${sql.table(table)} p where p.tenant_id = ${ctx.tenantId}),
        b as (select user_id, start_date as d from p union select user_id, end_date + 1 from p where end_date < 'infinity'::date),
        s as (select user_id, d as start_date, coalesce(lead(d) over (partition by user_id order by d) - 1, 'infinity'::date) as end_date from b)
   select distinct on (s.user_id, s.start_date) s.user_id, s.start_date, s.end_date, p.value
     from s join p on p.user_id = s.user_id and p.start_date <= s.start_date and p.end_date >= s.start_date
    order by s.user_id, s.start_date, p.start_date desc, p.id desc) ${sql.raw(alias)}
      on ${sql.ref(`${alias}.user_id`)} = ${user} and ${day} between ${sql.ref(`${alias}.start_date`)} and ${sql.ref(`${alias}.end_date`)}`;
}
