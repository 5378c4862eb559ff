// Custom (additional-information) field values of a document: each value is checked against its field's
// type (the spec's list: Boolean 0 … UniqueIdentifier 9), stored as a JSON scalar in user_field_values
// (which the *AdditionalInformation queries pivot), and each change raises UserFieldValueUpdated.
import { sql } from 'kysely';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { badRequest, HttpProblem } from '../../platform/errors.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import { GUID_PATTERN } from '../../platform/http/schemas.ts';
import { documentTypeId } from '../documents/document-type-ids.ts';
import type { DocumentDef, Row } from '../documents/registry.ts';

export const COLUMN_DATA_TYPES = ['Boolean', 'Date', 'Float', 'Integer', 'Money', 'Varchar50', 'Varchar100', 'VarcharMax', 'Text', 'UniqueIdentifier'] as const;

/** The spec's type of a field made before data_type_id existed, from the storage type it has. */
const FROM_STORAGE: Record<string, number> = { Boolean: 0, Date: 1, Number: 2, Text: 8, Guid: 9 };

export interface UserFieldEntry {
  column: string;
  value: unknown;
  /** JSON path of the value, for field errors. */
  path: string;
}

interface FieldRow {
  id: string;
  column_name: string;
  type_id: number;
}

const GUID = new RegExp(GUID_PATTERN);
const DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/;

