// Finds what a named query name means for a tenant: a catalogue query (with its aliases, count
// queries and user-field columns expanded) or a custom table `CT-{tableName}`, as one ResolvedQuery.
import { type RawBuilder, sql } from 'kysely';
import { type CustomTableExtraction, describeCustomTableForExtraction, mayAccess, NAMED_QUERY_PREFIX } from '../../custom-tables/service.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem, notFound } from '../../platform/errors.ts';
import {
  CATALOGUE,
  type CatalogueColumn,
  type CatalogueEntry,
  type ColumnType,
  type NamedQueryDefinition,
  type ParameterName,
  type QueryContext,
} from '../definition.ts';
import { NAMED_QUERIES } from '../queries/index.ts';

export interface ResolvedQuery {
  /** The canonical name (catalogue spelling, or `CT-{tableName}`). */
  name: string;
  /** The tenant it was resolved for (its source filters on it). */
  tenantId: string;
  purpose: string;
  /** The columns of the rows answered (for a count query: Count). */
  columns: CatalogueColumn[];
  /** The columns filters, orderBy and parameters address: the rows of `source`. */
  filterColumns: CatalogueColumn[];
  key: string[];
  /** A SELECT producing filterColumns, built for reading every row (exports, the single-statement page). */
  source: RawBuilder<unknown>;
  /** The same rows built for the keys-first page and its count (QueryContext.plan 'keys'). */
  keysSource: RawBuilder<unknown>;
  /** NamedQueryDefinition.narrow, built for the caller. */
  narrow: { columns: ReadonlySet<string>; source: RawBuilder<unknown> }[];
  /** Columns only parameters address (NamedQueryDefinition.hiddenColumns). */
  hiddenColumns: CatalogueColumn[];
  /** Parameters the catalogue lets this query take, and the column each applies to. */
  allowedParameters: ParameterName[];
  parameterColumns: Partial<Record<ParameterName, string>>;
  /** NamedQueryDefinition.aggregate: a page is one statement with its count as a window (execute.ts). */
  aggregate?: boolean;
  /** NamedQueryDefinition.keyTable: a kept count is brought up to date by the rows its inserts added. */
  keyTable?: string;
  /** Count queries answer one row {"Count": n} over the rows of source. */
  isCount: boolean;
  /** NamedQueryDefinition.countExcludes of a count query. */
  countExcludes?: NamedQueryDefinition['countExcludes'];
}

const fold = (s: string) => s.toLowerCase();

/** A catalogue query that answers rows, with its definition's source. */
interface RowsQuery {
  entry: CatalogueEntry;
  def: NamedQueryDefinition;
  source: NonNullable<NamedQueryDefinition['source']>;
}
/** A catalogue query and its definition; a count query carries the query whose rows it counts. */
type Defined = (RowsQuery & { countOf?: undefined }) | { entry: CatalogueEntry; def: NamedQueryDefinition; countOf: RowsQuery };

/**
 * Every catalogue name and alias -> its definition. Built once at load, and the server refuses to start
 * when a catalogue query has no definition: every named query exists, so none answers "not available".
 */
const defined = ((): Map<string, Defined> => {
  const definitions = new Map<string, NamedQueryDefinition>(NAMED_QUERIES.map((d) => [fold(d.name), d]));
  const rowsQuery = (name: string): RowsQuery => {
    const entry = CATALOGUE.find((e) => fold(e.name) === fold(name));
    const def = definitions.get(fold(name));
    if (!entry || !def?.source) throw new Error(`The named query ${name} has no definition with a source in src/extraction/queries.`);
    return { entry, def, source: def.source };
  };
  const found = new Map<string, Defined>();
  for (const entry of CATALOGUE) {
    const def = definitions.get(fold(entry.name));
    const resolved: Defined = def?.countOf ? { entry, def, countOf: rowsQuery(def.countOf) } : rowsQuery(entry.name);
    for (const n of [entry.name, ...entry.aliases]) found.set(fold(n), resolved);
  }
  return found;
})();

export const isCustomTableName = (name: string): boolean => name.toUpperCase().startsWith(NAMED_QUERY_PREFIX);

