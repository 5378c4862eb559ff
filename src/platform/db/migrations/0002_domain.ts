// The agency data model as first created (85 tables, with the comments that explain them). Frozen:
// 0002_domain.sql is never edited again; later changes to the model are migrations of their own.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const ddl = await readFile(path.join(import.meta.dirname, '0002_domain.sql'), 'utf8');
  await sql.raw(ddl).execute(db);
}
