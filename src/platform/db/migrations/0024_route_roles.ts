// Every route has a role (issue 26, item 11; decision 0043): the roles of the routes that had none, for
// tenants created before them (new tenants get them from BUILT_IN_ROLES), and the Custom Tables roles'
// new meaning (they open the API; a table's own roles narrow it). No app is granted them: an app that
// used those routes without a role must be given one (docs/platform.md, "Roles of the routes").
import { type Kysely, sql } from 'kysely';

const ROLES: [string, string][] = [
  ['DataExtractionRead', 'Read named queries (list, metadata, dynamic-execute) and the OData feed'],
  ['IntegrationRead', 'Look up users, user types, departments and typologies through the Integration API'],
  ['IntegrationWrite', 'Create and update users, employees, clients, suppliers and master data through the Integration API'],
  ['ConfigurationKeyRead', 'Read configuration keys (secrets masked unless Administrator)'],
  ['ConfigurationKeyWrite', 'Create and replace configuration keys'],
  ['EventRaise', 'Raise custom events on documents'],
  ['TimeWrite', 'Create, change and delete timesheets and leaves through the Client API'],
];

const DESCRIPTIONS: [string, string][] = [
  ['CustomTablesRead', "Read custom tables (a table's Read roles, when set, narrow it further)"],
  ['CustomTablesSave', "Create, write, import and drop custom tables (a table's Save roles, when set, narrow it further)"],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // Only a role that bypasses row-level security (the owner in the embedded cluster) sees every tenant here.
  for (const [name, description] of ROLES) {
    await sql`insert into roles (tenant_id, name, description) select id, ${name}, ${description} from tenants
      on conflict (tenant_id, name) do nothing`.execute(db);
  }
  for (const [name, description] of DESCRIPTIONS) {
    await sql`update roles set description = ${description} where name = ${name}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from roles where name = any(${ROLES.map(([name]) => name)}::text[])`.execute(db);
}
