// The CSV export through COPY: PostgreSQL prints each value as the JSON pages print it (csvSelect) in COPY's
// text format, its cheapest, and CsvRows (./copy-text.ts, decision 0040) writes them as RFC 4180 rows after
// the header row; bytes go from the database socket to the HTTP socket as Buffers, with no JS string per
// field, so memory stays flat at any row count. The COPY statement itself is ./copy-statement.ts.
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type pg from 'pg';
import type { CatalogueColumn } from '../definition.ts';
import { columnTypes, copyStatement, type ExportSource, ISO_INSTANT, OID } from './copy-statement.ts';
import { CsvRows, openCopyText } from './copy-text.ts';

const TEXT_OIDS = new Set([19 /* name */, 25 /* text */, 1042 /* bpchar */, 1043 /* varchar */]);

/** How a CSV is written for spreadsheets; both off by default, so the bytes stay as they were. */
export interface CsvOptions {
  /** Start with a UTF-8 byte order mark, so Excel reads accents. */
  bom?: boolean;
  /**
   * Prefix a text cell starting with = + - @ tab or CR with a single quote (OWASP's advice against
   * CSV formula injection), so a spreadsheet shows it as text instead of running it.
   */
  excelSafe?: boolean;
}

export const UTF8_BOM = '\uFEFF';
// The characters a spreadsheet reads as the start of a formula (or, tab and CR, as a cell to skip to one).
const FORMULA_START = /^[-=+@\t\r]/;
export const excelSafeText = (v: string): string => (FORMULA_START.test(v) ? `'${v}` : v);

/**
 * The rows query with each column printed as the JSON pages print it, given the columns' SQL types
 * (type oids, in order): booleans `true`/`false` (bool's text cast, not its `t`/`f` output), instants
 * ISO 8601 UTC with milliseconds (`2024-03-31T14:30:05.123Z`; a timestamp without zone is taken as
 * UTC), numeric without trailing zeros (`1.5000` -> `1.5`). Everything else is PostgreSQL's text:
 * integers, float8 (already the shortest exact digits), dates (ISO datestyle), uuids, strings, jsonb.
 * With `excelSafe`, text cells that would start a formula get a leading quote. Unchanged when no
 * column needs it.
 */
export function csvSelect(rows: RawBuilder<unknown>, columns: CatalogueColumn[], types: number[], options: CsvOptions = {}): RawBuilder<unknown> {
  let changed = false;
  const select = columns.map((c, i) => {
    const ref = sql.id('r', c.name);
    if (options.excelSafe && TEXT_OIDS.has(types[i])) {
      changed = true;
      // Only text: a negative number is a number, and a spreadsheet reads it as one.
      return sql`case when ${ref} ~ ${sql.raw(`'${FORMULA_START.source}'`)} then '''' || ${ref} else ${ref} end`;
    }
    switch (types[i]) {
      case OID.bool:
        changed = true;
        return sql`${ref}::text`;
      case OID.numeric:
        changed = true;
        return sql`trim_scale(${ref})`;
      case OID.timestamptz:
        changed = true;
        return sql`to_char(${ref} at time zone 'UTC', ${sql.raw(ISO_INSTANT)})`;
      case OID.timestamp:
        changed = true;
        return sql`to_char(${ref}, ${sql.raw(ISO_INSTANT)})`;
      default:
        return ref;
    }
  });
  return changed ? sql`select ${sql.join(select)} from (${rows}) as r` : rows;
}

/** RFC 4180: quote a field holding a comma, quote, CR or LF, doubling the quotes (COPY's own rule). */
export function csvText(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The header row: the field names as the API spells them (COPY's HEADER would print them cut to 63 bytes). */
export const csvHeader = (columns: CatalogueColumn[], options: CsvOptions = {}): string =>
  `${options.bom ? UTF8_BOM : ''}${columns.map((c) => csvText(options.excelSafe ? excelSafeText(c.name) : c.name)).join(',')}\r\n`;

/**
 * The CSV export: `COPY (<rows, formatted as csvSelect prints them>) TO STDOUT` in text format, PostgreSQL's
 * cheapest (its csv format cost the backend ~15 % more for the same values), on a client inside the export's
 * transaction, written as RFC 4180 rows by CsvRows (./copy-text.ts, decision 0040) after the header row. The
 * columns' SQL types are exact for every catalogue query, user fields and custom tables (whose Float is float8).
 */
export async function openCopyCsv(
  client: pg.PoolClient,
  kysely: Kysely<any>,
  rows: RawBuilder<unknown>,
  columns: CatalogueColumn[],
  options: CsvOptions = {},
): Promise<ExportSource> {
  const formatted = csvSelect(rows, columns, await columnTypes(client, kysely, rows), options);
  return openCopyText(client, copyStatement(kysely, formatted), new CsvRows(columns.length), { head: csvHeader(columns, options) });
}
