// The Client API's document fields: each API property names its column and its kind. The request
// schema, the column values of a write, the answer and the typed detail of Created/Updated events all
// come from one table, so a property cannot be accepted by the schema and lost by the write.
import { type TSchema, Type } from 'typebox';
import { type Kind as IntegrationKind, kindSchema, nullable, toDate } from '../../domain/fields.ts';
import { badRequest } from '../../platform/errors.ts';

/** The Integration API's kinds plus `datetime` (a timestamptz column). */
export type Kind = IntegrationKind | 'datetime';

export interface Field {
  name: string;
  column: string;
  kind: Kind;
  /** Needed to create the document (checked by the service: a post's Document model is one schema for Post and Put). */
  required?: boolean;
  /** The column is NOT NULL: the property may be left out, not sent as null. */
  notNull?: boolean;
  /** Other spellings the platform publishes for the same property (AgreedDate / AgreedDateUtc). */
  aliases?: string[];
  description?: string;
}

const DATETIME = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}(:?\\d{2})?)?)?$';

/** A guid field (a reference by id). */
export const guidField = (name: string, column: string, description?: string): Field => ({ name, column, kind: 'guid', description });

/** The Name and Number of a numbered document; the Number is given from the `prefix` sequence when not sent. */
export const nameAndNumber = (prefix: string): Field[] => [
  { name: 'Name', column: 'name', kind: 'string', notNull: true, description: 'Defaults to the Number' },
  { name: 'Number', column: 'number', kind: 'string', description: `Given from a sequence (${prefix}-000001) when not sent` },
];

/** The required department of a document, defaulting to the acting user's. */
export const departmentField: Field = { ...guidField('DepartmentId', 'department_id', 'Defaults to the acting user’s department'), required: true };

export function fieldSchema(f: Field): TSchema {
  const base =
    f.kind === 'datetime'
      ? Type.String({ pattern: DATETIME, description: f.description ?? 'ISO 8601 date-time (a date alone is midnight UTC)' })
      : f.kind === 'string' && f.required
        ? Type.String({ minLength: 1, maxLength: 4000, ...(f.description ? { description: f.description } : {}) })
        : kindSchema(f.kind, f.description);
  return f.notNull ? base : nullable(base);
}

/** Request properties of a document model: every one optional (what is required depends on create or update). */
export function modelProperties(fields: readonly Field[]): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const f of fields) for (const name of [f.name, ...(f.aliases ?? [])]) out[name] = Type.Optional(fieldSchema(f));
  return out;
}

/** Answer properties: every field, null when unset. */
export function viewProperties(fields: readonly Field[]): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const f of fields) {
    const base =
      f.kind === 'date'
        ? Type.String({ format: 'date' })
        : f.kind === 'datetime'
          ? Type.String({ format: 'date-time' })
          : f.kind === 'guid'
            ? Type.String({ format: 'uuid' })
            : kindSchema(f.kind);
    out[f.name] = f.notNull ? base : nullable(base);
  }
  return out;
}

/** The type names Created/Updated events give each changed property (the spec's note 2). */
export const KIND_TYPE: Record<Kind, string> = {
  string: 'String',
  int: 'Int32',
  double: 'Decimal',
  bool: 'Boolean',
  date: 'DateTime',
  datetime: 'DateTime',
  guid: 'Guid',
};

/** Each column's PropertyTypes name, for emitWrite's `types` (decision 0024). */
export const columnTypes = (fields: readonly { column: string; kind: Kind }[]): Record<string, string> =>
  Object.fromEntries(fields.map((f) => [f.column, KIND_TYPE[f.kind]]));

function toTimestamp(value: string, path: string): string {
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value.replace(' ', 'T');
  const parsed = new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(iso) ? iso : `${iso}Z`);
  if (Number.isNaN(parsed.getTime())) {
    throw badRequest(`${path.split('/').pop()} is not a valid date-time: ${value}.`, [{ path, message: 'is not a valid date-time' }]);
  }
  return parsed.toISOString();
}

/**
 * Column values for the properties present in a model (absent ones are not written; null clears).
 * A property sent under two of its spellings is a 400 naming the second.
 */
export function columnValues(fields: readonly Field[], model: Record<string, unknown>, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    let seen: string | null = null;
    for (const name of [f.name, ...(f.aliases ?? [])]) {
      const v = model[name];
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

/** The 400 for a property a create needs and the model lacks. */
export function requireFields(fields: readonly Field[], values: Record<string, unknown>, path: string): void {
  for (const f of fields) {
    if (f.required && (values[f.column] === undefined || values[f.column] === null)) {
      throw badRequest(`${f.name} is required.`, [{ path: `${path}/${f.name}`, message: 'is required' }]);
    }
  }
}

/** API view of a row as to_jsonb gives it. */
export function viewOf(fields: readonly Field[], row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = row[f.column] ?? null;
    out[f.name] = f.kind === 'datetime' && typeof v === 'string' ? new Date(v).toISOString() : v;
  }
  return out;
}
