// Scheduled extraction: schedules (a named query, a format, a cron expression) and their runs. The
// unique (schedule, fire time) key makes each cron occurrence run once, however many workers fire it.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table extraction_schedules (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  query text not null,
  format text not null check (format in ('csv', 'json', 'ndjson', 'xlsx')),
  cron_expression text not null,
  active boolean not null default true,
  query_builder jsonb,
  parameters jsonb,
  -- Whom runs act as: the app (and X-AppUser) that last saved the schedule; their roles apply at run time.
  run_as_app_id uuid,
  run_as_user_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id)
);
select atrium_enable_rls('extraction_schedules');

create table extraction_schedule_runs (
  tenant_id uuid not null,
  id uuid not null default gen_random_uuid(),
  schedule_id uuid not null,
  trigger text not null check (trigger in ('schedule', 'manual')),
  -- The cron occurrence a scheduled run belongs to (null for run-now).
  fire_time_utc timestamptz,
  started_on_utc timestamptz not null default now(),
  finished_on_utc timestamptz,
  status text not null default 'Running' check (status in ('Running', 'Succeeded', 'Failed')),
  rows bigint,
  bytes bigint,
  error text,
  file_name text,
  -- Relative to the exports directory; null once retention deleted the file.
  file_path text,
  file_deleted_on_utc timestamptz,
  primary key (tenant_id, id),
  unique (tenant_id, schedule_id, fire_time_utc),
  foreign key (tenant_id, schedule_id) references extraction_schedules (tenant_id, id) on delete cascade
);
create index extraction_schedule_runs_latest on extraction_schedule_runs (tenant_id, schedule_id, started_on_utc desc);
create index extraction_schedule_runs_running on extraction_schedule_runs (started_on_utc) where status = 'Running';
select atrium_enable_rls('extraction_schedule_runs');

grant select, insert, update, delete on extraction_schedules, extraction_schedule_runs to atrium_app;

-- Schedules are documents of their own (events, webhook subscriptions); tenants created from now on get
-- the type from the bootstrap.
insert into document_types (tenant_id, name, class_name, full_name)
select id, 'Data Extraction Schedule', 'DataExtractionSchedule', 'Skill.Module.BusinessObjects.DataExtractionSchedule' from tenants
on conflict do nothing;
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table extraction_schedule_runs; drop table extraction_schedules;`.execute(db);
}
