// The import's bulk writes (decision 0074): a role atrium_importer with atrium_app's privileges (so row-level
// security binds it to the tenant as it binds requests) that may also set session_replication_role. The
// import sets it to `replica` around one batch's insert, so PostgreSQL skips the per-row foreign-key
// triggers (seven lookups per timesheet), and then checks and locks every referenced row of the batch with
// one set-based statement per foreign key before the transaction goes on. The change-log triggers are
// ENABLE ALWAYS and still fire. Where the owner cannot grant SET on the parameter (not a superuser), the
// role exists without it and the import writes with the per-row triggers, as before.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
do $$ begin
  begin
    create role atrium_importer nologin;
  exception when duplicate_object then null;
  end;
  grant atrium_app to atrium_importer;
  begin
    grant set on parameter session_replication_role to atrium_importer;
  exception when insufficient_privilege then raise notice 'atrium_importer cannot set session_replication_role: the import keeps per-row foreign-key checks';
  end;
  if not (select rolsuper from pg_roles where rolname = current_user) then
    begin
      execute 'grant atrium_importer to ' || quote_ident(current_user);
    exception when others then null;
    end;
  end if;
end $$;
`.execute(db);
}
