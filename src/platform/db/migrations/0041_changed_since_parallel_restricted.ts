// atrium_changed_since (migration 0015, the count cache's and seek positions' check) is PARALLEL RESTRICTED
// instead of the default PARALLEL UNSAFE (decision 0062): it only reads extraction_changes and calls parallel-safe
// snapshot functions, and its SET search_path is a save-and-restore, which parallel mode allows. Restricted, it
// runs in the leader only, and a statement that carries it (as an InitPlan) keeps its parallel plan: the page's
// key statement can then check its kept count, and count when it does not hold, in one round trip.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter function atrium_changed_since(uuid, text[], pg_snapshot) parallel restricted`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter function atrium_changed_since(uuid, text[], pg_snapshot) parallel unsafe`.execute(db);
}