/** Resolves a name for this tenant and caller; unknown names are a 404, unreadable custom tables a 403. */
export async function resolveQuery(trx: Trx, principal: Principal, name: string): Promise<ResolvedQuery> {
  if (isCustomTableName(name)) {
    const table = await describeCustomTableForExtraction(trx, name.slice(NAMED_QUERY_PREFIX.length));
    if (!table) throw notFound(`No named query "${name}": the tenant has no custom table "${name.slice(NAMED_QUERY_PREFIX.length)}".`);
    if (!mayAccess(principal, { readRoles: table.readRoles, saveRoles: [] }, 'read')) {
      throw new HttpProblem(403, `Reading custom table "${table.tableName}" requires one of the roles: ${table.readRoles.join(', ')}.`, {
        extra: { requiredRoles: table.readRoles },
      });
    }
    return customTableQuery(table, principal.tenantId);
  }
  const found = defined.get(fold(name));
  if (!found) throw notFound(`No named query "${name}". GET /api/v3/analytics/named-queries lists them.`);
  const ctx: QueryContext = { tenantId: principal.tenantId, userId: principal.userId };
  if (found.countOf) {
    const counted = await expand(trx, ctx, found.countOf);
    return {
      ...counted,
      name: found.entry.name,
      purpose: found.entry.purpose,
      columns: [{ name: 'Count', type: 'integer' }],
      allowedParameters: found.entry.parameters,
      parameterColumns: { ...counted.parameterColumns, ...found.def.parameters },
      isCount: true,
      countExcludes: found.def.countExcludes,
    };
  }
  return expand(trx, ctx, found);
}

async function expand(trx: Trx, ctx: QueryContext, { entry, def, source: sourceOf }: RowsQuery): Promise<ResolvedQuery> {
  let columns = entry.columns;
  let source = sourceOf({ ...ctx, plan: 'scan' });
  let keysSource = sourceOf({ ...ctx, plan: 'keys' });
  const hidden = def.hiddenColumns ?? [];
  if (def.userFields) {
    const fixed = entry.columns.filter((c) => c.name !== '*');
    const taken = new Set(fixed.map((c) => c.name));
    const found = await def.userFields.fields(ctx).execute(trx);
    const extra: { name: string; type: ColumnType }[] = [];
    for (const f of found.rows) {
      if (taken.has(f.name)) continue;
      taken.add(f.name);
      extra.push(f);
    }
    columns = [...fixed, ...extra.map((f) => ({ name: f.name, type: f.type }))];
    const withFields = (inner: RawBuilder<unknown>) =>
      sql`select ${sql.join([
        ...fixed.map((c) => sql.id('u', c.name)),
        ...extra.map((f) => sql`${userField(f)} as ${sql.id(f.name)}`),
        ...hidden.map((c) => sql.id('u', c.name)),
      ])} from (${inner}) as u`;
    source = withFields(source);
    keysSource = withFields(keysSource);
  }
  return {
    name: entry.name,
    tenantId: ctx.tenantId,
    purpose: entry.purpose,
    columns,
    filterColumns: columns,
    key: def.key,
    source,
    keysSource,
    narrow: def.userFields ? [] : (def.narrow ?? []).map((n) => ({ columns: new Set(n.columns), source: n.source(ctx) })),
    aggregate: def.aggregate,
    keyTable: def.keyTable,
    hiddenColumns: hidden,
    allowedParameters: entry.parameters,
    parameterColumns: def.parameters ?? {},
    isCount: false,
  };
}

const CASTS: Record<ColumnType, string> = {
  string: 'text',
  guid: 'uuid',
  decimal: 'numeric',
  integer: 'bigint',
  boolean: 'boolean',
  date: 'date',
  datetime: 'timestamptz',
  object: 'jsonb',
};

function userField(f: { name: string; type: ColumnType }): RawBuilder<unknown> {
  const fields = sql.id('u', '__fields');
  if (f.type === 'object') return sql`${fields} -> ${f.name}`;
  if (f.type === 'string') return sql`${fields} ->> ${f.name}`;
  return sql`(${fields} ->> ${f.name})::${sql.raw(CASTS[f.type])}`;
}

/** Custom tables: columns as the tenant named them; Integer is integer, Float and Money decimal; VarBinary as base64. */
function customTableQuery(t: CustomTableExtraction, tenantId: string): ResolvedQuery {
  const columns: CatalogueColumn[] = t.columns.map((c) => ({
    name: c.name,
    type: c.dataType === 'numeric' ? (c.columnDataTypeId === 3 ? 'integer' : 'decimal') : c.dataType,
  }));
  const select = t.columns.map((c) => {
    const ref = sql.id('t', c.sqlColumn);
    return sql`${c.dataType === 'object' ? sql`encode(${ref}, 'base64')` : ref} as ${sql.id(c.name)}`;
  });
  const source = sql`select ${sql.join(select)} from ${sql.id(t.schema, t.table)} as t`;
  return {
    name: `${NAMED_QUERY_PREFIX}${t.tableName}`,
    tenantId,
    purpose: `custom table ${t.tableName}`,
    columns,
    filterColumns: columns,
    key: [t.keyColumn.name],
    source,
    keysSource: source,
    narrow: [],
    hiddenColumns: [],
    allowedParameters: [],
    parameterColumns: {},
    isCount: false,
  };
}
