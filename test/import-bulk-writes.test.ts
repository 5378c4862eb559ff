// The import's bulk writes (decision 0074): a batch written with the per-row foreign-key triggers skipped is
// checked per batch instead, so a reference to a row the tenant does not have (another tenant's, or none)
// still fails the batch, and the transaction's role and replication role are restored afterwards.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { BulkWrites, writeRows } from '../src/import/write.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let db: DatabaseHandle;
let a: TenantCredentials;
let b: TenantCredentials;

before(async () => {
  server = await startTestServer();
  db = new DatabaseHandle(server.databaseUrl, { poolSize: 2 });
  a = await server.createTenant('Bulk Agency');
  b = await server.createTenant('Other Agency');
});
after(async () => {
  await db.close();
  await server.close();
});

const departments = { table: 'departments' as const, values: () => null };
const department = (companyId: string) => ({ id: randomUUID(), company_id: companyId, name: `Dept ${randomUUID().slice(0, 8)}` });
const count = (tenantId: string, id: string) =>
  db.withTenant(tenantId, (trx) => trx.selectFrom('departments').select('id').where('tenant_id', '=', tenantId).where('id', '=', id).execute());

test('departments are written in bulk mode here (the test cluster lets atrium_importer set session_replication_role)', async () => {
  const eligible = await db.withTenant(a.tenantId, async (trx) => {
    const bulk = await BulkWrites.open(trx);
    assert.ok(bulk, 'bulk mode available');
    return bulk.table(trx, 'departments');
  });
  assert.ok(eligible);
  assert.deepEqual(eligible.foreignKeys.map((k) => k.column).sort(), ['company_id', 'division_id', 'expense_workflow_id']);
});

test('a batch whose references exist is written, and the transaction is back to atrium_app and origin', async () => {
  const row = department(a.companyId);
  const settings = await db.withTenant(a.tenantId, async (trx) => {
    const bulk = await BulkWrites.open(trx);
    assert.equal(await writeRows(trx, a.tenantId, departments, [row], bulk), 1);
    const r = await sql<{ role: string; replication: string }>`select current_user as role, current_setting('session_replication_role') as replication`.execute(
      trx,
    );
    return r.rows[0];
  });
  assert.deepEqual(settings, { role: 'atrium_app', replication: 'origin' });
  assert.equal((await count(a.tenantId, row.id)).length, 1);
});

test("a reference to another tenant's row or to no row fails the batch, naming the key and the id; nothing is written", async () => {
  for (const companyId of [b.companyId, randomUUID()]) {
    const row = department(companyId);
    await assert.rejects(
      db.withTenant(a.tenantId, async (trx) => writeRows(trx, a.tenantId, departments, [department(a.companyId), row], await BulkWrites.open(trx))),
      (err: Error) => {
        assert.match(err.message, /violates foreign key constraint "departments_tenant_id_company_id_fkey": companies\.id [0-9a-f-]{36} is not present/);
        assert.ok(err.message.includes(companyId.toLowerCase()));
        return true;
      },
    );
    assert.equal((await count(a.tenantId, row.id)).length, 0);
  }
});
