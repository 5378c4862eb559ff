// The Data Extraction service: resolve a named query for the caller, plan the body, run it as a page
// or as a streamed export; and the discovery answers (list, metadata). Knows nothing of HTTP.
import type { Readable } from 'node:stream';
import { listTables, NAMED_QUERY_PREFIX } from '../custom-tables/service.ts';
import type { Principal } from '../platform/auth/principal.ts';
import type { DatabaseHandle, Trx } from '../platform/db/database.ts';
import type { Encoding } from '../platform/http/answer-encoding.ts';
import { CATALOGUE, type CatalogueColumn } from './definition.ts';
import type { CsvOptions } from './exports/copy-csv.ts';
import { type ExportFormat, openExport } from './exports/export.ts';
import { executePageAnswer, type PageAnswer, rowsQuery } from './pages/execute.ts';
import { OPERATIONS } from './query/compile-filter.ts';
import { type ExecuteBody, MAX_PAGE_SIZE, type Plan, planQuery } from './query/query-builder.ts';
import { type ResolvedQuery, resolveQuery } from './query/resolve.ts';

// What other surfaces use of Data Extraction besides the functions below (docs/architecture.md): the
// catalogue, the page budget (MCP's query tools), the xlsx writer and the queryBuilder schema (schedules).
export { CATALOGUE, type CatalogueColumn } from './definition.ts';
export { xlsxFromNdjson } from './exports/xlsx.ts';
export { pageBudgetOf, pageRowsOf } from './pages/page-budget.ts';
export type { ExecuteBody } from './query/query-builder.ts';
export { ExecuteBodySchema, QueryBuilder, Scalar } from './query/schema.ts';
export { MAX_PAGE_SIZE };

/** Appended to a 504 of this surface. */
export const TIMEOUT_ADVICE = 'Narrow the query with filters (for example a date range) and page it with skip and take.';

export async function plan(trx: Trx, principal: Principal, name: string, body: ExecuteBody, paged: boolean): Promise<{ query: ResolvedQuery; plan: Plan }> {
  const query = await resolveQuery(trx, principal, name);
  return { query, plan: planQuery(query, body, { paged }) };
}

/** A page as the JSON bytes of the answer ({"data": […], "totalCount": n}), UTF-8; given `db`, a paging client's next pages are read ahead (decision 0041). */
export async function dynamicExecute(trx: Trx, principal: Principal, name: string, body: ExecuteBody, db?: DatabaseHandle): Promise<Buffer> {
  return (await dynamicExecuteAnswer(trx, principal, name, body, db)).body;
}

/** dynamicExecute for a client that accepts `encoding`: the page, and its bytes in that encoding when they were compressed ahead (decision 0079). */
export async function dynamicExecuteAnswer(
  trx: Trx,
  principal: Principal,
  name: string,
  body: ExecuteBody,
  db?: DatabaseHandle,
  encoding?: Encoding,
  opts: { last?: boolean } = {},
): Promise<PageAnswer> {
  const p = await plan(trx, principal, name, body, true);
  return executePageAnswer(trx, p.query, p.plan, db, encoding, opts);
}

/** An export as it is being written: its stream, the columns it writes, and its row count once it has ended. */
export interface NamedQueryExport {
  name: string;
  stream: Readable;
  columns: CatalogueColumn[];
  /** Data rows written (for CSV, COPY's command tag), once the stream has ended; null before. */
  rowCount: () => number | null;
}

/** Plans in one short transaction, then streams (CSV through COPY, NDJSON from a cursor) in its own. */
export async function dynamicExport(
  db: DatabaseHandle,
  principal: Principal,
  name: string,
  body: ExecuteBody,
  format: ExportFormat,
  deadline: number,
  csv: CsvOptions = {},
): Promise<NamedQueryExport> {
  const planned = await db.withTenant(principal.tenantId, (trx) => plan(trx, principal, name, body, false), { deadline });
  return exportPlanned(db, principal.tenantId, planned, format, deadline, csv);
}

/**
 * Streams a query planned unpaged (plan(…, false)). The stream holds its own tenant-bound connection
 * until it is read to the end, so it cannot live inside the caller's transaction.
 */
export async function exportPlanned(
  db: DatabaseHandle,
  tenantId: string,
  planned: { query: ResolvedQuery; plan: Plan },
  format: ExportFormat,
  deadline: number,
  csv: CsvOptions = {},
): Promise<NamedQueryExport> {
  const { query, plan: p } = planned;
  const columns = query.isCount ? query.columns : p.fields;
  const { stream, rowCount } = await openExport(db, tenantId, deadline, rowsQuery(query, p, true), columns, format, csv);
  return { name: query.name, stream, columns, rowCount };
}

export interface QuerySummary {
  name: string;
  aliases: string[];
  purpose: string;
  fieldCount: number;
  parameters: string[];
}

/** Every catalogue query, then the custom tables the caller may read (as CT-{tableName}). */
export async function listNamedQueries(trx: Trx, principal: Principal): Promise<QuerySummary[]> {
  const named = CATALOGUE.map((e) => ({
    name: e.name,
    aliases: e.aliases,
    purpose: e.purpose,
    fieldCount: e.columns.length,
    parameters: e.parameters,
  }));
  const tables = await listTables(trx, principal);
  return [
    ...named,
    ...tables.map((t) => ({
      name: `${NAMED_QUERY_PREFIX}${t.TableName}`,
      aliases: [],
      purpose: `custom table ${t.TableName}`,
      fieldCount: t.Columns.length + 1,
      parameters: [],
    })),
  ];
}

export interface FieldMetadata {
  name: string;
  dataType: string;
  operations: readonly string[];
  defaultOperation: string;
}

export interface QueryMetadata {
  name: string;
  aliases: string[];
  purpose: string;
  key: string[];
  parameters: { name: string; appliesTo: string | null }[];
  fields: FieldMetadata[];
  /** Count queries: the fields their filters and parameters address. */
  filterFields?: FieldMetadata[];
  maxPageSize: number;
}

const fieldMetadata = (c: CatalogueColumn): FieldMetadata => ({
  name: c.name,
  dataType: c.type,
  operations: OPERATIONS[c.type],
  defaultOperation: OPERATIONS[c.type][0],
});

export async function describeNamedQuery(trx: Trx, principal: Principal, name: string): Promise<QueryMetadata> {
  const q = await resolveQuery(trx, principal, name);
  const entry = CATALOGUE.find((e) => e.name === q.name);
  return {
    name: q.name,
    aliases: entry?.aliases ?? [],
    purpose: q.purpose,
    key: q.isCount ? [] : q.key,
    parameters: q.allowedParameters.map((p) => ({ name: p, appliesTo: q.parameterColumns[p] ?? null })),
    fields: q.columns.map(fieldMetadata),
    ...(q.isCount ? { filterFields: q.filterColumns.map(fieldMetadata) } : {}),
    maxPageSize: MAX_PAGE_SIZE,
  };
}
