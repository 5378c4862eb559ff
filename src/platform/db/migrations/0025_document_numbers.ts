// Document numbers per document type and tenant (decision 0044): the next number a create takes is one
// past the larger of the last one given and the highest of that prefix in use, so numbers continue after
// the demo data's and after imports; the row lock of the counter orders concurrent creates. And a
// heartbeat for user-feed runs, so a run whose process died is swept to Failed (on start-up, periodically).
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table document_numbers (
  tenant_id uuid not null references tenants (id) on delete cascade,
  prefix text not null,
  last_value bigint not null,
  primary key (tenant_id, prefix)
);
select atrium_enable_rls('document_numbers');
grant select, insert, update on document_numbers to atrium_app;

-- Written by the process running the feed while it runs; a Running run whose heartbeat is old was orphaned.
alter table user_feed_runs add column heartbeat_utc timestamptz not null default now();
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table document_numbers; alter table user_feed_runs drop column heartbeat_utc;`.execute(db);
}
