// Integration API services: master data writes and lookups keyed by External ID. They take a
// tenant-bound transaction and plain values; they know nothing of HTTP.
import { CompiledQuery, sql } from 'kysely';
import { compileOnce, type DatabaseHandle, type Trx } from '../platform/db/database.ts';
import { keptReads } from '../platform/db/kept-reads.ts';
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

/** Names longer than any user type's are looked up every time rather than kept. */
const KEPT_NAME_MAX = 200;

// The lookup with its statement's snapshot: one row whether a user type matches or not (a miss is kept too).
const USER_TYPE_BY_NAME_WITH_SNAPSHOT = `select pg_current_snapshot()::text as snapshot, u.id, u.name
  from (select 1) one left join lateral (select id, name from user_types where lower(name) = $1 limit 1) u on true`;

/**
 * The user type named so (any case), kept while the tenant's user types are unchanged (kept-reads.ts): the
 * answer of GET /api/usertypes/name, which integrations ask before every user they send.
 */
export async function findUserTypeByNameKept(db: DatabaseHandle, tenantId: string, name: string): Promise<{ id: string; name: string }> {
  const lower = name.toLowerCase();
  const row =
    lower.length > KEPT_NAME_MAX
      ? await db.readAsTenant(tenantId, async (trx) => (await userTypeByName(trx, [lower]))[0])
      : await keptReads(db).read(tenantId, ['user_types'], `usertype-by-name\n${lower}`, async (trx) => {
          const [found] = (
            await trx.executeQuery<{ snapshot: string; id: string | null; name: string | null }>(CompiledQuery.raw(USER_TYPE_BY_NAME_WITH_SNAPSHOT, [lower]))
          ).rows;
          return { value: found.id && found.name ? { id: found.id, name: found.name } : undefined, snapshot: found.snapshot };
        });
  if (!row) throw notFound(`No user type named "${name}".`);
  return { id: row.id, name: row.name };
}
