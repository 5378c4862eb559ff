// The Client API's helpers over the shared field tables (domain/fields.ts): the request schema of a document
// model (every property optional, aliases included), the answer, the required check of a create and the
// typed detail of Created/Updated events, all from one table.
import { type TSchema, Type } from 'typebox';
import { answerSchema, columnValues, type Field, type Kind, kindSchema, nullable, viewOf } from '../../domain/fields.ts';
import type { TableName } from '../../platform/db/schema.ts';
import { badRequest } from '../../platform/errors.ts';

export type { Field, Kind };
export { columnValues, viewOf };

/** A guid field (a reference by id). */
export const guidField = <T extends TableName = any>(name: string, column: Field<T>['column'], description?: string): Field<T> => ({
  name,
  column,
  kind: 'guid',
  description,
});

/** The Name and Number of a numbered document; the Number is given from the `prefix` sequence when not sent. */
export const nameAndNumber = (prefix: string): Field[] => [
  { name: 'Name', column: 'name', kind: 'string', notNull: true, description: 'Defaults to the Number' },
  { name: 'Number', column: 'number', kind: 'string', description: `Given from a sequence (${prefix}-000001) when not sent` },
];

/** The required department of a document, defaulting to the acting user's. */
export const departmentField: Field = { ...guidField('DepartmentId', 'department_id', 'Defaults to the acting user’s department'), required: true };

export function fieldSchema(f: Field): TSchema {
  const base =
    f.kind === 'string' && f.required
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
  for (const f of fields) out[f.name] = f.notNull ? answerSchema(f.kind) : nullable(answerSchema(f.kind));
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

/** The 400 for a property a create needs and the model lacks. */
export function requireFields(fields: readonly Field[], values: Record<string, unknown>, path: string): void {
  for (const f of fields) {
    if (f.required && (values[f.column] === undefined || values[f.column] === null)) {
      throw badRequest(`${f.name} is required.`, [{ path: `${path}/${f.name}`, message: 'is required' }]);
    }
  }
}
