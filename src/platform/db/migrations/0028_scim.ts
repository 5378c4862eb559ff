// SCIM 2.0 provisioning (decision 0047): the bearer tokens identity providers call with (only a SHA-256 of
// each is kept; a revoked one stays for the record), the tenant's SCIM settings (defaults and mapping rules
// for what the Integration API needs and SCIM does not carry), and per user what SCIM holds beyond Atrium's
// fields: the name parts, and whether a SCIM DELETE removed it (404 from then on, RFC 7644 §3.6, while Atrium
// keeps the user deactivated).
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table scim_tokens (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  token_hash text not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  revoked_on_utc timestamptz,
  primary key (tenant_id, id),
  unique (tenant_id, token_hash)
);
select atrium_enable_rls('scim_tokens');
-- A revocation tells every process to drop its cached token verifications, as for apps (0018).
create trigger scim_tokens_notify_auth after update or delete or insert on scim_tokens for each statement execute function atrium_notify_auth();

create table scim_settings (
  tenant_id uuid not null references tenants (id) on delete cascade primary key,
  settings jsonb not null,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid
);
select atrium_enable_rls('scim_settings');

-- What SCIM says of a user that is no Atrium user field: the name parts (Atrium keeps one Name) and the
-- time a SCIM DELETE removed it (answered 404 from then on; a POST with its externalId brings it back).
create table scim_users (
  tenant_id uuid not null,
  user_id uuid not null,
  given_name text,
  family_name text,
  deleted_on_utc timestamptz,
  primary key (tenant_id, user_id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
);
select atrium_enable_rls('scim_users');

grant select, insert, update, delete on scim_tokens, scim_settings, scim_users to atrium_app;
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table scim_users; drop table scim_settings; drop table scim_tokens;`.execute(db);
}
