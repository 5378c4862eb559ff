// SQL fragments shared by the people-and-time named queries: how a user's display name, a date as a
// UTC datetime and a custom-field pivot are written, so every query spells them the same way.
import type { RawBuilder } from 'kysely';
import { type ColumnType, type QueryContext, sql } from '../../definition.ts';

/** A user's display name: the full name, else the login (names are optional, logins are not). */
export const userName = (alias: string): RawBuilder<unknown> => sql`coalesce(${sql.ref(`${alias}.name`)}, ${sql.ref(`${alias}.user_name`)})`;

/** A calendar date exposed as a catalogue datetime: midnight UTC of that day. */
export const dateAsUtc = (column: string): RawBuilder<unknown> => sql`(${sql.ref(column)}::timestamp at time zone 'UTC')`;

/** The tenant's user-defined fields of one document type (by class name), in column order, typed as the catalogue types. */
export const userFieldsOf =
  (className: string) =>
  (ctx: QueryContext): RawBuilder<{ name: string; type: ColumnType }> =>
    sql<{ name: string; type: ColumnType }>`
      select uf.column_name as name,
             case uf.data_type when 'Text' then 'string' when 'Number' then 'decimal' when 'Date' then 'date'
                               when 'Boolean' then 'boolean' else 'guid' end as type
        from user_fields uf
        join document_types dt on dt.tenant_id = uf.tenant_id and dt.id = uf.document_type_id
       where uf.tenant_id = ${ctx.tenantId} and dt.class_name = ${className}
       order by uf.sort_order, uf.column_name`;

/**
 * The `__fields` column of an *AdditionalInformation row: field column name -> stored JSON scalar, for
 * the document whose id is `idColumn` (fields of other document types are ignored).
 */
export const userFieldValues = (idColumn: string, className: string): RawBuilder<unknown> => sql`
  coalesce((select jsonb_object_agg(uf.column_name, v.value order by uf.sort_order)
              from user_field_values v
              join user_fields uf on uf.tenant_id = v.tenant_id and uf.id = v.user_field_id
              join document_types dt on dt.tenant_id = uf.tenant_id and dt.id = uf.document_type_id
             where v.tenant_id = ${sql.ref(idColumn.replace(/\.id$/, '.tenant_id'))} and v.document_id = ${sql.ref(idColumn)}
               and dt.class_name = ${className}), '{}'::jsonb)`;
