// OData reads over the same engine as dynamic-execute: system query options become a query builder
// body ($filter -> filters, $select -> fields, $orderby, $top/$skip), pages are capped server-side.
import { listTables } from '../../custom-tables/catalogue.ts';
import { NAMED_QUERY_PREFIX } from '../../custom-tables/extraction.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { CATALOGUE } from '../definition.ts';
import { dynamicExecute, plan } from '../service.ts';
import { odataFilterToDevExtreme } from './filter.ts';
import { type EntityModel, entityModel, odataName } from './model.ts';

/** Rows per OData page unless the client prefers fewer (Prefer: odata.maxpagesize). */
export const ODATA_PAGE_SIZE = 5000;

export async function entityModels(trx: Trx, principal: Principal): Promise<EntityModel[]> {
  const names = CATALOGUE.map((e) => e.name);
  for (const t of await listTables(trx, principal)) names.push(`${NAMED_QUERY_PREFIX}${t.TableName}`);
  const models: EntityModel[] = [];
  for (const name of names) models.push(entityModel((await plan(trx, principal, name, {}, true)).query));
  return models;
}

/** DE_Jobs -> DE-Jobs; CT_Rates -> CT-Rates. */
export function queryNameOf(entitySet: string): string {
  const entry = CATALOGUE.find((e) => odataName(e.name).toLowerCase() === entitySet.toLowerCase());
  if (entry) return entry.name;
  if (/^CT_/i.test(entitySet)) return `${NAMED_QUERY_PREFIX}${entitySet.slice(3)}`;
  throw notFound(`No entity set ${entitySet}; the service document at /odata/v4/ lists them.`);
}

export interface ODataOptions {
  $filter?: string;
  $select?: string;
  $orderby?: string;
  $top?: string;
  $skip?: string;
  $count?: string;
}

export interface ODataPage {
  model: EntityModel;
  value: Record<string, unknown>[];
  count: number;
  /** Options of the next page, when there is one. */
  next: { skip: number; top: number | null } | null;
}

const nonNegative = (v: string | undefined, name: string): number | null => {
  if (v === undefined || v === '') return null;
  if (!/^\d{1,15}$/.test(v))
    throw badRequest(`${name} must be a non-negative integer`, [{ path: `/query/${name}`, message: 'must be a non-negative integer' }]);
  return Number(v);
};

export async function readEntitySet(trx: Trx, principal: Principal, entitySet: string, o: ODataOptions, pageSize: number): Promise<ODataPage> {
  const name = queryNameOf(entitySet);
  const model = entityModel((await plan(trx, principal, name, {}, true)).query);
  const filterable = new Map(model.query.filterColumns.map((c) => [odataName(c.name).toLowerCase(), c.name]));
  const property = (p: string) => filterable.get(p.toLowerCase());
  const output = new Map(model.properties.map((p) => [p.property.toLowerCase(), p]));

  const top = nonNegative(o.$top, '$top');
  const skip = nonNegative(o.$skip, '$skip') ?? 0;
  const take = Math.min(pageSize, top ?? pageSize);
  const fields =
    o.$select && o.$select.trim() !== '*'
      ? o.$select.split(',').map((s) => {
          const p = output.get(s.trim().toLowerCase());
          if (!p) throw badRequest(`$select names an unknown property ${s.trim()}`, [{ path: '/query/$select', message: `unknown property ${s.trim()}` }]);
          return p;
        })
      : model.properties;
  const orderBy = (o.$orderby ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((term) => {
      const [prop, dir = 'asc', ...more] = term.split(/\s+/);
      const column = property(prop);
      if (!column || more.length || !/^(asc|desc)$/i.test(dir)) {
        throw badRequest(`$orderby is invalid at "${term}"`, [{ path: '/query/$orderby', message: `expected "Property [asc|desc]", got "${term}"` }]);
      }
      return { field: column, direction: dir.toLowerCase() };
    });
  const filters = o.$filter ? odataFilterToDevExtreme(o.$filter, property) : [];
  const page = await dynamicExecute(trx, principal, name, {
    queryBuilder: { skip, take, orderBy, fields: fields.map((f) => f.column), filters },
  });
  const value = page.data.map((row) => {
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      const v = row[f.column];
      out[f.property] = f.type === 'object' && v !== null && typeof v !== 'string' ? JSON.stringify(v) : v;
    }
    return out;
  });
  const end = top === null ? page.totalCount : Math.min(page.totalCount, skip + top);
  const next = skip + value.length < end && value.length > 0 ? { skip: skip + value.length, top: top === null ? null : top - value.length } : null;
  return { model, value, count: page.totalCount, next };
}
