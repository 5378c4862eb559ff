// Integration API services: master data writes and lookups keyed by External ID. They take a
// tenant-bound transaction and plain values; they know nothing of HTTP.
import { sql } from 'kysely';
import { compileOnce, type Trx } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';

// Built and compiled once: the lookup runs on every request of GET /api/usertypes/name.
const userTypeByName = compileOnce((db) => db.selectFrom('user_types').select(['id', 'name']).where(sql`lower(name)`, '=', ''));

export async function findUserTypeByName(trx: Trx, name: string): Promise<{ id: string; name: string }> {
  const [row] = await userTypeByName(trx, [name.toLowerCase()]);
  if (!row) throw notFound(`No user type named "${name}".`);
  return { id: row.id, name: row.name };
}
