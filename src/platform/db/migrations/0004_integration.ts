// Integration API: user typology groups are created by name when the caller (the user feed) has no
// external id, so the name is unique per tenant (case-insensitive) and the create-or-update is an upsert.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create unique index typology_groups_name_key on typology_groups (tenant_id, lower(name))`.execute(db);
}
