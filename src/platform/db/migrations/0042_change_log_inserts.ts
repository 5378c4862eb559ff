// The change log (migration 0015) says what a statement did (decision 0070, issue #32 item 1): each change row
// carries its operation ('I' insert, 'U' update, 'D' delete, 'T' truncate) and, for an INSERT into a table keyed
// by a uuid `id`, the ids of the rows it inserted (at most MAX_IDS; a larger statement, a bulk load, logs none).
// A kept count whose only changes since its snapshot are such inserts into its query's driving table is brought
// up to date by counting those rows alone (the count delta, count-cache.ts) instead of counting again.
// Inserts into a key table (KEY_TABLES: the tables a named query declares as its keyTable) are logged by a
// trigger of their own that reads the statement's transition table (a trigger with one cannot fire on several
// events); every other change, inserts into other tables included, by atrium_log_change as before (op set, no
// ids). A transition table keeps every inserted row for the statement, so only the key tables pay for it (bulk
// loads of other tables stay as cheap as before). Both stay ENABLE ALWAYS. atrium_inserted_since answers, in the caller's snapshot, the ids a kept count has not seen, or
// null when a change it has not seen is anything else.
import { type Kysely, sql } from 'kysely';

const MAX_IDS = 1000;
/** The tables a named query declares as its keyTable (src/extraction/queries/): a new one needs a migration. */
const KEY_TABLES = ['timesheets'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
alter table extraction_changes add column op "char", add column ids uuid[];

create or replace function atrium_log_change() returns trigger language plpgsql security definer set search_path = public as $fn$
begin
  insert into extraction_changes (tenant, table_name, op)
  values (nullif(current_setting('atrium.tenant_id', true), '')::uuid, tg_table_name, left(tg_op, 1)::"char");
  return null;
end
$fn$;

create function atrium_log_insert() returns trigger language plpgsql security definer set search_path = public as $fn$
declare
  inserted uuid[];
begin
  select coalesce(array_agg(n.id), '{}') into inserted from (select id from atrium_inserted limit ${sql.lit(MAX_IDS + 1)}) n;
  insert into extraction_changes (tenant, table_name, op, ids)
  values (nullif(current_setting('atrium.tenant_id', true), '')::uuid, tg_table_name, 'I',
          case when cardinality(inserted) <= ${sql.lit(MAX_IDS)} then inserted end);
  return null;
end
$fn$;

-- The ids of the rows p_table gained for the tenant since p_snapshot, when every change to p_tables since then
-- (for the tenant, or for no tenant) is an insert into p_table logged with its ids; else null.
create function atrium_inserted_since(p_tenant uuid, p_tables text[], p_snapshot pg_snapshot, p_table text) returns uuid[]
language sql stable parallel restricted security definer set search_path = public as $fn$
  select case when coalesce(bool_and(coalesce(c.op = 'I' and c.ids is not null and c.table_name = p_table and c.tenant = p_tenant, false)), true)
              then coalesce(array_agg(i.id) filter (where i.id is not null), '{}') end
    from extraction_changes c
    left join lateral unnest(c.ids) as i(id) on true
   where c.xid >= pg_snapshot_xmin(p_snapshot) and c.table_name = any(p_tables)
     and (c.tenant = p_tenant or c.tenant is null)
     and not pg_visible_in_snapshot(c.xid, p_snapshot)
$fn$;
revoke all on function atrium_inserted_since(uuid, text[], pg_snapshot, text) from public;
grant execute on function atrium_inserted_since(uuid, text[], pg_snapshot, text) to atrium_app;
`.execute(db);
  const tables = await sql<{ name: string }>`
    select c.relname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
     where t.tgname = 'atrium_log_change' and n.nspname = 'public' and c.relname = any(${KEY_TABLES})
       and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'id' and a.atttypid = 'uuid'::regtype and not a.attisdropped)
     order by 1`.execute(db);
  for (const { name } of tables.rows) {
    await sql`drop trigger atrium_log_change on ${sql.table(name)};
      create trigger atrium_log_change after update or delete or truncate on ${sql.table(name)} for each statement execute function atrium_log_change();
      alter table ${sql.table(name)} enable always trigger atrium_log_change;
      create trigger atrium_log_insert after insert on ${sql.table(name)} referencing new table as atrium_inserted
        for each statement execute function atrium_log_insert();
      alter table ${sql.table(name)} enable always trigger atrium_log_insert`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const tables = await sql<{ name: string }>`
    select c.relname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
     where t.tgname = 'atrium_log_insert' and n.nspname = 'public' order by 1`.execute(db);
  for (const { name } of tables.rows) {
    await sql`drop trigger atrium_log_insert on ${sql.table(name)};
      drop trigger atrium_log_change on ${sql.table(name)};
      create trigger atrium_log_change after insert or update or delete or truncate on ${sql.table(name)} for each statement execute function atrium_log_change();
      alter table ${sql.table(name)} enable always trigger atrium_log_change`.execute(db);
  }
  await sql`
drop function atrium_inserted_since(uuid, text[], pg_snapshot, text);
drop function atrium_log_insert();
create or replace function atrium_log_change() returns trigger language plpgsql security definer set search_path = public as $fn$
begin
  insert into extraction_changes (tenant, table_name)
  values (nullif(current_setting('atrium.tenant_id', true), '')::uuid, tg_table_name);
  return null;
end
$fn$;
alter table extraction_changes drop column ids, drop column op;
`.execute(db);
}
