// Integration API services: master data writes and lookups keyed by External ID. They take a
// tenant-bound transaction and plain values; they know nothing of HTTP.
import { sql } from 'kysely';
import { compileOnce, type Trx } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';

// What other surfaces use of the Integration API (docs/architecture.md: a surface is used through its service module).
export { ACCESS_ENDED } from './ad-blocker.ts';
export { commercialClientsWithoutBilling } from './clients.ts';
export { getConfigurationKey, type JsonObject } from './configuration-keys.ts';
export { typologies, typologyGroups } from './master-data.ts';
export { upsertResource } from './resources.ts';
export { patchUser, upsertUser } from './users.ts';

// Built and compiled once: the lookup runs on every request of GET /api/usertypes/name.
const userTypeByName = compileOnce((db) => db.selectFrom('user_types').select(['id', 'name']).where(sql`lower(name)`, '=', ''));

export async function findUserTypeByName(trx: Trx, name: string): Promise<{ id: string; name: string }> {
  const [row] = await userTypeByName(trx, [name.toLowerCase()]);
  if (!row) throw notFound(`No user type named "${name}".`);
  return { id: row.id, name: row.name };
}
