// The MCP server's authorization (decision 0049): OAuth clients registered dynamically (RFC 7591; one list
// for the deployment, since a client registers before anyone has said which tenant they sign in to),
// authorization codes (PKCE, single use) and the MCP tokens — OAuth access and refresh tokens and the
// personal access tokens an Administrator creates for headless clients. Tokens are kept as SHA-256 hashes,
// bound to one tenant, one user and one resource (the MCP endpoint's URL), and are accepted nowhere else.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table oauth_clients (
  id text primary key,
  client_name text not null,
  redirect_uris text[] not null,
  client_uri text,
  software_id text,
  software_version text,
  created_on_utc timestamptz not null default now(),
  check (cardinality(redirect_uris) between 1 and 10)
);
-- Read and written by the owner only (the authorization endpoints run before any tenant is bound).
revoke all on oauth_clients from atrium_app;

create table oauth_codes (
  tenant_id uuid not null references tenants(id) on delete cascade,
  code_hash text not null,
  client_id text not null references oauth_clients(id) on delete cascade,
  user_id uuid not null,
  redirect_uri text not null,
  code_challenge text not null,
  resource text not null,
  scope text not null,
  expires_on_utc timestamptz not null,
  used_on_utc timestamptz,
  created_on_utc timestamptz not null default now(),
  primary key (tenant_id, code_hash),
  foreign key (tenant_id, user_id) references users(tenant_id, id) on delete cascade
);
select atrium_enable_rls('oauth_codes');
create index oauth_codes_expires on oauth_codes (expires_on_utc);

create table mcp_tokens (
  tenant_id uuid not null references tenants(id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  token_hash text not null,
  kind text not null check (kind in ('access', 'refresh', 'personal')),
  -- OAuth tokens: the client and the grant (an authorization and its refreshes) they belong to.
  client_id text references oauth_clients(id) on delete cascade,
  grant_id uuid,
  user_id uuid not null,
  resource text not null,
  scope text not null,
  name text,
  created_by_id uuid,
  expires_on_utc timestamptz,
  used_on_utc timestamptz,
  revoked_on_utc timestamptz,
  created_on_utc timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, token_hash),
  foreign key (tenant_id, user_id) references users(tenant_id, id) on delete cascade,
  check ((kind = 'personal') = (client_id is null)),
  check (kind = 'personal' or expires_on_utc is not null)
);
select atrium_enable_rls('mcp_tokens');
create index mcp_tokens_grant on mcp_tokens (tenant_id, grant_id);
create index mcp_tokens_expires on mcp_tokens (expires_on_utc);
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table mcp_tokens; drop table oauth_codes; drop table oauth_clients;`.execute(db);
}
