// Strings sort as the platform sorts them: its database collation is case-insensitive (Latin1_General_CI_AS),
// so `orderBy` on a string column gives Alice, bob, Carol. An ICU collation at strength 2 (letters and
// accents count, case does not) is that order; nondeterministic, so values that differ only in case are
// equal and the key breaks the tie, as for any other equal values. Used only in ORDER BY (see
// src/extraction/execute.ts); columns keep the cluster's default collation for equality, LIKE and indexes.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create collation if not exists atrium_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop collation if exists atrium_ci`.execute(db);
}
