// The field tables of the Integration API and the Client API: each API property names its column and its
// kind (string, int, double, bool, DateTime as a date or a timestamptz, Guid). Request and answer schemas,
// value checks, the column values of a write and the API view of a row all come from one table, so a
// property cannot be accepted by the schema and lost by the write. A table typed with its table name
// (`Field<'users'>[]`) checks each column against the generated Database interface: a renamed column fails
// to compile.
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import type { Database, TableName } from '../platform/db/schema.ts';
import { badRequest } from '../platform/errors.ts';
import { GUID_PATTERN } from '../platform/http/schemas.ts';

/** `datetime` is a timestamptz column; `date` a date column (a date-time's date part is stored). */
export type Kind = 'string' | 'int' | 'double' | 'bool' | 'date' | 'datetime' | 'guid';

/** A column of table T, as the generated Database interface names it. */
export type ColumnOf<T extends TableName> = keyof Database[T] & string;

export interface Field<T extends TableName = any> {
  /** Property name in the API (PascalCase for users, employees and the Client API, camelCase elsewhere). */
  name: string;
  column: ColumnOf<T>;
  kind: Kind;
  /**
   * Integration API: the request must carry it (not null). Client API: needed to create the document (checked
   * by the service: a post's Document model is one schema for Post and Put).
   */
  required?: boolean;
  /** The column is NOT NULL: an optional field may be omitted but not sent as null. */
  notNull?: boolean;
  /** Other spellings the platform publishes for the same property (AgreedDate / AgreedDateUtc). */
  aliases?: string[];
  description?: string;
}

/** The Integration API's name for a field. */
export type FieldDef = Field;

const ISO_DATE = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}(:?\\d{2})?)?)?$';

export { GUID_PATTERN };

export function kindSchema(kind: Kind, description?: string): TSchema {
  const d = description ? { description } : {};
  switch (kind) {
    case 'string':
      return Type.String({ maxLength: 4000, ...d });
    case 'int':
      return Type.Integer({ minimum: -2147483648, maximum: 2147483647, ...d });
    case 'double':
      return Type.Number(d);
    case 'bool':
      return Type.Boolean(d);
    case 'date':
      return Type.String({ pattern: ISO_DATE, description: description ?? 'ISO 8601 date (yyyy-mm-dd) or date-time; the date part is stored' });
    case 'datetime':
      return Type.String({ pattern: ISO_DATE, description: description ?? 'ISO 8601 date-time (a date alone is midnight UTC)' });
    case 'guid':
      return Type.String({ format: 'uuid', pattern: GUID_PATTERN, ...d });
  }
}

/**
 * A scalar schema that also admits null, written as a type array (`["string", "null"]`) rather than
 * anyOf: the response serializer handles a type array directly but checks anyOf branches one by one.
 */
export function nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const s = schema as TSchema & { type?: string };
  return Type.Unsafe<Static<T> | null>({ ...s, type: [s.type, 'null'] });
}

/** The schema of a field in a request: nullable unless required or NOT NULL. */
export function requestSchema(f: FieldDef): TSchema {
  const base = f.required && f.kind === 'string' ? Type.String({ minLength: 1, maxLength: 4000 }) : kindSchema(f.kind, f.description);
  return f.required || f.notNull ? base : nullable(base);
}

/** The schema of a field in a response: always present, null when unset (unless NOT NULL). */
export function responseSchema(f: FieldDef): TSchema {
  return f.notNull || f.required ? answerSchema(f.kind) : nullable(answerSchema(f.kind));
}

/** The schema of a kind in an answer: dates, date-times and guids by their format. */
export function answerSchema(kind: Kind): TSchema {
  switch (kind) {
    case 'date':
      return Type.String({ format: 'date' });
    case 'datetime':
      return Type.String({ format: 'date-time' });
    case 'guid':
      return Type.String({ format: 'uuid' });
    default:
      return kindSchema(kind);
  }
}

export function requestProperties(fields: FieldDef[]): Record<string, TSchema> {
  return Object.fromEntries(fields.map((f) => [f.name, f.required ? requestSchema(f) : Type.Optional(requestSchema(f))]));
}

export function responseProperties(fields: FieldDef[]): Record<string, TSchema> {
  return Object.fromEntries(fields.map((f) => [f.name, responseSchema(f)]));
}

/** A date or date-time string to the `yyyy-mm-dd` the date columns hold; an impossible date is a 400 naming the field. */
export function toDate(value: string, path: string): string {
  const day = value.slice(0, 10);
  const parsed = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== day) {
    throw badRequest(`${path.split('/').pop()} is not a valid date: ${value}.`, [{ path, message: 'is not a valid date' }]);
  }
  return day;
}

/** A date-time string (a date alone is midnight UTC; no offset is UTC) to its ISO instant; an impossible one is a 400 naming the field. */
export function toTimestamp(value: string, path: string): string {
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value.replace(' ', 'T');
  const parsed = new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(iso) ? iso : `${iso}Z`);
  if (Number.isNaN(parsed.getTime())) {
    throw badRequest(`${path.split('/').pop()} is not a valid date-time: ${value}.`, [{ path, message: 'is not a valid date-time' }]);
  }
  return parsed.toISOString();
}

/**
 * Column values for the properties present in `body` (absent ones are not written; null clears). A property
 * sent under two of its spellings is a 400 naming the second; null for a NOT NULL column is a 400.
 */
export function columnValues(fields: readonly Field[], body: Record<string, unknown>, path = '/body'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    let seen: string | null = null;
    for (const name of [f.name, ...(f.aliases ?? [])]) {
      const v = body[name];
      if (v === undefined) continue;
      const at = `${path}/${name}`;
      if (seen !== null) throw badRequest(`${name} and ${seen} are the same property; send one.`, [{ path: at, message: `same property as ${seen}` }]);
      seen = name;
      if (v === null) {
        if (f.notNull) throw badRequest(`${name} may not be null.`, [{ path: at, message: 'may not be null' }]);
        out[f.column] = null;
      } else if (f.kind === 'date') out[f.column] = toDate(v as string, at);
      else if (f.kind === 'datetime') out[f.column] = toTimestamp(v as string, at);
      else if (f.kind === 'guid') out[f.column] = (v as string).toLowerCase();
      else out[f.column] = v;
    }
  }
  return out;
}

/** API view of a row (as to_jsonb gives it) for the fields of a table; date-times as ISO instants. */
export function viewOf(fields: readonly Field[], row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = row[f.column] ?? null;
    out[f.name] = f.kind === 'datetime' && typeof v === 'string' ? new Date(v).toISOString() : v;
  }
  return out;
}

export const pascalCase = (column: string): string =>
  column
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
