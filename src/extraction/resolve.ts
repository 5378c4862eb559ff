// Finds what a named query name means for a tenant: a catalogue query (with its aliases, count
// queries and user-field columns expanded) or a custom table `CT-{tableName}`, as one ResolvedQuery.
import { type RawBuilder, sql } from 'kysely';
import { mayAccess } from '../custom-tables/catalogue.ts';
import { type CustomTableExtraction, describeCustomTableForExtraction, NAMED_QUERY_PREFIX } from '../custom-tables/extraction.ts';
import type { Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import { HttpProblem, notFound } from '../platform/http/problem.ts';
import {
  CATALOGUE,
  type CatalogueColumn,
  type CatalogueEntry,
  type ColumnType,
  type NamedQueryDefinition,
  type ParameterName,
  type QueryContext,
} from './definition.ts';
import { NAMED_QUERIES } from './queries/index.ts';

export interface ResolvedQuery {
  /** The canonical name (catalogue spelling, or `CT-{tableName}`). */
  name: string;
  purpose: string;
  /** The columns of the rows answered (for a count query: Count). */
  columns: CatalogueColumn[];
  /** The columns filters, orderBy and parameters address: the rows of `source`. */
  filterColumns: CatalogueColumn[];
  key: string[];
  /** A SELECT producing filterColumns. */
  source: RawBuilder<unknown>;
  /** Columns only parameters address (NamedQueryDefinition.hiddenColumns). */
  hiddenColumns: CatalogueColumn[];
  /** Parameters the catalogue lets this query take, and the column each applies to. */
  allowedParameters: ParameterName[];
  parameterColumns: Partial<Record<ParameterName, string>>;
  visibility?: NamedQueryDefinition['visibility'];
  /** Count queries answer one row {"Count": n} over the rows of source. */
  isCount: boolean;
}

const fold = (s: string) => s.toLowerCase();
const entries = new Map<string, CatalogueEntry>();
for (const e of CATALOGUE) for (const n of [e.name, ...e.aliases]) entries.set(fold(n), e);
const definitions = new Map<string, NamedQueryDefinition>(NAMED_QUERIES.map((d) => [fold(d.name), d]));

export const catalogueEntry = (name: string): CatalogueEntry | undefined => entries.get(fold(name));
export const definitionOf = (name: string): NamedQueryDefinition | undefined => definitions.get(fold(name));
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
    return customTableQuery(table);
  }
  const entry = catalogueEntry(name);
  if (!entry) throw notFound(`No named query "${name}". GET /api/v3/analytics/named-queries lists them.`);
  const ctx: QueryContext = { tenantId: principal.tenantId, userId: principal.userId };
  const definition = definitionOf(entry.name);
  if (!definition) throw new HttpProblem(501, `The named query ${entry.name} is not available yet.`);
  if (definition.countOf) {
    const baseEntry = catalogueEntry(definition.countOf);
    const base = definitionOf(definition.countOf);
    if (!baseEntry || !base) throw new HttpProblem(501, `The named query ${entry.name} is not available yet.`);
    const counted = await expand(trx, ctx, baseEntry, base);
    return {
      ...counted,
      name: entry.name,
      purpose: entry.purpose,
      columns: [{ name: 'Count', type: 'integer' }],
      allowedParameters: entry.parameters,
      parameterColumns: { ...counted.parameterColumns, ...definition.parameters },
      isCount: true,
    };
  }
  return expand(trx, ctx, entry, definition);
}

async function expand(trx: Trx, ctx: QueryContext, entry: CatalogueEntry, def: NamedQueryDefinition): Promise<ResolvedQuery> {
  if (!def.source) throw new HttpProblem(501, `The named query ${entry.name} is not available yet.`);
  let columns = entry.columns;
  let source = def.source(ctx);
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
    source = sql`select ${sql.join([
      ...fixed.map((c) => sql.id('u', c.name)),
      ...extra.map((f) => sql`${userField(f)} as ${sql.id(f.name)}`),
      ...hidden.map((c) => sql.id('u', c.name)),
    ])} from (${source}) as u`;
  }
  return {
    name: entry.name,
    purpose: entry.purpose,
    columns,
    filterColumns: columns,
    key: def.key,
    source,
    hiddenColumns: hidden,
    allowedParameters: entry.parameters,
    parameterColumns: def.parameters ?? {},
    visibility: def.visibility,
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
function customTableQuery(t: CustomTableExtraction): ResolvedQuery {
  const columns: CatalogueColumn[] = t.columns.map((c) => ({
    name: c.name,
    type: c.dataType === 'numeric' ? (c.columnDataTypeId === 3 ? 'integer' : 'decimal') : c.dataType,
  }));
  const select = t.columns.map((c) => {
    const ref = sql.id('t', c.sqlColumn);
    return sql`${c.dataType === 'object' ? sql`encode(${ref}, 'base64')` : ref} as ${sql.id(c.name)}`;
  });
  return {
    name: `${NAMED_QUERY_PREFIX}${t.tableName}`,
    purpose: `custom table ${t.tableName}`,
    columns,
    filterColumns: columns,
    key: [t.keyColumn.name],
    source: sql`select ${sql.join(select)} from ${sql.id(t.schema, t.table)} as t`,
    hiddenColumns: [],
    allowedParameters: [],
    parameterColumns: {},
    isCount: false,
  };
}
