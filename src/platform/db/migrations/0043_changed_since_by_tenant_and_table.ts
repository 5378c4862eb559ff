// atrium_changed_since (migration 0015; the check behind kept counts, kept seek positions and the kept lookups
// of decision 0060) walked the change log's xid index from the kept answer's snapshot: every change of every
// tenant and table since then, filtered afterwards. A lookup kept for minutes while a tenant writes steadily
// (the principal of every Client API post, checked once per round trip) then scanned thousands of rows a
// check, a cost that grew with the writes since the snapshot, not with what the check asks (decision 0072).
// Now one index range per (tenant, table) asked, and one per table for changes with no tenant: each probe
// reads only the changes that could answer it, and stops at the first one the snapshot does not see.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create index extraction_changes_tenant_table_xid on extraction_changes (tenant, table_name, xid);

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

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
create or replace function atrium_changed_since(p_tenant uuid, p_tables text[], p_snapshot pg_snapshot) returns boolean
language sql stable parallel restricted security definer set search_path = public as $fn$
  select exists (select 1 from extraction_changes c
                  where c.xid >= pg_snapshot_xmin(p_snapshot) and c.table_name = any(p_tables)
                    and (c.tenant = p_tenant or c.tenant is null)
                    and not pg_visible_in_snapshot(c.xid, p_snapshot))
$fn$;
drop index extraction_changes_tenant_table_xid;
`.execute(db);
}
