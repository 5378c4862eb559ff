// JSON lines written by the server from COPY's text format (decision 0040). PostgreSQL prints each value as
// the JSON pages print it (jsonColumn) and COPY writes them tab-separated; this converter writes the keys and
// quotes around them, byte by byte. It costs the server ~3 µs a DE-TimeSheets row where row_to_json cost
// PostgreSQL ~11 µs more than the CSV COPY.
//
// COPY's text format escapes a backslash, \b \f \n \r \t and \v with a backslash and writes other bytes as
// they are: its escapes are JSON's, but for \v; a quote and the other control characters are raw. So a text
// field becomes a JSON string by escaping `"` and control characters and rewriting \v, and a field holding
// JSON text (jsonb) by undoing COPY's escapes.
import { type RawBuilder, sql } from 'kysely';
import type { CatalogueColumn } from '../definition.ts';
import { ISO_INSTANT, OID } from './copy-statement.ts';
import { BACKSLASH, CopyTextRows, isNull, LF, QUOTE, TAB, UNESCAPE } from './copy-text.ts';

export const JSONB_OID = 3802;
const JSON_OID = 114;
const JSON_NUMBERS = new Set([20 /* int8 */, 21 /* int2 */, 23 /* int4 */, OID.numeric, OID.float4, OID.float8]);

/** How a field of COPY's text is written into the JSON line. */
export const JsonKind = {
  /** As it is: a number or `true`/`false`. */
  Raw: 0,
  /** As a JSON string. */
  String: 1,
  /** JSON text (COPY's escapes undone). */
  Json: 2,
} as const;
export type JsonKind = (typeof JsonKind)[keyof typeof JsonKind];

/**
 * A column as the JSON pages carry it, by its catalogue type and SQL type (a type oid): decimals without
 * trailing zeros and NaN/Infinity as null, booleans as JSON booleans, datetimes as ISO 8601 UTC strings with
 * milliseconds, dates, guids and strings as strings, objects as embedded JSON when they are objects or
 * arrays, else as strings. `value` is what row_to_json reads (a page may give no type for integers and
 * booleans: row_to_json prints them by their own); `text` is that value as COPY writes it for `kind`.
 */
export function jsonColumn(c: CatalogueColumn, type: number): { value: RawBuilder<unknown>; text: RawBuilder<unknown>; kind: JsonKind } {
  const ref = sql.id('r', c.name);
  const notFinite = (v: RawBuilder<unknown>) => sql`case when ${ref} in ('NaN', 'Infinity', '-Infinity') then null else ${v} end`;
  const same = (value: RawBuilder<unknown>, kind: JsonKind) => ({ value, text: value, kind });
  // As row_to_json prints a value of the SQL type `type`.
  const byType = (value: RawBuilder<unknown>) => {
    if (type === OID.bool) return { value, text: sql`${value}::text`, kind: JsonKind.Raw };
    if (JSON_NUMBERS.has(type)) return same(value, JsonKind.Raw);
    if (type === JSON_OID || type === JSONB_OID) return { value, text: sql`${value}::text`, kind: JsonKind.Json };
    return { value, text: sql`${value}::text`, kind: JsonKind.String };
  };
  switch (c.type) {
    case 'decimal':
      if (type === OID.numeric) return same(notFinite(sql`trim_scale(${ref})`), JsonKind.Raw);
      if (type === OID.float8 || type === OID.float4) return same(notFinite(ref), JsonKind.Raw);
      return byType(ref);
    case 'integer':
    case 'boolean':
      return byType(ref);
    case 'datetime':
      return same(type === OID.timestamptz ? sql`to_char(${ref} at time zone 'UTC', ${sql.raw(ISO_INSTANT)})` : sql`${ref}::text`, JsonKind.String);
    case 'object':
      if (type === JSONB_OID) return byType(sql`case when jsonb_typeof(${ref}) in ('object', 'array') then ${ref} else to_jsonb(${ref}::text) end`);
      return same(sql`${ref}::text`, JsonKind.String);
    default:
      return same(sql`${ref}::text`, JsonKind.String);
  }
}

/**
 * One JSON object text per row of `rows`, in its order, exactly as JSON.stringify prints the JSON page's
 * row (a float prints as PostgreSQL prints it: 1e-07 for 1e-7), given the columns' SQL types (type oids).
 */
