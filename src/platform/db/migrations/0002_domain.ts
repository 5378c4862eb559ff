// The agency data model, kept as plain SQL in src/domain/schema.sql.
import { readFile } from 'node:fs/promises';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const ddl = await readFile(new URL('../../../domain/schema.sql', import.meta.url), 'utf8');
  await sql.raw(ddl).execute(db);
}
