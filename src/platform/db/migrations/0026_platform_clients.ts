// The platform's own published clients (issue 31, decision 0045). A project's Investment is money (the
// platform's Postman collection sends 0.0 and 100; the catalogue types DE-Projects Investment as decimal):
// the flag carried no amount, so every project starts at 0. The Active Directory blocker's exchange: a
// user's AD block (when the agent blocked the account and the account's own expiry before it, to restore
// on unblock), the login attempts of AD-blocked users waiting for the agent's verdict (the password sealed
// by the SecretBox, cleared when answered, the row dropped 15 minutes after it was made), the requests to
// unblock a user whose access is back, the agent's last run per tenant, and the role that guards it all.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
alter table projects alter column investment drop default;
alter table projects alter column investment type numeric(19,4) using 0;
alter table projects alter column investment set default 0;

alter table users
  add column ad_blocked_on_utc timestamptz,
  add column ad_account_expiration_date timestamptz;

create table ad_blocked_login_requests (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  ad_user_name text not null,
  -- SecretBox-sealed; null once handed to the agent or answered.
  password_sealed text,
  created_on_utc timestamptz not null default now(),
  handed_on_utc timestamptz,
  answered_on_utc timestamptz,
  request_result boolean,
  request_result_message text,
  primary key (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
);
create index ad_blocked_login_requests_created on ad_blocked_login_requests (tenant_id, created_on_utc);
create index ad_blocked_login_requests_expiry on ad_blocked_login_requests (created_on_utc);
select atrium_enable_rls('ad_blocked_login_requests');

create table ad_unblock_requests (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  created_on_utc timestamptz not null default now(),
  answered_on_utc timestamptz,
  request_result boolean,
  request_result_message text,
  primary key (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
);
-- At most one open request per user.
create unique index ad_unblock_requests_open on ad_unblock_requests (tenant_id, user_id) where answered_on_utc is null;
select atrium_enable_rls('ad_unblock_requests');

create table ad_blocker_runs (
  tenant_id uuid not null references tenants (id) on delete cascade primary key,
  last_run_on_utc timestamptz not null,
  app_id uuid
);
select atrium_enable_rls('ad_blocker_runs');

grant select, insert, update, delete on ad_blocked_login_requests, ad_unblock_requests, ad_blocker_runs to atrium_app;
`.execute(db);
  await sql`insert into roles (tenant_id, name, description)
    select id, 'AdBlockerAgent', 'The on-premises Active Directory blocker: users to block, blocked logins, unblock requests' from tenants
    on conflict (tenant_id, name) do nothing`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
drop table ad_blocker_runs; drop table ad_unblock_requests; drop table ad_blocked_login_requests;
alter table users drop column ad_blocked_on_utc, drop column ad_account_expiration_date;
alter table projects alter column investment drop default;
alter table projects alter column investment type boolean using investment <> 0;
alter table projects alter column investment set default false;
`.execute(db);
}
