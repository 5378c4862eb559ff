// Tenant-bound connections: a pooled connection serves a tenant only after it is bound to it, whether
// work runs in a transaction (withTenant) or as single reads (readAsTenant), and after errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let a: Awaited<ReturnType<TestServer['createTenant']>>;
let b: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer();
  a = await server.createTenant('Binding A');
  b = await server.createTenant('Binding B');
});
after(() => server.close());

const seenTenants = async (db: DatabaseHandle, tenantId: string, inTransaction: boolean): Promise<string[]> => {
  const run = inTransaction ? db.withTenant.bind(db) : db.readAsTenant.bind(db);
  const rows = await run(tenantId, (trx) => trx.selectFrom('users').select('tenant_id').execute());
  return [...new Set(rows.map((r) => r.tenant_id as string))];
};

test('one connection alternating between tenants always serves the tenant asked for', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { poolSize: 1 });
  try {
    for (let i = 0; i < 20; i++) {
      const t = i % 2 ? a : b;
      assert.deepEqual(await seenTenants(db, t.tenantId, i % 3 === 0), [t.tenantId]);
    }
    // A failed read leaves the connection usable and still correctly bound.
    await assert.rejects(db.readAsTenant(a.tenantId, (trx) => sql`select 1/0`.execute(trx)));
    assert.deepEqual(await seenTenants(db, b.tenantId, false), [b.tenantId]);
    // A failed transaction rolls back; its writes are gone and the next tenant is served correctly.
    await assert.rejects(
      db.withTenant(a.tenantId, async (trx) => {
        await trx.insertInto('roles').values({ tenant_id: a.tenantId, name: 'Temporary role' }).execute();
        throw new Error('boom');
      }),
    );
    const roles = await db.readAsTenant(a.tenantId, (trx) => trx.selectFrom('roles').select('name').where('name', '=', 'Temporary role').execute());
    assert.equal(roles.length, 0);
    assert.deepEqual(await seenTenants(db, b.tenantId, true), [b.tenantId]);
  } finally {
    await db.close();
  }
});

test('concurrent mixed work on a small pool never crosses tenants', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { poolSize: 3 });
  try {
    const jobs = Array.from({ length: 60 }, (_, i) => {
      const t = i % 2 ? a : b;
      return seenTenants(db, t.tenantId, i % 4 === 0).then((seen) => assert.deepEqual(seen, [t.tenantId]));
    });
    await Promise.all(jobs);
  } finally {
    await db.close();
  }
});

test('tenant connections run as the request role, not the owner', async () => {
  const db = new DatabaseHandle(server.databaseUrl, { poolSize: 1 });
  try {
    const read = await db.readAsTenant(a.tenantId, (trx) => sql<{ r: string }>`select current_user as r`.execute(trx));
    const inTx = await db.withTenant(a.tenantId, (trx) => sql<{ r: string }>`select current_user as r`.execute(trx));
    assert.equal(read.rows[0].r, 'atrium_app');
    assert.equal(inTx.rows[0].r, 'atrium_app');
    await assert.rejects(db.readAsTenant('not-a-uuid', (trx) => sql`select 1`.execute(trx)));
  } finally {
    await db.close();
  }
});
