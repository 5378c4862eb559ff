// Custom tables: the catalogue (a tenant's table names -> physical tables in schema customtables,
// their typed columns and Read/Save roles). The physical tables themselves are created at run time
// by src/custom-tables, as the database owner, so the request role atrium_app only ever has DML on them.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create schema if not exists customtables;
grant usage on schema customtables to atrium_app;

create table custom_tables (
  tenant_id uuid not null references tenants(id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  name_key text not null,
  physical_name text not null,
  key_column_name text not null,
  key_physical_name text not null,
  key_data_type_id integer not null,
  key_length integer,
  read_roles text[] not null default '{}',
  save_roles text[] not null default '{}',
  created_on_utc timestamptz not null default now(),
  modified_on_utc timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, name_key),
  check (name_key = lower(name))
);
create unique index custom_tables_physical_name on custom_tables (physical_name);
select atrium_enable_rls('custom_tables');

create table custom_table_columns (
  tenant_id uuid not null,
  table_id uuid not null,
  name text not null,
  name_key text not null,
  physical_name text not null,
  data_type_id integer not null,
  length integer,
  ordinal integer not null,
  primary key (tenant_id, table_id, name_key),
  foreign key (tenant_id, table_id) references custom_tables(tenant_id, id) on delete cascade,
  check (name_key = lower(name))
);
select atrium_enable_rls('custom_table_columns');

grant select, insert, update, delete on custom_tables, custom_table_columns to atrium_app;
`.execute(db);
}
