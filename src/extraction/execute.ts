// Runs a plan: wraps the query's source as `select <fields> from (<source>) q where … order by …,
// <key> limit … offset …`, counts the same filtered rows, and shapes values as the API answers them.
import { type RawBuilder, sql } from 'kysely';
import type { Trx } from '../platform/db/database.ts';
import type { CatalogueColumn } from './definition.ts';
import type { Plan } from './query-builder.ts';
import type { ResolvedQuery } from './resolve.ts';

export interface Page {
  data: Record<string, unknown>[];
  totalCount: number;
}

const from = (q: ResolvedQuery, plan: Plan) => sql`from (${q.source}) as q${plan.where.length ? sql` where ${sql.join(plan.where, sql` and `)}` : sql``}`;

/** The rows of the plan (count queries: the one Count row). `forExport` orders only when asked or paged. */
export function rowsQuery(q: ResolvedQuery, plan: Plan, forExport = false): RawBuilder<Record<string, unknown>> {
  if (q.isCount) return sql`select count(*) as "Count" ${from(q, plan)}`;
  const select = sql.join(plan.fields.map((c) => sql.id('q', c.name)));
  const paged = plan.take !== null || plan.skip > 0;
  const order = !forExport || paged || plan.orderBy.length ? orderBy(q, plan) : sql``;
  const limit = plan.take !== null ? sql` limit ${plan.take}` : sql``;
  const offset = plan.skip > 0 ? sql` offset ${plan.skip}` : sql``;
  return sql`select ${select} ${from(q, plan)}${order}${limit}${offset}`;
}

/**
 * ORDER BY the asked fields, then the key, so pages never overlap or skip rows with equal values. Strings
 * sort ignoring case (collation atrium_ci, migration 0010), as the platform's case-insensitive collation does.
 */
function orderBy(q: ResolvedQuery, plan: Plan): RawBuilder<unknown> {
  const terms = plan.orderBy.map((o) => sql`${sortValue(o.column)} ${o.desc ? sql`desc` : sql`asc`}`);
  // A key ordered ignoring case can still tie (A-1 and a-1), so it is then also ordered exactly.
  const exact = new Set(plan.orderBy.filter((o) => o.column.type !== 'string').map((o) => o.column.name));
  for (const k of q.key) if (!exact.has(k)) terms.push(sql`${sql.id('q', k)} asc`);
  return terms.length ? sql` order by ${sql.join(terms)}` : sql``;
}

export function countQuery(q: ResolvedQuery, plan: Plan): RawBuilder<{ n: string }> {
  return sql<{ n: string }>`select count(*) as "n" ${from(q, plan)}`;
}

export async function executePage(trx: Trx, q: ResolvedQuery, plan: Plan): Promise<Page> {
  const { rows } = await rowsQuery(q, plan).execute(trx);
  const columns = q.isCount ? q.columns : plan.fields;
  const data = rows.map((r) => shapeRow(r, columns));
  if (q.isCount) return { data, totalCount: data.length };
  // A non-empty page shorter than take ends the result: no second scan needed.
  const complete = plan.take !== null && rows.length < plan.take && (rows.length > 0 || plan.skip === 0);
  const totalCount = complete ? plan.skip + rows.length : Number((await countQuery(q, plan).execute(trx)).rows[0].n);
  return { data, totalCount };
}

/** Values as the API answers them: decimals and bigints as JSON numbers, datetimes ISO 8601 UTC. */
export function shapeRow(row: Record<string, unknown>, columns: CatalogueColumn[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c.name] = shapeValue(row[c.name], c);
  return out;
}

function shapeValue(v: unknown, c: CatalogueColumn): unknown {
  if (v === null || v === undefined) return null;
  switch (c.type) {
    case 'decimal':
    case 'integer': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'datetime':
      return v instanceof Date ? (Number.isNaN(v.getTime()) ? null : v.toISOString()) : v;
    case 'date':
      return v instanceof Date ? v.toISOString().slice(0, 10) : v;
    default:
      return v;
  }
}

const sortValue = (c: CatalogueColumn): RawBuilder<unknown> =>
  c.type === 'string' ? sql`${sql.id('q', c.name)} collate atrium_ci` : sql`${sql.id('q', c.name)}`;
