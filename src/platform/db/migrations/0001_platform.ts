// Platform tables: tenants, API apps, roles, the event outbox, refresh tokens, idempotency keys.
// Also the non-owner role atrium_app that requests run as, and the helper that puts a table under RLS.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
do $$ begin
  if not exists (select 1 from pg_roles where rolname = 'atrium_app') then
    create role atrium_app nologin;
  end if;
  if not (select rolsuper from pg_roles where rolname = current_user) then
    begin
      execute 'grant atrium_app to ' || quote_ident(current_user);
    exception when others then null;
    end;
  end if;
end $$;

create or replace function atrium_enable_rls(t text) returns void language plpgsql as $f$ begin
  execute format('alter table %I enable row level security', t);
  execute format('alter table %I force row level security', t);
  execute format('create policy tenant_isolation on %I using (tenant_id = nullif(current_setting(''atrium.tenant_id'', true), '''')::uuid) with check (tenant_id = nullif(current_setting(''atrium.tenant_id'', true), '''')::uuid)', t);
end $f$;

create table tenants (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  created_on_utc timestamptz not null default now()
);
alter table tenants enable row level security;
alter table tenants force row level security;
create policy tenant_isolation on tenants using (id = nullif(current_setting('atrium.tenant_id', true), '')::uuid);

create table apps (
  tenant_id uuid not null references tenants(id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  app_id text not null,
  name text not null,
  secret_hash text not null,
  created_on_utc timestamptz not null default now(),
  rotated_on_utc timestamptz,
  revoked_on_utc timestamptz,
  primary key (tenant_id, id),
  unique (tenant_id, app_id)
);
select atrium_enable_rls('apps');

create table roles (
  tenant_id uuid not null references tenants(id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  description text,
  created_on_utc timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, name)
);
select atrium_enable_rls('roles');

create table app_roles (
  tenant_id uuid not null,
  app_id uuid not null,
  role_id uuid not null,
  primary key (tenant_id, app_id, role_id),
  foreign key (tenant_id, app_id) references apps(tenant_id, id) on delete cascade,
  foreign key (tenant_id, role_id) references roles(tenant_id, id) on delete cascade
);
select atrium_enable_rls('app_roles');

-- The transactional outbox: every change appends its events here in its own transaction.
create table events (
  tenant_id uuid not null references tenants(id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  seq bigint generated always as identity,
  action_type text not null,
  document_type text not null,
  document_id uuid,
  business_object_type_name text,
  detail jsonb not null default '{}'::jsonb,
  user_id uuid,
  occurred_on_utc timestamptz not null default now(),
  primary key (tenant_id, id)
);
create unique index events_seq on events (seq);
create index events_tenant_seq on events (tenant_id, seq);
select atrium_enable_rls('events');

create table refresh_tokens (
  tenant_id uuid not null references tenants(id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  token_hash text not null,
  user_id uuid,
  app_id uuid,
  acting_as_delegate boolean not null default false,
  expires_on_utc timestamptz not null,
  created_on_utc timestamptz not null default now(),
  used_on_utc timestamptz,
  primary key (tenant_id, id),
  unique (tenant_id, token_hash)
);
select atrium_enable_rls('refresh_tokens');

create table idempotency_keys (
  tenant_id uuid not null references tenants(id) on delete cascade,
  key text not null,
  principal text not null,
  method text not null,
  path text not null,
  body_hash text not null,
  status_code integer,
  response_body text,
  response_headers jsonb,
  created_on_utc timestamptz not null default now(),
  primary key (tenant_id, principal, key)
);
create index idempotency_keys_created on idempotency_keys (created_on_utc);
select atrium_enable_rls('idempotency_keys');
`.execute(db);
}
