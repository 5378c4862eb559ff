// The Integration API's field tables: each API field names its column and its spec type (string, int,
// double, bool, DateTime, Guid). Request and response schemas, value checks and the column values of a
// write are all derived from one table, so a field cannot be accepted by the schema and lost by the write.
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox';
import { badRequest } from '../platform/errors.ts';
import { GUID_PATTERN } from '../platform/http/schemas.ts';

export type Kind = 'string' | 'int' | 'double' | 'bool' | 'date' | 'guid';

export interface FieldDef {
  /** Property name in the API (PascalCase for users and employees, camelCase elsewhere). */
  name: string;
  column: string;
  kind: Kind;
  /** The request must carry it (not null). */
  required?: boolean;
  /** The column is NOT NULL: an optional field may be omitted but not sent as null. */
  notNull?: boolean;
  description?: string;
}

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
  const base = f.kind === 'date' ? Type.String({ format: 'date' }) : f.kind === 'guid' ? Type.String({ format: 'uuid' }) : kindSchema(f.kind);
  return f.notNull || f.required ? base : nullable(base);
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

/** Column values for the fields present in body (absent fields are not written; null clears). */
export function columnValues(fields: FieldDef[], body: Record<string, unknown>, pathPrefix = '/body'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!(f.name in body) || body[f.name] === undefined) continue;
    const v = body[f.name];
    if (v === null) out[f.column] = null;
    else if (f.kind === 'date') out[f.column] = toDate(v as string, `${pathPrefix}/${f.name}`);
    else if (f.kind === 'guid') out[f.column] = (v as string).toLowerCase();
    else out[f.column] = v;
  }
  return out;
}

/** API view of a row (as to_jsonb gives it) for the fields of a table. */
export function viewOf(fields: FieldDef[], row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f.name, row[f.column] ?? null]));
}

export const pascalCase = (column: string): string =>
  column
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
