-- Citus distribution of Atrium's schema (docs/deployment.md, "Beyond one primary: Citus"). Run with psql on
-- the coordinator after `atrium migrate`, with the citus extension created, in one session (the foreign keys
-- are kept in a temporary table between the steps); each \gexec runs the statements its query generates.
-- tenants becomes the reference table (a copy on every node); every table with tenant_id is distributed by
-- it, all in Citus's default colocation group (same column type, same shard count), so the rows, joins and
-- foreign keys of one tenant stay on one node. The foreign keys are set aside and put back afterwards:
-- Citus distributes a table only once the targets of its foreign keys are, and the catalogue tables
-- (companies, services, service_groups, vats) reference each other in a cycle.
-- test/citus-readiness.test.ts runs the generating queries on the migrated catalog.

create temporary table atrium_foreign_keys as
  select k.conrelid::regclass::text as table_name, k.conname as name, pg_get_constraintdef(k.oid) as definition
  from pg_constraint k join pg_namespace n on n.oid = k.connamespace and n.nspname = 'public'
  where k.contype = 'f';

select format('alter table %s drop constraint %I', table_name, name) from atrium_foreign_keys
\gexec

select create_reference_table('tenants');
-- MCP's OAuth clients are registered once per server; the tenants' tokens and codes point at them.
select create_reference_table('oauth_clients');

select format('select create_distributed_table(%L, %L)', c.relname, 'tenant_id')
from pg_class c
join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
where c.relkind in ('r', 'p') and not c.relispartition
order by c.relname
\gexec

select format('alter table %s add constraint %I %s', table_name, name, definition) from atrium_foreign_keys
\gexec
