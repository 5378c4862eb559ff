// Saved queries of the console's explorer and charts (decision 0054): a named query with its query builder,
// parameters and view (table columns and widths, or chart settings), saved by a user (or an app) of a tenant
// and private to them until shared with the tenant.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table saved_queries (
  tenant_id uuid not null references tenants(id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (char_length(name) between 1 and 200),
  named_query text not null check (char_length(named_query) between 1 and 200),
  query_builder jsonb not null default '{}',
  parameters jsonb not null default '{}',
  view jsonb not null default '{}',
  -- Who saved it: a user, or an app acting without one.
  owner_user_id uuid,
  owner_app_id uuid,
  shared boolean not null default false,
  created_on_utc timestamptz not null default now(),
  modified_on_utc timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, owner_user_id) references users(tenant_id, id) on delete cascade,
  check (owner_user_id is not null or owner_app_id is not null),
  check (octet_length(query_builder::text) + octet_length(parameters::text) + octet_length(view::text) <= 65536)
);
select atrium_enable_rls('saved_queries');
create index saved_queries_owner on saved_queries (tenant_id, owner_user_id, owner_app_id);
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table saved_queries;`.execute(db);
}
