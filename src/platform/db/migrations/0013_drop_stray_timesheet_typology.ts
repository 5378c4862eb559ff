// A database created from the work-in-progress commit 09dfaf8 alone has timesheets.typology_id (and its
// foreign key), which the data model dropped without a migration before 0002 was frozen. Dropping it here
// makes every database equal to a fresh one; on all others this does nothing.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table timesheets drop column if exists typology_id`.execute(db);
}

export async function down(): Promise<void> {
  // The column was never part of the released model: nothing to restore.
}
