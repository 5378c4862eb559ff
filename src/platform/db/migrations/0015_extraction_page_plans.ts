// Data Extraction at scale (docs/extraction-page-plans.md has the plans that justify each index; decisions
// 0021 and 0022 the page plan and the count cache).
// - Two partial indexes of live timesheets for the keys-first page: (tenant, date desc, id) serves
//   `orderBy Day desc` (the key breaks ties ascending) and its deep pages, and (tenant, id) the default order
//   (the key) a paging loader uses; both answer the skipped keys and the count by index-only scans.
// - The change log the count cache checks: a statement-level trigger on every table a named query reads
//   appends one row (the tenant bound to the transaction, or null for "any tenant", the table, the writing
//   transaction's id). Appending, never updating one row, so concurrent writers never wait on each other.
//   The triggers are ENABLE ALWAYS: bulk loads that switch foreign-key triggers off (session_replication_role
//   = replica, the demo loader) still log their COPYs.
import { type Kysely, sql } from 'kysely';

/** Tables no named query reads, written often: not logged. */
const UNTRACKED = [
  'events',
  'webhook_attempts',
  'webhook_invocations',
  'webhook_subscriptions',
  'webhook_detail_filters',
  'idempotency_keys',
  'refresh_tokens',
  'extraction_schedules',
  'extraction_schedule_runs',
  'apps',
  'custom_tables',
  'custom_table_columns',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create index if not exists timesheets_live_date_id on timesheets (tenant_id, date desc, id) where deleted_on is null;
create index if not exists timesheets_live_id on timesheets (tenant_id, id) where deleted_on is null;

-- Not a tenant table (no tenant_id, no RLS): only the two functions below, running as the owner, touch it.
create table extraction_changes (
  tenant uuid,
  table_name text not null,
  xid xid8 not null default pg_current_xact_id()
);
create index extraction_changes_xid on extraction_changes (xid);

-- The sweep's horizon (one row, written only by the maintenance job): the oldest running transaction
-- id when it was taken; changes below it are deleted once no cached count can predate it.
create table extraction_change_horizon (
  id int primary key check (id = 1),
  oldest_xid xid8 not null,
  taken_on_utc timestamptz not null
);

create function atrium_log_change() returns trigger language plpgsql security definer set search_path = public as $fn$
begin
  insert into extraction_changes (tenant, table_name)
  values (nullif(current_setting('atrium.tenant_id', true), '')::uuid, tg_table_name);
  return null;
end
$fn$;

-- Whether a table of tables changed for the tenant after the snapshot (a cached count's): a change row
-- of a transaction the snapshot did not see. Rows below the snapshot's xmin were all visible to it.
create function atrium_changed_since(p_tenant uuid, p_tables text[], p_snapshot pg_snapshot) returns boolean
language sql stable security definer set search_path = public as $fn$
  select exists (select 1 from extraction_changes c
                  where c.xid >= pg_snapshot_xmin(p_snapshot) and c.table_name = any(p_tables)
                    and (c.tenant = p_tenant or c.tenant is null)
                    and not pg_visible_in_snapshot(c.xid, p_snapshot))
$fn$;
revoke all on function atrium_changed_since(uuid, text[], pg_snapshot) from public;
grant execute on function atrium_changed_since(uuid, text[], pg_snapshot) to atrium_app;
revoke all on extraction_changes, extraction_change_horizon from atrium_app;
`.execute(db);
  const tables = await sql<{ table_name: string }>`
    select c.table_name from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema = 'public' and c.column_name = 'tenant_id' and t.table_type = 'BASE TABLE'
       and c.table_name <> all(${UNTRACKED}) and c.table_name not like 'extraction_change%'
     order by c.table_name`.execute(db);
  for (const { table_name } of tables.rows) {
    await sql`create trigger atrium_log_change after insert or update or delete or truncate on ${sql.table(table_name)}
      for each statement execute function atrium_log_change();
      alter table ${sql.table(table_name)} enable always trigger atrium_log_change`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
drop function if exists atrium_log_change() cascade;
drop function if exists atrium_changed_since(uuid, text[], pg_snapshot);
drop table if exists extraction_change_horizon;
drop table if exists extraction_changes;
drop index if exists timesheets_live_id;
drop index if exists timesheets_live_date_id;
`.execute(db);
}
