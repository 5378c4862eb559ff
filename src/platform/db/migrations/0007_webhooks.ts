// Webhooks: subscriptions (secret sealed by the app's SecretBox), their detail filters, invocations
// with every attempt, and the dispatcher's cursor over the event outbox.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table webhook_subscriptions (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  description text,
  action_type text not null,
  document_type text not null,
  url text,
  secret text not null,
  active boolean not null default false,
  is_automation boolean not null default false,
  automation_id uuid,
  business_object_type_name text,
  -- First failed delivery since the last success; deactivation counts from here.
  failing_since timestamptz,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id)
);
create index webhook_subscriptions_match on webhook_subscriptions (tenant_id, action_type, document_type) where active;
select atrium_enable_rls('webhook_subscriptions');

create table webhook_detail_filters (
  tenant_id uuid not null,
  subscription_id uuid not null,
  position integer not null,
  group_condition text not null check (group_condition in ('And', 'Or')),
  json_path_expression text not null,
  condition text not null check (condition in ('Equal', 'NotEqual', 'Contains', 'NotContains')),
  value text not null,
  primary key (tenant_id, subscription_id, position),
  foreign key (tenant_id, subscription_id) references webhook_subscriptions (tenant_id, id) on delete cascade
);
select atrium_enable_rls('webhook_detail_filters');

-- One invocation per (subscription, event): the unique key makes the dispatcher exactly-once even
-- when two workers race. The id is the webhook-id every attempt carries.
create table webhook_invocations (
  tenant_id uuid not null,
  id uuid not null default gen_random_uuid(),
  seq bigint generated always as identity,
  subscription_id uuid not null,
  event_id uuid,
  kind text not null default 'event' check (kind in ('event', 'test')),
  destination text not null default 'url' check (destination in ('url', 'automation')),
  action_type text not null,
  document_type text not null,
  document_id uuid,
  payload text not null,
  status text not null default 'Pending' check (status in ('Pending', 'Retrying', 'Succeeded', 'Failed')),
  attempt_count integer not null default 0,
  -- Attempts since the invocation was (re)queued; indexes the retry schedule.
  round_attempts integer not null default 0,
  next_attempt_on_utc timestamptz,
  lease_until timestamptz,
  lease_token uuid,
  created_on_utc timestamptz not null default now(),
  completed_on_utc timestamptz,
  primary key (tenant_id, id),
  unique (tenant_id, subscription_id, event_id),
  foreign key (tenant_id, subscription_id) references webhook_subscriptions (tenant_id, id) on delete cascade
);
create index webhook_invocations_due on webhook_invocations (next_attempt_on_utc) where status in ('Pending', 'Retrying') and destination = 'url';
create index webhook_invocations_history on webhook_invocations (tenant_id, subscription_id, seq desc);
select atrium_enable_rls('webhook_invocations');

create table webhook_attempts (
  tenant_id uuid not null,
  invocation_id uuid not null,
  attempt integer not null,
  started_on_utc timestamptz not null,
  duration_ms integer not null,
  status_code integer,
  response_body text,
  error text,
  primary key (tenant_id, invocation_id, attempt),
  foreign key (tenant_id, invocation_id) references webhook_invocations (tenant_id, id) on delete cascade
);
select atrium_enable_rls('webhook_attempts');

grant select, insert, update, delete on webhook_subscriptions, webhook_detail_filters, webhook_invocations, webhook_attempts to atrium_app;

-- The outbox's seq is taken at insert, not at commit, so a later seq can commit first. The
-- dispatcher therefore walks events in (transaction id, seq) order and only below the oldest
-- transaction still running: once read, nothing can appear behind the cursor.
alter table events add column txid xid8 not null default pg_current_xact_id();
create index events_dispatch on events (txid, seq);

-- One row, owner-only (no tenant): the position of the dispatcher in the outbox.
create table webhook_dispatch_cursor (
  id integer primary key check (id = 1),
  last_txid xid8 not null,
  last_seq bigint not null,
  updated_on_utc timestamptz not null default now()
);
insert into webhook_dispatch_cursor (id, last_txid, last_seq) values (1, '0', 0);
revoke all on webhook_dispatch_cursor from atrium_app;
`.execute(db);
}
