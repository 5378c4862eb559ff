// OData reads over the same engine as dynamic-execute: system query options become a query builder
// body ($filter -> filters, $select -> fields, $orderby, $top/$skip), pages are capped server-side.
import { listTables, NAMED_QUERY_PREFIX } from '../../custom-tables/service.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import type { DatabaseHandle, Trx } from '../../platform/db/database.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { CATALOGUE } from '../definition.ts';
import { executePage } from '../pages/execute.ts';
import { plan } from '../service.ts';
import { compileODataFilter } from './compile-filter.ts';
import { type EntityModel, entityModel, odataName } from './model.ts';
import { type Node, parseFilter } from './parse-filter.ts';

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

/** `keyFilter`: the condition of a key lookup (entitySet(key)), parsed by keyPredicate; `db`: whose kept counts answer (count-cache.ts). */
export async function readEntitySet(
  trx: Trx,
  principal: Principal,
  entitySet: string,
  o: ODataOptions,
  pageSize: number,
  keyFilter?: (model: EntityModel) => Node,
  db?: DatabaseHandle,
): Promise<ODataPage> {
  const name = queryNameOf(entitySet);
  const model = entityModel((await plan(trx, principal, name, {}, true)).query);
  const filterable = new Map(model.query.filterColumns.map((c) => [odataName(c.name).toLowerCase(), c]));
  // The columns $filter and the key condition read, so the page plan knows what its conditions need.
  const reads = new Set<string>();
  const property = (p: string) => {
    const c = filterable.get(p.toLowerCase());
    if (c) reads.add(c.name);
    return c;
  };
  const keyCondition = keyFilter?.(model);
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
      return { field: column.name, direction: dir.toLowerCase() };
    });
  const tree = o.$filter ? parseFilter(o.$filter) : null;
  const conditions = [tree, keyCondition ?? null].filter((n): n is Node => n !== null);
  const planned = await plan(trx, principal, name, { queryBuilder: { skip, take, orderBy, fields: fields.map((f) => f.column) } }, true);
  for (const n of conditions) planned.plan.where.push(compileODataFilter(n, property));
  for (const c of reads) planned.plan.reads.add(c);
  const page = await executePage(trx, planned.query, planned.plan, 'keys-first', db);
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

/** Splits `A=1,B='x,y'` at the commas outside string literals. */
function splitKey(text: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "'") quoted = !quoted;
    else if (text[i] === ',' && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

/**
 * The condition of a key lookup `DE_TimeSheets(<key>)`: one literal for a single-property key, or
 * `Name=literal` pairs naming every key property (OData URL conventions §4.3.1).
 */
export function keyPredicate(text: string): (model: EntityModel) => Node {
  return (model) => {
    const invalid = (message: string) => badRequest(`The key (${text}) is invalid: ${message}`, [{ path: '/path/key', message }]);
    if (model.query.isCount || model.key.length === 0) throw invalid(`${model.entitySet} has no key; read it with $filter`);
    const literal = (s: string): Node => {
      const node = s ? parseFilter(s) : null;
      if (node?.kind !== 'literal' || node.type === 'null') throw invalid(`${JSON.stringify(s)} is not a literal such as 42, 'text' or a GUID`);
      return node;
    };
    const parts = splitKey(text);
    let pairs: [string, Node][];
    if (parts.length === 1 && !/^[A-Za-z_][A-Za-z0-9_]*\s*=/.test(parts[0])) {
      if (model.key.length !== 1) throw invalid(`${model.entitySet} has a composite key; name each part: ${model.key.map((k) => `${k}=…`).join(',')}`);
      pairs = [[model.key[0], literal(parts[0])]];
    } else {
      pairs = parts.map((p) => {
        const eq = p.indexOf('=');
        const name = model.key.find((k) => k.toLowerCase() === p.slice(0, Math.max(0, eq)).trim().toLowerCase());
        if (!name) throw invalid(`${JSON.stringify(p)} does not name a key property (${model.key.join(', ')})`);
        return [name, literal(p.slice(eq + 1).trim())];
      });
      const named = new Set(pairs.map(([k]) => k));
      if (named.size !== pairs.length || named.size !== model.key.length) throw invalid(`name each key property once: ${model.key.join(', ')}`);
    }
    return pairs
      .map(([name, value]): Node => ({ kind: 'compare', op: 'eq', left: { kind: 'property', name }, right: value }))
      .reduce((left, right) => ({ kind: 'logic', op: 'and', left, right }));
  };
}
