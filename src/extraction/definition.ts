// The contract between the Data Extraction engine (query builder, paging, streaming, OData) and the
// named-query definitions in ./queries/. A definition says where rows come from; the engine does the rest.
import { type RawBuilder, sql } from 'kysely';
// A copy of the spec's catalogue (shared/spec/named-queries.json), so a deployment carries it.
import catalogue from './named-queries.json' with { type: 'json' };

/** Data types of the catalogue (named-queries.json). */
export type ColumnType = 'string' | 'guid' | 'decimal' | 'integer' | 'boolean' | 'date' | 'datetime' | 'object';

/** The parameters a dynamic-execute body may carry beside queryBuilder. */
export type ParameterName =
  | 'ModifiedFrom'
  | 'From'
  | 'To'
  | 'ProjectId'
  | 'ProjectNumber'
  | 'JobId'
  | 'JobNumber'
  | 'ContractId'
  | 'ContractNumber'
  | 'EstimateId'
  | 'EstimateNumber'
  | 'TaxPayerNumber'
  | 'UserId'
  | 'Email';

export interface QueryContext {
  tenantId: string;
  /** The X-AppUser the call acts as, or null (then per-user flags are false and nothing is hidden). */
  userId: string | null;
  /**
   * Which of the two plans the source is built for. 'scan' (exports, the single-statement page): every row
   * is read, so lookups that are not one row per key are best as set-wise hash joins. 'keys' (the
   * keys-first page and its count, execute.ts): the engine selects only keys, order and filter columns,
   * and PostgreSQL drops a LEFT JOIN only when it can prove it yields at most one row per row, so such a
   * lookup must then be written as a per-row aggregate over a LATERAL subquery (fragments.periodInForce).
   * A source may ignore it when every lookup is a join on a unique key or a scalar subquery.
   */
  plan?: 'scan' | 'keys';
}

export interface NamedQueryDefinition {
  /** The catalogue name, e.g. 'DE-Jobs' (aliases are resolved by the engine from the catalogue). */
  name: string;
  /**
   * A SELECT whose output columns are exactly the catalogue's columns of this query, in order, each
   * aliased with its exact (quoted) name: `j.name as "Job"`. One row per row of the report. It runs
   * in a tenant-bound transaction (RLS applies), but filter `tenant_id = ${ctx.tenantId}` on the
   * driving table anyway so the planner uses the tenant-leading indexes. Per-user columns use
   * ctx.userId (false / 0 when it is null). Values must be the catalogue's type: booleans as
   * boolean, integers as int, decimals as numeric, dates as date, datetimes as timestamptz.
   */
  source?: (ctx: QueryContext) => RawBuilder<unknown>;
  /**
   * Columns the source emits after the catalogue's (and after `"__fields"`), for parameters to filter
   * on when the catalogue has no output column for them (DE-Employees' ModifiedFrom). Never answered,
   * never addressable by filters, fields or orderBy.
   */
  hiddenColumns?: CatalogueColumn[];
  /**
   * Narrower sources for the keys-first page's key phase and its count, tried in order: the first whose
   * `columns` hold every column the filters, parameters and order read (and the key) is used.
   * Each is a SELECT with the source's WHERE whose output columns are exactly `columns`, computed as the
   * source computes them: the driving table alone, or with the one lookup a common filter needs.
   * PostgreSQL drops unused joins from the full source too, but keeps their columns of the driving table
   * in the scan's output, which rules out an index-only scan; this is what a count of a million rows needs.
   */
  narrow?: { columns: string[]; source: (ctx: QueryContext) => RawBuilder<unknown> }[];
  /**
   * The source groups its rows (GROUP BY over other tables' rows): no key exists before the groups are computed,
   * so a keys-first page would compute them three times (keys, rows, count). A JSON page is then one statement,
   * the groups computed once, ordered and paged, with the count as a window over them (execute.ts).
   */
  aggregate?: boolean;
  /**
   * The table whose rows the query's rows are, one each (decision 0070): the key is one column, that table's
   * uuid `id`, and the source reads the table nowhere else (no other join, subquery or aggregate over it). A kept
   * count whose only changes since are inserts into this table logged with their ids (migration 0042) is then
   * brought up to date by counting the rows of those ids alone (count-cache.ts).
   */
  keyTable?: string;
  /** Output columns that identify a row: the tie-breaker that makes paging stable. */
  key: string[];
  /**
   * For each parameter of the catalogue's list: the output column it applies to. ModifiedFrom and
   * From mean column >= value, To means column <= value (end of that day for dates), every other
   * parameter column = value. The column is an output column or one of `hiddenColumns`.
   */
  parameters?: Partial<Record<ParameterName, string>>;
  /**
   * Parameters the catalogue lists for the query that its platform statement does not read (DE-TimeSheetsDeleted's
   * From/To): accepted, applied to nothing, as on the platform.
   */
  ignoredParameters?: ParameterName[];
  /** Count queries: the name of the query whose rows are counted (filters and parameters apply to it); no source. */
  countOf?: string;
  /**
   * Count queries whose platform statement counts fewer rows than its list answers (DE-JobsCount and
   * DE-ProjectsCount leave Draft out): rows whose output column `column` holds one of `values` are not
   * counted (a null is counted).
   */
  countExcludes?: { column: string; values: string[] };
  /**
   * The *AdditionalInformation queries: after the catalogue's fixed columns (all but the '*'
   * placeholder), one column per user-defined field of this document type, named after the field.
   * `source` then returns the fixed columns plus `"__fields"`: a jsonb object field name -> value;
   * `fields` lists the tenant's fields in column order with their catalogue type.
   */
  userFields?: { fields: (ctx: QueryContext) => RawBuilder<{ name: string; type: ColumnType }> };
}

export interface CatalogueColumn {
  name: string;
  type: ColumnType;
}

export interface CatalogueEntry {
  name: string;
  aliases: string[];
  purpose: string;
  columns: CatalogueColumn[];
  parameters: ParameterName[];
  dynamicColumns: boolean;
}

/** The catalogue with repeated column names kept once (DE-Expenses ValueWithVat, DE-Workloads JobId). */
export const CATALOGUE: CatalogueEntry[] = (catalogue as { queries: CatalogueEntry[] }).queries.map((q) => {
  const seen = new Set<string>();
  const columns = q.columns.filter((c) => {
    if (seen.has(c.name)) return false;
    seen.add(c.name);
    return true;
  });
  return { ...q, columns };
});

/** `sql` re-exported so definition files import one module. */
export { sql };
