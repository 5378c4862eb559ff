// `atrium import` (issue #33, decision 0053): one row per import run into a tenant (its source, options,
// progress and final report, so the operator API can show it), and a checkpoint per named query of a run:
// a query whose checkpoint is written was committed with it, so a run interrupted (even by SIGKILL)
// continues from the first query without one.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table import_runs (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  -- The source as base URL and tenant id (never its credentials).
  source text not null,
  options jsonb not null default '{}'::jsonb,
  -- A queued run's credentials for the worker (operator API), sealed with ATRIUM_SECRET_KEY; cleared when it ends.
  credentials_sealed text,
  status text not null default 'Running' check (status in ('Queued', 'Running', 'Completed', 'Failed')),
  progress jsonb not null default '{}'::jsonb,
  report jsonb,
  error text,
  started_on_utc timestamptz not null default now(),
  finished_on_utc timestamptz,
  primary key (tenant_id, id)
);
create index import_runs_source on import_runs (tenant_id, source, started_on_utc desc);
select atrium_enable_rls('import_runs');

create table import_checkpoints (
  tenant_id uuid not null,
  run_id uuid not null,
  named_query text not null,
  rows_read integer not null,
  rows_written integer not null,
  rows_deleted integer not null default 0,
  completed_on_utc timestamptz not null default now(),
  primary key (tenant_id, run_id, named_query),
  foreign key (tenant_id, run_id) references import_runs (tenant_id, id) on delete cascade
);
select atrium_enable_rls('import_checkpoints');

grant select, insert, update, delete on import_runs, import_checkpoints to atrium_app;
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table import_checkpoints; drop table import_runs;`.execute(db);
}
