// The aggregate request of the Data Extraction API (decision 0054): a named query's rows, filtered by the
// same compiler and parameters as dynamic-execute, grouped by one or two columns (a date by day, week or
// month) with one aggregate of a numeric column, computed by PostgreSQL over the whole filtered set.
import { type RawBuilder, sql } from 'kysely';
import type { Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import { badRequest, type FieldError } from '../platform/errors.ts';
import type { CatalogueColumn } from './definition.ts';
import { FieldSet } from './query/compile-filter.ts';
import { planQuery } from './query/query-builder.ts';
import { type ResolvedQuery, resolveQuery } from './query/resolve.ts';

export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];
export const INTERVALS = ['day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];
/** Groups answered by default, and at most (take). groupCount always says how many there are. */
export const DEFAULT_GROUPS = 1_000;
export const MAX_GROUPS = 10_000;
export const MAX_GROUP_BY = 2;
export const ORDERS = ['key', 'valueAsc', 'valueDesc'] as const;

export interface AggregateBody {
  queryBuilder?: { filters?: unknown[] } | null;
  parameters?: Record<string, unknown> | null;
  groupBy?: { field: string; interval?: string }[] | null;
  aggregate: { function: string; field?: string | null };
  order?: string;
  take?: number;
}

export interface AggregateGroup {
  keys: unknown[];
  value: number | null;
  count: number;
}

export interface AggregateAnswer {
  groupBy: { field: string; interval?: Interval }[];
  aggregate: { function: AggregateFunction; field: string | null };
  data: AggregateGroup[];
  /** Groups in the whole filtered set (data holds at most take of them). */
  groupCount: number;
  /** The aggregate over the whole filtered set, and its row count. */
  total: { value: number | null; count: number };
}

const NUMERIC = new Set(['integer', 'decimal']);

interface Grouping {
  column: CatalogueColumn;
  interval?: Interval;
}

/**
 * What a group is formed by: the column, or a date or datetime truncated to its interval as a date (a date as a
 * timestamp without time zone, which truncates without the session's time zone; a datetime at its UTC time).
 */
function groupExpression(g: Grouping): RawBuilder<unknown> {
  const c = sql.id('q', g.column.name);
  if (g.column.type === 'date') return g.interval ? sql`date_trunc(${sql.lit(g.interval)}, ${c}::timestamp)::date` : c;
  if (g.column.type === 'datetime') return sql`date_trunc(${sql.lit(g.interval ?? 'day')}, ${c} at time zone 'UTC')::date`;
  return c;
}

/** A group's key as answered: dates as 'YYYY-MM-DD' (printed once per group, after grouping). */
const groupKey = (g: Grouping): RawBuilder<unknown> =>
  g.column.type === 'date' || g.column.type === 'datetime' ? sql`(${groupExpression(g)})::text` : groupExpression(g);

// Ordered by the grouped expressions (a date orders as its text); strings ignoring case, then exactly.
const keyOrder = (g: Grouping): RawBuilder<unknown> =>
  g.column.type === 'string'
    ? sql`${groupExpression(g)} collate atrium_ci asc nulls last, ${groupExpression(g)} asc`
    : sql`${groupExpression(g)} asc nulls last`;

/** The aggregate of one group and the window over every group that makes it the whole set's. */
function aggregateSql(fn: AggregateFunction, column: CatalogueColumn | null): { value: RawBuilder<unknown>; total: RawBuilder<unknown> } {
  const c = column ? sql.id('q', column.name) : null;
  switch (fn) {
    case 'count':
      return c ? { value: sql`count(${c})`, total: sql`sum(count(${c})) over ()` } : { value: sql`count(*)`, total: sql`sum(count(*)) over ()` };
    case 'sum':
      return { value: sql`sum(${c})`, total: sql`sum(sum(${c})) over ()` };
    case 'avg':
      return { value: sql`avg(${c})`, total: sql`sum(sum(${c})) over () / nullif(sum(count(${c})) over (), 0)` };
    case 'min':
      return { value: sql`min(${c})`, total: sql`min(min(${c})) over ()` };
    case 'max':
      return { value: sql`max(${c})`, total: sql`max(max(${c})) over ()` };
  }
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function shapeKey(v: unknown, g: Grouping): unknown {
  if (v === null || v === undefined) return null;
  if (NUMERIC.has(g.column.type)) return Number(v);
  return v;
}

interface Validated {
  groupings: Grouping[];
  fn: AggregateFunction;
  column: CatalogueColumn | null;
  order: (typeof ORDERS)[number];
  take: number;
}

/** Checks the grouping, the aggregate and the bounds against the query's columns; every problem is one 400. */
function validate(q: ResolvedQuery, body: AggregateBody, reads: Set<string>): Validated {
  const errors: FieldError[] = [];
  const fields = new FieldSet(q.filterColumns, reads);
  if (q.isCount) errors.push({ path: '/', message: `${q.name} is a count query; aggregate the query whose rows it counts` });
  const groupBy = body.groupBy ?? [];
  if (groupBy.length > MAX_GROUP_BY) errors.push({ path: '/groupBy', message: `at most ${MAX_GROUP_BY} fields` });
  const groupings: Grouping[] = [];
  for (const [i, g] of groupBy.slice(0, MAX_GROUP_BY).entries()) {
    const path = `/groupBy/${i}`;
    const column = fields.get(g.field);
    const interval = g.interval === undefined ? undefined : (INTERVALS as readonly string[]).includes(g.interval) ? (g.interval as Interval) : null;
    if (!column) errors.push(fields.unknownField(g.field, `${path}/field`));
    else if (column.type === 'object') errors.push({ path: `${path}/field`, message: `field ${column.name} of type object cannot be grouped by` });
    else if (interval === null) errors.push({ path: `${path}/interval`, message: `must be one of ${INTERVALS.join(', ')}` });
    else if (interval && column.type !== 'date' && column.type !== 'datetime')
      errors.push({ path: `${path}/interval`, message: `field ${column.name} is of type ${column.type}; an interval groups a date or datetime field` });
    else groupings.push({ column, interval: interval ?? (column.type === 'datetime' ? 'day' : undefined) });
  }
  const fn = body.aggregate.function as AggregateFunction;
  if (!AGGREGATE_FUNCTIONS.includes(fn)) errors.push({ path: '/aggregate/function', message: `must be one of ${AGGREGATE_FUNCTIONS.join(', ')}` });
  let column: CatalogueColumn | null = null;
  const field = body.aggregate.field;
  if (field !== undefined && field !== null) {
    const c = fields.get(field);
    if (!c) errors.push(fields.unknownField(field, '/aggregate/field'));
    else if (fn !== 'count' && !NUMERIC.has(c.type))
      errors.push({ path: '/aggregate/field', message: `field ${c.name} is of type ${c.type}; ${fn} needs a numeric field (integer or decimal)` });
    else column = c;
  } else if (fn !== 'count' && AGGREGATE_FUNCTIONS.includes(fn)) errors.push({ path: '/aggregate/field', message: `${fn} needs a numeric field` });
  const order = (body.order ?? 'key') as Validated['order'];
  if (!ORDERS.includes(order)) errors.push({ path: '/order', message: `must be one of ${ORDERS.join(', ')}` });
  const take = body.take ?? DEFAULT_GROUPS;
  if (!Number.isSafeInteger(take) || take < 0 || take > MAX_GROUPS) errors.push({ path: '/take', message: `must be an integer from 0 to ${MAX_GROUPS}` });
  if (errors.length) throw badRequest(`The request is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
  return { groupings, fn, column, order, take };
}

/**
 * The aggregate statement: one scan of the filtered rows grouped by the keys, the whole set's aggregate and
 * the group count as windows over the groups (computed before the limit), ordered and limited to take (at
 * least one row, which carries the totals). It reads the narrowest source that holds the filter, group and
 * aggregate columns (as a page's count does), so PostgreSQL joins only what those columns need.
 */
export function aggregateStatement(q: ResolvedQuery, body: AggregateBody): { statement: RawBuilder<Record<string, unknown>>; validated: Validated } {
  const probe = new Set<string>();
  const v = validate(q, body, probe);
  const plan = planQuery(q, { queryBuilder: { filters: body.queryBuilder?.filters ?? [] }, parameters: body.parameters }, { paged: false });
  const reads = new Set([...plan.reads, ...probe]);
  const covers = (n: ResolvedQuery['narrow'][number]) => [...reads].every((c) => n.columns.has(c));
  const source = q.narrow.find(covers)?.source ?? q.keysSource;
  const keys = v.groupings.map((g, i) => sql`${groupKey(g)} as ${sql.id(`g${i}`)}`);
  const { value, total } = aggregateSql(v.fn, v.column);
  const select = sql.join([
    ...keys,
    sql`${value} as "value"`,
    sql`count(*) as "count"`,
    sql`${total} as "totalValue"`,
    sql`sum(count(*)) over () as "totalCount"`,
    sql`count(*) over () as "groupCount"`,
  ]);
  const where = plan.where.length ? sql` where ${sql.join(plan.where, sql` and `)}` : sql``;
  const groupBy = keys.length ? sql` group by ${sql.join(v.groupings.map(groupExpression))}` : sql``;
  const byValue = v.order === 'key' ? [] : [sql`"value" ${v.order === 'valueDesc' ? sql`desc` : sql`asc`} nulls last`];
  const order = [...byValue, ...v.groupings.map(keyOrder)];
  const limit = Math.max(v.take, 1);
  return {
    statement: sql`select ${select} from (${source}) as q${where}${groupBy}${order.length ? sql` order by ${sql.join(order)}` : sql``} limit ${limit}`,
    validated: v,
  };
}

export async function aggregateNamedQuery(trx: Trx, principal: Principal, name: string, body: AggregateBody): Promise<AggregateAnswer> {
  const q = await resolveQuery(trx, principal, name);
  const { statement, validated: v } = aggregateStatement(q, body);
  const { rows } = await statement.execute(trx);
  const first = rows[0];
  // A grouped statement over no rows answers none: nothing counted, no value (a count is 0).
  const totalValue = first ? num(first.totalValue) : null;
  return {
    groupBy: v.groupings.map((g) => ({ field: g.column.name, ...(g.interval ? { interval: g.interval } : {}) })),
    aggregate: { function: v.fn, field: v.column?.name ?? null },
    data: rows.slice(0, v.take).map((r) => ({ keys: v.groupings.map((g, i) => shapeKey(r[`g${i}`], g)), value: num(r.value), count: Number(r.count) })),
    groupCount: first ? Number(first.groupCount) : 0,
    total: { value: totalValue ?? (v.fn === 'count' ? 0 : null), count: first ? Number(first.totalCount) : 0 },
  };
}