export function jsonObjects(rows: RawBuilder<unknown>, columns: CatalogueColumn[], types: number[]): RawBuilder<{ line: string }> {
  const select = columns.length ? sql.join(columns.map((c, i) => sql`${jsonColumn(c, types[i]).value} as ${sql.id(c.name)}`)) : sql``;
  return sql<{ line: string }>`select row_to_json(j)::text as line from (select ${select} from (${rows}) as r) as j`;
}

/** The select whose COPY text JsonLines converts, with the kinds it needs. */
export function jsonTextSelect(rows: RawBuilder<unknown>, columns: CatalogueColumn[], types: number[]): { select: RawBuilder<unknown>; kinds: JsonKind[] } {
  const parts = columns.map((c, i) => jsonColumn(c, types[i]));
  // No columns: COPY writes an empty line per row, which becomes {}.
  const select = parts.length ? sql.join(parts.map((p) => p.text)) : sql``;
  return { select: sql`select ${select} from (${rows}) as r`, kinds: parts.map((p) => p.kind) };
}

const NULL = Buffer.from('null');
const HEX = Buffer.from('0123456789abcdef');

/**
 * Converts COPY's text (whole or cut anywhere) into JSON lines: `{"Key":value,…}\n` per row, or with
 * `array`, rows separated as the JSON envelope's array holds them (`\n{…}`, then `,\n{…}`).
 */
export class JsonLines extends CopyTextRows {
  readonly #kinds: Uint8Array;
  readonly #keys: Buffer[];
  readonly #array: boolean;

  constructor(names: string[], kinds: JsonKind[], options: { array?: boolean } = {}) {
    const keys = names.map((name, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(name)}:`));
    // A field byte becomes at most six (\u00XX); a row adds its keys, quotes and separators.
    super(keys.reduce((s, k) => s + k.length, 0) + 6 * names.length + 8, 6);
    this.#kinds = Uint8Array.from(kinds);
    this.#keys = keys;
    this.#array = options.array ?? false;
  }

  protected writeRow(input: Buffer, start: number, out: Buffer, at: number): number {
    const kinds = this.#kinds;
    let o = at;
    if (this.#array) {
      if (this.rows > 0) out[o++] = 44; // ,
      out[o++] = LF;
    }
    let i = start;
    if (kinds.length === 0) {
      out[o++] = 123; // {
      i++;
    }
    for (let col = 0; col < kinds.length; col++) {
      const key = this.#keys[col];
      o += key.copy(out, o);
      if (isNull(input, i)) {
        o += NULL.copy(out, o);
        i += 3;
        continue;
      }
      const kind = kinds[col];
      if (kind === JsonKind.Raw) {
        for (let b = input[i++]; b !== TAB && b !== LF; b = input[i++]) out[o++] = b;
      } else if (kind === JsonKind.String) {
        out[o++] = QUOTE;
        for (;;) {
          const b = input[i++];
          // Most bytes need nothing: one test.
          if (b > QUOTE && b !== BACKSLASH) {
            out[o++] = b;
            continue;
          }
          if (b === TAB || b === LF) break;
          if (b === BACKSLASH) {
            const e = input[i++];
            // \v is not a JSON escape
            if (e === 118) o = unicodeEscape(out, o, 11);
            else {
              out[o++] = BACKSLASH;
              out[o++] = e;
            }
          } else if (b === QUOTE) {
            out[o++] = BACKSLASH;
            out[o++] = QUOTE;
          } else if (b < 32) o = unicodeEscape(out, o, b);
          else out[o++] = b;
        }
        out[o++] = QUOTE;
      } else {
        for (let b = input[i++]; b !== TAB && b !== LF; b = input[i++]) out[o++] = b === BACKSLASH ? UNESCAPE[input[i++]] : b;
      }
    }
    out[o++] = 125; // }
    if (!this.#array) out[o++] = LF;
    return o;
  }
}

function unicodeEscape(out: Buffer, o: number, c: number): number {
  out[o++] = BACKSLASH;
  out[o++] = 117; // u
  out[o++] = 48;
  out[o++] = 48;
  out[o++] = HEX[c >> 4];
  out[o++] = HEX[c & 15];
  return o;
}
