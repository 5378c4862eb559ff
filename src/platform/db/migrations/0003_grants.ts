// Links between platform and domain tables, and the privileges of the request role atrium_app.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create table user_roles (
  tenant_id uuid not null,
  user_id uuid not null,
  role_id uuid not null,
  primary key (tenant_id, user_id, role_id),
  foreign key (tenant_id, user_id) references users(tenant_id, id) on delete cascade,
  foreign key (tenant_id, role_id) references roles(tenant_id, id) on delete cascade
);
create index user_roles_role on user_roles (tenant_id, role_id);
select atrium_enable_rls('user_roles');

grant usage on schema public to atrium_app;
grant select, insert, update, delete on all tables in schema public to atrium_app;
revoke all on kysely_migration, kysely_migration_lock from atrium_app;
grant usage, select on all sequences in schema public to atrium_app;
alter default privileges in schema public grant select, insert, update, delete on tables to atrium_app;
alter default privileges in schema public grant usage, select on sequences to atrium_app;
`.execute(db);
}
