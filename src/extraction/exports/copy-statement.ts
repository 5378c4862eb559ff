// A COPY of a query's rows as an export runs it: the statement (`COPY (<select>) TO STDOUT`, parameters
// inlined as literals because COPY takes none), the transaction it runs in, the columns' SQL types, and
// what an export reads its output from. The CSV, NDJSON and JSON exports and the pages' read-ahead use it.
import { createRequire } from 'node:module';
import type { Kysely, RawBuilder } from 'kysely';
import pg from 'pg';
import { tenantBinding } from '../../platform/db/database.ts';

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
export const ISO_INSTANT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

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
