// The SFTP user feed (a built-in automation): which automation is the tenant's feed, each feed run with its
// per-file summary, each data file ever processed (claimed by content hash, so the same content under
// another name changes nothing) and each row's outcome, committed with the row's changes so a re-run after
// a crash resumes where the dead worker stopped.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table user_feeds (
  tenant_id uuid not null references tenants (id) on delete cascade primary key,
  automation_id uuid not null,
  foreign key (tenant_id, automation_id) references automations (tenant_id, id) on delete cascade
);
select atrium_enable_rls('user_feeds');

create table user_feed_runs (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  automation_id uuid,
  trigger text not null,
  dry_run boolean not null,
  -- The automation run this feed run belongs to (manual runs; a scheduled run's row is the worker's).
  automation_run_id uuid,
  status text not null default 'Running' check (status in ('Running', 'Succeeded', 'Failed')),
  started_on_utc timestamptz not null default now(),
  finished_on_utc timestamptz,
  error text,
  -- Per file: name, status, message, counts; a dry run's rows too (they are in no other table).
  files jsonb not null default '[]'::jsonb,
  primary key (tenant_id, id)
);
create index user_feed_runs_latest on user_feed_runs (tenant_id, started_on_utc desc);
select atrium_enable_rls('user_feed_runs');

create table user_feed_files (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  content_sha256 text not null,
  file_name text not null,
  status text not null default 'Processing' check (status in ('Processing', 'Succeeded', 'Failed')),
  message text,
  run_id uuid,
  notified boolean not null default false,
  created_on_utc timestamptz not null default now(),
  finished_on_utc timestamptz,
  primary key (tenant_id, id),
  unique (tenant_id, content_sha256)
);
select atrium_enable_rls('user_feed_files');

create table user_feed_rows (
  tenant_id uuid not null,
  file_id uuid not null,
  row_number integer not null,
  external_id text,
  outcome text not null check (outcome in ('Created', 'Updated', 'Deactivated', 'Unchanged', 'Skipped', 'Failed')),
  user_id uuid,
  message text,
  -- A freelancer created inactive, waiting for the second pass that activates it.
  pending_activation boolean not null default false,
  primary key (tenant_id, file_id, row_number),
  foreign key (tenant_id, file_id) references user_feed_files (tenant_id, id) on delete cascade
);
select atrium_enable_rls('user_feed_rows');

grant select, insert, update, delete on user_feeds, user_feed_runs, user_feed_files, user_feed_rows to atrium_app;
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table user_feed_rows; drop table user_feed_files; drop table user_feed_runs; drop table user_feeds;`.execute(db);
}
