// Validates a dynamic-execute body (queryBuilder and parameters) against a resolved query and turns
// it into a plan: the fields to answer, the WHERE conditions, the order and the page.
import { type SqlBool, sql } from 'kysely';
import { badRequest, type FieldError, FieldErrorList, moreErrors } from '../../platform/errors.ts';
import type { CatalogueColumn, ParameterName } from '../definition.ts';
import { type Bool, compileCondition, compileFilter, FieldSet } from './compile-filter.ts';
import type { ResolvedQuery } from './resolve.ts';

/** The largest page a JSON call may ask for; CSV and NDJSON exports have no maximum. */
export const MAX_PAGE_SIZE = 10_000;

export interface QueryBuilderInput {
  skip?: number;
  take?: number;
  orderBy?: { field: string; direction?: string }[];
  fields?: string[];
  filters?: unknown[];
}

export interface ExecuteBody {
  queryBuilder?: QueryBuilderInput | null;
  parameters?: Record<string, unknown> | null;
}

export interface Plan {
  fields: CatalogueColumn[];
  where: Bool[];
  orderBy: { column: CatalogueColumn; desc: boolean }[];
  skip: number;
  /** null: every row (exports without take). */
  take: number | null;
  /** The columns `where` and `orderBy` read (filters, parameters, order). */
  reads: Set<string>;
}

const PARAMETER_OPS: Partial<Record<ParameterName, string>> = { ModifiedFrom: '>=', From: '>=', To: '<=' };

export interface PlanOptions {
  /** JSON pages are capped at MAX_PAGE_SIZE; exports stream everything unless take is given. */
  paged: boolean;
}

export function planQuery(q: ResolvedQuery, body: ExecuteBody, opts: PlanOptions): Plan {
  const qb = body.queryBuilder ?? {};
  const errors = new FieldErrorList();
  const reads = new Set<string>();
  const fieldSet = new FieldSet(q.filterColumns, reads);
  const parameterSet = new FieldSet([...q.filterColumns, ...q.hiddenColumns], reads);
  const outputSet = new FieldSet(q.columns);

  const skip = qb.skip ?? 0;
  if (!Number.isSafeInteger(skip) || skip < 0) errors.push({ path: '/queryBuilder/skip', message: 'must be a non-negative integer' });
  let take: number | null = qb.take ?? (opts.paged ? MAX_PAGE_SIZE : null);
  if (take !== null && (!Number.isSafeInteger(take) || take < 0)) errors.push({ path: '/queryBuilder/take', message: 'must be a non-negative integer' });
  else if (opts.paged && take !== null && take > MAX_PAGE_SIZE) {
    errors.push({
      path: '/queryBuilder/take',
      message: `${take} is above the maximum page size of ${MAX_PAGE_SIZE}; page with skip and take, or ask for text/csv or application/x-ndjson to stream every row`,
    });
  }
  if (q.isCount) take = null;

  let fields = q.columns;
  if (qb.fields && qb.fields.length > 0) {
    fields = [];
    const seen = new Set<string>();
    qb.fields.forEach((name, i) => {
      const c = outputSet.get(name);
      if (!c) errors.push(outputSet.unknownField(name, `/queryBuilder/fields/${i}`));
      else if (!seen.has(c.name)) {
        fields.push(c);
        seen.add(c.name);
      }
    });
  }

  const orderBy: Plan['orderBy'] = [];
  for (const [i, o] of (qb.orderBy ?? []).entries()) {
    const c = fieldSet.get(o.field);
    if (!c) errors.push(fieldSet.unknownField(o.field, `/queryBuilder/orderBy/${i}/field`));
    else if (c.type === 'object') errors.push({ path: `/queryBuilder/orderBy/${i}/field`, message: `field ${c.name} of type object cannot be ordered by` });
    else {
      const dir = (o.direction ?? 'asc').toLowerCase();
      if (dir !== 'asc' && dir !== 'desc') errors.push({ path: `/queryBuilder/orderBy/${i}/direction`, message: 'must be asc or desc' });
      orderBy.push({ column: c, desc: dir === 'desc' });
    }
  }

  const where: Bool[] = [];
  for (const [name, value] of Object.entries(body.parameters ?? {})) {
    const path = `/parameters/${name}`;
    const parameter = q.allowedParameters.find((p) => p.toLowerCase() === name.toLowerCase());
    if (!parameter) {
      errors.push({
        path,
        message: `${q.name} does not take the parameter ${name}; ${q.allowedParameters.length ? `it takes: ${q.allowedParameters.join(', ')}` : 'it takes none'}`,
      });
      continue;
    }
    if (value === null || value === undefined) continue;
    const column = parameterSet.get(q.parameterColumns[parameter]);
    if (!column) continue; // catalogue parameter the definition does not map: nothing to apply it to
    const op = PARAMETER_OPS[parameter] ?? '=';
    const paramErrors: FieldError[] = [];
    const condition = compileCondition(column, op, value, path, paramErrors);
    for (const e of paramErrors) errors.push({ path, message: e.message });
    if (condition) where.push(condition);
  }

  let filter: Bool | null = null;
  try {
    filter = compileFilter(qb.filters ?? [], fieldSet);
  } catch (err) {
    const problem = err as { errors?: FieldError[]; extra?: { errorCount?: number } };
    if (!problem.errors) throw err;
    errors.push(...problem.errors);
    errors.total += (problem.extra?.errorCount ?? problem.errors.length) - problem.errors.length;
  }
  if (errors.length) throw badRequest(`The request is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}${moreErrors(errors)}`, errors);
  if (filter) where.push(filter);
  if (q.countExcludes) {
    const { column, values } = q.countExcludes;
    where.push(sql<SqlBool>`coalesce(${sql.id('q', column)} not in (${sql.join(values)}), true)`);
    reads.add(column);
  }
  return { fields, where, orderBy, skip, take, reads };
}