/** The value as stored for the field's type; a 400 naming the value's path when it does not fit. */
export function checkValue(typeId: number, value: unknown, path: string): unknown {
  if (value === null) return null;
  const type = COLUMN_DATA_TYPES[typeId];
  const refuse = (why: string): never => {
    throw badRequest(`${path.split('/').slice(-2).join('/')}: ${why} (the field is ${type}).`, [{ path, message: `${why}; the field is ${type}` }]);
  };
  const number = (): number => {
    const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isFinite(n)) refuse('is not a number');
    return n as number;
  };
  switch (type) {
    case 'Boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'false') return value === 'true';
      return refuse('is not a boolean');
    case 'Date': {
      if (typeof value !== 'string' || !DATE.test(value) || Number.isNaN(Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value))) {
        return refuse('is not an ISO 8601 date');
      }
      return value.length === 10 ? value : new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`).toISOString();
    }
    case 'Float':
      return number();
    case 'Integer': {
      const n = number();
      if (!Number.isInteger(n) || Math.abs(n) > 2147483647) refuse('is not a 32-bit integer');
      return n;
    }
    case 'Money': {
      const n = number();
      if (Math.round(n * 10000) / 10000 !== n || Math.abs(n) >= 1e15) refuse('is not an amount with at most 4 decimals');
      return n;
    }
    case 'Varchar50':
    case 'Varchar100': {
      const max = type === 'Varchar50' ? 50 : 100;
      if (typeof value !== 'string') return refuse('is not a string');
      if ([...value].length > max) refuse(`is longer than ${max} characters`);
      return value;
    }
    case 'VarcharMax':
    case 'Text':
      return typeof value === 'string' ? value : refuse('is not a string');
    case 'UniqueIdentifier':
      return typeof value === 'string' && GUID.test(value) ? value.toLowerCase() : refuse('is not a GUID');
    default:
      return refuse('has an unknown type');
  }
}

async function fieldsOf(trx: Trx, tenantId: string, def: DocumentDef): Promise<FieldRow[]> {
  const dt = await documentTypeId(trx, tenantId, def.className);
  const rows = await trx.selectFrom('user_fields').select(['id', 'column_name', 'data_type', 'data_type_id']).where('document_type_id', '=', dt).execute();
  return rows.map((r) => ({ id: r.id, column_name: r.column_name, type_id: r.data_type_id ?? FROM_STORAGE[r.data_type] ?? 8 }));
}

/** Sets the values sent (null clears one); UserFieldValueUpdated for each that changed. Answers the changed columns. */
export async function putUserFieldValues(
  trx: Trx,
  actor: Principal,
  def: DocumentDef,
  documentId: string,
  values: Record<string, unknown> | UserFieldEntry[],
  path: string,
): Promise<string[]> {
  const entries: UserFieldEntry[] = Array.isArray(values)
    ? values
    : Object.entries(values).map(([column, value]) => ({ column, value, path: `${path}/${column}` }));
  if (entries.length === 0) return [];
  const fields = await fieldsOf(trx, actor.tenantId, def);
  const changed: string[] = [];
  for (const entry of entries) {
    const field = fields.find((f) => f.column_name === entry.column) ?? fields.find((f) => f.column_name.toLowerCase() === entry.column.toLowerCase());
    if (!field) {
      throw new HttpProblem(422, `${def.type} has no custom field "${entry.column}".`, {
        errors: [{ path: entry.path, message: 'no such custom field' }],
        extra: { validColumnNames: fields.map((f) => f.column_name) },
      });
    }
    const value = checkValue(field.type_id, entry.value, entry.path);
    const { rows } =
      value === null
        ? await sql<{ before: unknown }>`delete from user_field_values where user_field_id = ${field.id} and document_id = ${documentId}
            returning value as before`.execute(trx)
        : await sql<{ before: unknown }>`
            with old as (select value from user_field_values where user_field_id = ${field.id} and document_id = ${documentId})
            insert into user_field_values as v (tenant_id, user_field_id, document_id, value, created_by_id, modified_by_id)
            values (${actor.tenantId}, ${field.id}, ${documentId}, ${JSON.stringify(value)}::jsonb, ${actor.userId}, ${actor.userId})
            on conflict (tenant_id, user_field_id, document_id) do update set value = excluded.value, modified_on_utc = now(), modified_by_id = excluded.modified_by_id
              where v.value is distinct from excluded.value
            returning (select value from old) as before`.execute(trx);
    // No row: nothing to clear, or the same value again.
    if (rows.length === 0) continue;
    changed.push(field.column_name);
    await appendEvent(trx, {
      tenantId: actor.tenantId,
      actionType: 'UserFieldValueUpdated',
      documentType: def.className,
      documentId,
      detail: { ColumnName: field.column_name, Value: value, ColumnDataTypeId: field.type_id },
      userId: actor.userId,
    });
  }
  return changed;
}

/** The document's custom-field values by column name. */
export async function userFieldValuesOf(trx: Trx, def: DocumentDef, documentId: string): Promise<Record<string, unknown>> {
  const { rows } = await sql<{ column_name: string; value: unknown }>`
    select f.column_name, v.value
      from user_field_values v
      join user_fields f on f.tenant_id = v.tenant_id and f.id = v.user_field_id
      join document_types dt on dt.tenant_id = f.tenant_id and dt.id = f.document_type_id and dt.class_name = ${def.className}
     where v.document_id = ${documentId}
     order by f.sort_order, f.column_name`.execute(trx);
  return Object.fromEntries(rows.map((r) => [r.column_name, r.value]));
}

/** Every field of the type with the document's value (null when unset) and its ColumnDataTypeId. */
export async function userFieldListOf(
  trx: Trx,
  tenantId: string,
  def: DocumentDef,
  documentId: string,
): Promise<{ ColumnName: string; Value: unknown; ColumnDataTypeId: number }[]> {
  const fields = await fieldsOf(trx, tenantId, def);
  const values = await userFieldValuesOf(trx, def, documentId);
  return fields.map((f) => ({ ColumnName: f.column_name, Value: values[f.column_name] ?? null, ColumnDataTypeId: f.type_id }));
}

/** The answer of PUT and GET /api/v3/documentUserFieldValues: the document and every custom field of its type. */
export async function userFieldValuesView(trx: Trx, tenantId: string, def: DocumentDef, documentId: string): Promise<Row> {
  return { DocumentTypeName: def.type, DocumentId: documentId, DocumentUserFieldValues: await userFieldListOf(trx, tenantId, def, documentId) };
}
