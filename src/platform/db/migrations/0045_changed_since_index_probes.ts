// atrium_changed_since as migration 0043 wrote it (an EXISTS per table asked, inside an EXISTS over unnest) was
// planned as two hashed subplans over the change log's xid index: every change of every tenant since the
// snapshot's xmin read and hashed on each call, ~55 µs a check on a quiet log, more with every write since, the
// cost 0043 meant to remove (decision 0081). Written as one probe of the (tenant, table_name, xid) index with the
// tables as `= any(…)` (and one for changes with no tenant), each call reads only the entries that could answer
// it (index-only scans, generic plan included): ~18 µs. Same answer.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create or replace function atrium_changed_since(p_tenant uuid, p_tables text[], p_snapshot pg_snapshot) returns boolean
language sql stable parallel restricted security definer set search_path = public as $fn$
  select exists (select 1 from extraction_changes c
                  where c.tenant = p_tenant and c.table_name = any(p_tables)
                    and c.xid >= pg_snapshot_xmin(p_snapshot) and not pg_visible_in_snapshot(c.xid, p_snapshot))
      or exists (select 1 from extraction_changes c
                  where c.tenant is null and c.table_name = any(p_tables)
                    and c.xid >= pg_snapshot_xmin(p_snapshot) and not pg_visible_in_snapshot(c.xid, p_snapshot))
$fn$;
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
create or replace function atrium_changed_since(p_tenant uuid, p_tables text[], p_snapshot pg_snapshot) returns boolean
language sql stable parallel restricted security definer set search_path = public as $fn$
  select exists (select 1 from unnest(p_tables) t(name)
                  where exists (select 1 from extraction_changes c
                                 where c.tenant = p_tenant and c.table_name = t.name
                                   and c.xid >= pg_snapshot_xmin(p_snapshot)
                                   and not pg_visible_in_snapshot(c.xid, p_snapshot))
                     or exists (select 1 from extraction_changes c
                                 where c.tenant is null and c.table_name = t.name
                                   and c.xid >= pg_snapshot_xmin(p_snapshot)
                                   and not pg_visible_in_snapshot(c.xid, p_snapshot)))
$fn$;
`.execute(db);
}
