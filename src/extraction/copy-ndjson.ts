// The NDJSON export through COPY: PostgreSQL writes each row as one JSON object (row_to_json over the
// columns printed as the JSON pages print them), so no JS string is built per field. COPY's text format
// would escape the JSON's backslashes; its csv format quotes a field only when it holds the quote or
// delimiter byte or a line break, so with \x01 and \x02 as those (JSON escapes every control character,
// and has no raw line break) each line is the JSON text exactly.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { EXPORT_HIGH_WATER_MARK, type ExportSource, ISO_INSTANT, inlineParameters, OID } from './copy-csv.ts';
import type { CatalogueColumn } from './definition.ts';

export const JSONB_OID = 3802;
// row_to_json names keys after the columns, and PostgreSQL cuts identifiers at 63 bytes.
const MAX_NAME_BYTES = 63;

/** Whether every field name survives as a row_to_json key (else the export reads a cursor). */
export const ndjsonByCopy = (columns: CatalogueColumn[]): boolean => columns.every((c) => Buffer.byteLength(c.name) <= MAX_NAME_BYTES);

/**
 * Each column as the NDJSON line carries it, by its catalogue type and SQL type (type oids, in order):
 * decimals without trailing zeros and NaN/Infinity as null, booleans as JSON booleans, datetimes as ISO
 * 8601 UTC strings with milliseconds, dates, guids and strings as strings, objects as embedded JSON
 * when they are objects or arrays, else as strings.
 */
function jsonValue(c: CatalogueColumn, type: number): RawBuilder<unknown> {
  const ref = sql.id('r', c.name);
  switch (c.type) {
    case 'decimal':
      if (type === OID.numeric) return sql`case when ${ref} in ('NaN', 'Infinity', '-Infinity') then null else trim_scale(${ref}) end`;
      if (type === OID.float8 || type === OID.float4) return sql`case when ${ref} in ('NaN', 'Infinity', '-Infinity') then null else ${ref} end`;
      return ref;
    case 'integer':
    case 'boolean':
      return ref;
    case 'datetime':
      return type === OID.timestamptz ? sql`to_char(${ref} at time zone 'UTC', ${sql.raw(ISO_INSTANT)})` : sql`${ref}::text`;
    case 'object':
      return type === JSONB_OID ? sql`case when jsonb_typeof(${ref}) in ('object', 'array') then ${ref} else to_jsonb(${ref}::text) end` : sql`${ref}::text`;
    default:
      return sql`${ref}::text`;
  }
}

/**
 * One JSON object text per row of `rows`, in its order, exactly as JSON.stringify prints the JSON page's
 * row (a float prints as PostgreSQL prints it: 1e-07 for 1e-7), given the columns' SQL types.
 */
export function jsonObjects(rows: RawBuilder<unknown>, columns: CatalogueColumn[], types: number[]): RawBuilder<{ line: string }> {
  const select = columns.length ? sql.join(columns.map((c, i) => sql`${jsonValue(c, types[i])} as ${sql.id(c.name)}`)) : sql``;
  return sql<{ line: string }>`select row_to_json(j)::text as line from (select ${select} from (${rows}) as r) as j`;
}

/**
 * Starts `COPY (select row_to_json(…)) TO STDOUT` on a client inside the export's transaction; the
 * columns' SQL types come from a `limit 0` run of the same query, as for CSV.
 */
export async function openCopyNdjson(client: pg.PoolClient, kysely: Kysely<any>, rows: RawBuilder<unknown>, columns: CatalogueColumn[]): Promise<ExportSource> {
  const compiled = rows.compile(kysely);
  const described = await client.query({ text: `select * from (${compiled.sql}) as r limit 0`, values: compiled.parameters as unknown[] });
  const json = jsonObjects(
    rows,
    columns,
    described.fields.map((f) => f.dataTypeID),
  ).compile(kysely);
  const copy = client.query(
    copyTo(`copy (${inlineParameters(json.sql, json.parameters)}) to stdout with (format csv, quote e'\\x01', delimiter e'\\x02')`, {
      highWaterMark: EXPORT_HIGH_WATER_MARK,
    }),
  );
  // As for CSV: an 'error' after our pipeline is gone must have a listener.
  copy.on('error', () => {});
  const chunks = copy[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return {
    chunks,
    rows: () => copy.rowCount,
    stop: () => copy.destroy(),
  };
}
