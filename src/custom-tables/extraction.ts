// What the Data Extraction API needs to serve a custom table as the named query `CT-{tableName}`:
// the physical table and each column's extraction type and SQL column. (The named query itself is
// wired by the Data Extraction surface; this is the contract it builds on.)
import type { Trx } from '../platform/db/database.ts';
import { loadTable, SCHEMA } from './catalogue.ts';
import { type ColumnDef, dataTypeById, type ExtractionDataType } from './column-types.ts';

export const NAMED_QUERY_PREFIX = 'CT-';

export interface ExtractionColumn {
  /** The column name as the tenant spelled it (the field name of the named query). */
  name: string;
  dataType: ExtractionDataType;
  /** Unquoted physical column name; quote it (sql.id / sql.ref) when building SQL. */
  sqlColumn: string;
  /** The spec's ColumnDataType id. */
  columnDataTypeId: number;
}

export interface CustomTableExtraction {
  tableName: string;
  /** `customtables.<physical>`: schema-qualified, lower case; quote as sql.id(schema, table). */
  physicalTable: string;
  schema: string;
  table: string;
  /** Every column, the key first. */
  columns: ExtractionColumn[];
  keyColumn: ExtractionColumn;
  /** The table's Read roles (empty: any user of the tenant); the caller enforces them (see mayAccess). */
  readRoles: string[];
}

const describe = (c: ColumnDef): ExtractionColumn => ({
  name: c.name,
  dataType: dataTypeById(c.dataTypeId)!.extraction,
  sqlColumn: c.physical,
  columnDataTypeId: c.dataTypeId,
});

/**
 * Describes a tenant's custom table for extraction, or null when the tenant has none of that name.
 * Accepts the bare table name or the named-query form `CT-{tableName}`. Runs in the tenant's transaction,
 * so RLS keeps both the catalogue and the rows to that tenant. Read roles are returned, not checked.
 */
export async function describeCustomTableForExtraction(trx: Trx, tableName: string): Promise<CustomTableExtraction | null> {
  const name = tableName.startsWith(NAMED_QUERY_PREFIX) ? tableName.slice(NAMED_QUERY_PREFIX.length) : tableName;
  const t = await loadTable(trx, { name });
  if (!t) return null;
  const keyColumn = describe(t.key);
  return {
    tableName: t.name,
    physicalTable: `${SCHEMA}.${t.physical}`,
    schema: SCHEMA,
    table: t.physical,
    columns: [keyColumn, ...t.columns.map(describe)],
    keyColumn,
    readRoles: t.readRoles,
  };
}
