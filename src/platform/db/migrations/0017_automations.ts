// Automations: definitions (every saved version kept, so a run shows what it ran), their runs with the
// per-action log, the scheduler's next fire time, the automation roles, and the index the automation
// engine claims webhook invocations by. A scheduled run is unique per (automation, fire time): each
// occurrence runs once however many workers see it.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table automations (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  active boolean not null default true,
  version integer not null default 1,
  -- The platform's definition as saved (actions, subWorkflows, scheduler, logLevelType, requiresAuthentication).
  definition jsonb not null,
  -- The scheduler's next occurrence; null without an active scheduler. Workers claim rows whose time has come.
  next_fire_utc timestamptz,
  -- Whom runs act as (isApiCall, AnalyticsNamedQuery): the app and user that last saved the automation.
  run_as_app_id uuid,
  run_as_user_id uuid,
  -- The saving app's X-AppId, X-AppSecret (and X-AppUser), sealed by the SecretBox: what isApiCall sends, as
  -- the platform adds the tenant's credentials. Null when the automation was saved with a token.
  api_credentials text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id)
);
create index automations_due on automations (next_fire_utc) where next_fire_utc is not null and active;
select atrium_enable_rls('automations');

create table automation_versions (
  tenant_id uuid not null,
  automation_id uuid not null,
  version integer not null,
  definition jsonb not null,
  created_on_utc timestamptz not null default now(),
  primary key (tenant_id, automation_id, version),
  foreign key (tenant_id, automation_id) references automations (tenant_id, id) on delete cascade
);
select atrium_enable_rls('automation_versions');

create table automation_runs (
  tenant_id uuid not null,
  id uuid not null default gen_random_uuid(),
  automation_id uuid not null,
  version integer not null,
  trigger text not null check (trigger in ('webhook', 'schedule', 'manual', 'http', 'workflow')),
  status text not null default 'Running' check (status in ('Running', 'Succeeded', 'Failed')),
  -- A webhook run: its event and invocation (a redelivery after a crash carries the same event id).
  event_id uuid,
  invocation_id uuid,
  fire_time_utc timestamptz,
  started_on_utc timestamptz not null default now(),
  finished_on_utc timestamptz,
  error text,
  -- Per action: name, type, start, duration, input, output (trimmed, secrets masked), error.
  actions jsonb not null default '[]'::jsonb,
  result jsonb,
  primary key (tenant_id, id),
  unique (tenant_id, automation_id, fire_time_utc),
  foreign key (tenant_id, automation_id) references automations (tenant_id, id) on delete cascade
);
create index automation_runs_latest on automation_runs (tenant_id, automation_id, started_on_utc desc);
create index automation_runs_finished on automation_runs (finished_on_utc);
create index automation_runs_running on automation_runs (started_on_utc) where status = 'Running';
select atrium_enable_rls('automation_runs');

grant select, insert, update, delete on automations, automation_versions, automation_runs to atrium_app;

-- Invocations of IsAutomation subscriptions wait here for the automation engine, oldest first.
create index webhook_invocations_automation_due on webhook_invocations (seq) where destination = 'automation' and status = 'Pending';

insert into roles (tenant_id, name, description)
select t.id, r.name, r.description from tenants t,
  (values ('AutomationGet', 'List and get automations and their runs'), ('AutomationCreate', 'Create automations'),
          ('AutomationWrite', 'Update and run automations'), ('AutomationDelete', 'Delete automations')) as r (name, description)
on conflict do nothing;
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index webhook_invocations_automation_due; drop table automation_runs; drop table automation_versions; drop table automations;`.execute(db);
}
