// The CSV export through PostgreSQL's own COPY … TO STDOUT (FORMAT csv): bytes go from the database
// socket to the HTTP socket as Buffers, with no JS string per field, so memory stays flat at any row count.
import { createRequire } from 'node:module';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import pg from 'pg';
import { tenantBinding } from '../../platform/db/database.ts';
import type { CatalogueColumn } from '../definition.ts';
import { CsvRows, openCopyText } from './copy-text.ts';

// pg's own conversion of a bound value to the text it sends (dates, arrays, Buffers, objects), so an
// inlined literal is exactly what the parameter would have been. Not in pg's typed exports.
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => string | Buffer | null };

/**
 * A value as a SQL literal: pg's parameter text, quoted with doubled quotes; with a backslash, pg's
 * E'' form (backslashes doubled), which reads the same whatever standard_conforming_strings is. An
 * untyped literal resolves like the untyped parameter it replaces. null is NULL.
 */
export function sqlLiteral(value: unknown): string {
  const prepared = prepareValue(value);
  if (prepared === null) return 'NULL';
  // pg sends a Buffer as bytes (binary format); as text it is bytea's hex form.
  const text = Buffer.isBuffer(prepared) ? `\\x${prepared.toString('hex')}` : prepared;
  // escapeLiteral puts a space before E'…'; the placeholder it replaces never follows a word character.
  return pg.escapeLiteral(text).trimStart();
}

const isWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c >= 128;
const isDigit = (c: number) => c >= 48 && c <= 57;
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*)?\$/y;

/**
 * COPY takes no bind parameters: replaces each placeholder `$n` of a compiled query with its value as
 * a literal. A scanner, not a regex over the text, so `$n` inside a string, a quoted identifier (a
 * custom table's column may be named `Price$1`), a comment or a dollar-quoted body is left alone, and
 * `$1` never matches the start of `$10`. Every parameter must be used and no placeholder may point
 * past them.
 */
export function inlineParameters(text: string, parameters: readonly unknown[]): string {
  const used = new Set<number>();
  let out = '';
  let from = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 39 /* ' */) {
      // E'…' takes backslash escapes; a plain '…' does not (standard_conforming_strings, set by the export).
      const escapes = i > 0 && (text[i - 1] === 'E' || text[i - 1] === 'e') && (i < 2 || !isWordChar(text.charCodeAt(i - 2)));
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (escapes && d === 92 /* \ */) i += 2;
        else if (d === 39 && text.charCodeAt(i + 1) === 39) i += 2;
        else if (d === 39) break;
        else i++;
      }
      i++;
    } else if (c === 34 /* " */) {
      i = text.indexOf('"', i + 1);
      while (i !== -1 && text.charCodeAt(i + 1) === 34) i = text.indexOf('"', i + 2);
      i = i === -1 ? n : i + 1;
    } else if (c === 45 /* - */ && text.charCodeAt(i + 1) === 45) {
      i = text.indexOf('\n', i);
      if (i === -1) i = n;
    } else if (c === 47 /* / */ && text.charCodeAt(i + 1) === 42 /* * */) {
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text.startsWith('/*', i)) {
          depth++;
          i += 2;
        } else if (text.startsWith('*/', i)) {
          depth--;
          i += 2;
        } else i++;
      }
    } else if (c === 36 /* $ */ && !(i > 0 && isWordChar(text.charCodeAt(i - 1)))) {
      if (isDigit(text.charCodeAt(i + 1))) {
        let end = i + 1;
        while (end < n && isDigit(text.charCodeAt(end))) end++;
        const index = Number(text.slice(i + 1, end));
        if (index < 1 || index > parameters.length) throw new Error(`placeholder $${index} but ${parameters.length} parameters`);
        used.add(index);
        out += text.slice(from, i) + sqlLiteral(parameters[index - 1]);
        from = end;
        i = end;
      } else {
        DOLLAR_TAG.lastIndex = i;
        const tag = DOLLAR_TAG.exec(text)?.[0];
        if (tag) {
          const close = text.indexOf(tag, i + tag.length);
          i = close === -1 ? n : close + tag.length;
        } else i++;
      }
    } else i++;
  }
  if (used.size !== parameters.length) throw new Error(`${parameters.length} parameters but ${used.size} placeholders`);
  return out + text.slice(from);
}

/**
 * Opens the transaction of a COPY of rows as the JSON pages print them: BEGIN, bound to the tenant until
 * `deadline`, with the settings the printed values depend on (UTC, ISO dates); standard_conforming_strings
 * because the COPY's parameters are inlined (inlineParameters) and '…' must read as plain literals.
 */
export const copyTransaction = (tenantId: string, deadline: number): string =>
  `begin; ${tenantBinding(tenantId, deadline)}; set local timezone = 'UTC'; set local datestyle = 'ISO, YMD'; set local standard_conforming_strings = on`;

export const OID = { bool: 16, numeric: 1700, timestamp: 1114, timestamptz: 1184, float8: 701, float4: 700, date: 1082, uuid: 2950 };
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
export const ISO_INSTANT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

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

/** What an export reads its output from. */
export interface ExportSource {
  chunks: AsyncIterator<Buffer | string>;
  /** Data rows produced; read once the chunks are done and the transaction has committed. */
  rows: () => number;
  /** Stops reading (the caller then destroys the connection). */
  stop: () => void;
}

/** The SQL types (type oids) of the columns of `rows`, from a `limit 0` run of it: planned, no row read. */
export async function columnTypes(client: pg.PoolClient, kysely: Kysely<any>, rows: RawBuilder<unknown>): Promise<number[]> {
  const compiled = rows.compile(kysely);
  const described = await client.query({ text: `select * from (${compiled.sql}) as r limit 0`, values: compiled.parameters as unknown[] });
  return described.fields.map((f) => f.dataTypeID);
}

/** `COPY (<select>) TO STDOUT` in text format, its parameters inlined (COPY takes none). */
export function copyStatement(kysely: Kysely<any>, select: RawBuilder<unknown>): string {
  const compiled = select.compile(kysely);
  return `copy (${inlineParameters(compiled.sql, compiled.parameters)}) to stdout`;
}

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
