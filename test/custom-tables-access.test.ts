// Custom tables: Read/Save roles per table, tenant isolation (in the API and in SQL), and the
// description the Data Extraction API will use for the CT-{tableName} named queries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { describeCustomTableForExtraction } from '../src/custom-tables/extraction.ts';
import { type Api, apiFor, appToken, everyTypeColumns, type Tenant, userToken } from './custom-tables-helpers.ts';
import { startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Tenant;
let other: Tenant;
let admin: Api;
let otherAdmin: Api;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Roles Agency');
  other = await server.createTenant('Other Agency');
  admin = apiFor(server, await appToken(server, tenant));
  otherAdmin = apiFor(server, await appToken(server, other));
});
after(() => server.close());

const row = (key: number, v: string) => ({ OperationType: 2, UpsertManyModel: [{ KeyValue: key, Columns: [{ ColumnName: 'V', Value: v }] }] });

describe('permissions', () => {
  let id: string;
  let plain: Api;
  let both: Api;
  let reader: Api;
  let saver: Api;
  let scheduler: Api;

  before(async () => {
    const created = await admin('POST', '/custom-tables/Guarded', {
      KeyColumnName: 'K',
      KeyDataTypeId: 3,
      Columns: [{ ColumnName: 'V', ColumnDataTypeId: 5 }],
    });
    id = created.body.Id;
    plain = apiFor(server, await userToken(server, tenant, []));
    both = apiFor(server, await userToken(server, tenant, ['CustomTablesRead', 'CustomTablesSave']));
    scheduler = apiFor(server, await userToken(server, tenant, ['CustomTablesRead', 'ScheduleRead']));
    reader = apiFor(server, await userToken(server, tenant, ['CustomTablesRead']));
    saver = apiFor(server, await userToken(server, tenant, ['CustomTablesSave']));
  });

  test('without CustomTablesRead / CustomTablesSave every route is refused; with them a table without roles is open', async () => {
    const refused = await plain('PUT', '/custom-tables/Guarded/rows', row(1, 'by plain'));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.requiredRole, 'CustomTablesSave');
    assert.equal((await plain('GET', '/custom-tables')).status, 403);
    assert.equal((await plain('GET', '/custom-tables/Guarded/row?keyValue=1')).status, 403);
    assert.equal((await both('PUT', '/custom-tables/Guarded/rows', row(1, 'by both'))).status, 200);
    assert.equal((await both('GET', '/custom-tables/Guarded/row?keyValue=1')).status, 200);
    assert.ok((await both('GET', '/custom-tables')).body.some((t: any) => t.TableName === 'Guarded'));
  });

  test('only an Administrator sets roles, and only roles that exist', async () => {
    const denied = await plain('PUT', `/custom-table-definitions/${id}`, { ReadRoles: [], SaveRoles: [] });
    assert.equal(denied.status, 403);
    assert.match(denied.body.detail, /Administrator/);
    const unknown = await admin('PUT', `/custom-table-definitions/${id}`, { ReadRoles: ['CustomTablesRead', 'NoSuchRole'] });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, '/body/ReadRoles/1');
    assert.equal((await admin('PUT', '/custom-table-definitions/00000000-0000-4000-8000-000000000000', { ReadRoles: [] })).status, 404);
    assert.equal((await admin('PUT', '/custom-table-definitions/not-a-uuid', { ReadRoles: [] })).status, 400);
    const set = await admin('PUT', `/custom-table-definitions/${id}`, { ReadRoles: ['CustomTablesRead'], SaveRoles: ['CustomTablesSave'] });
    assert.equal(set.status, 200, set.text);
    assert.deepEqual(set.body.ReadRoles, ['CustomTablesRead']);
    assert.deepEqual(set.body.SaveRoles, ['CustomTablesSave']);
    assert.deepEqual((await admin('GET', '/custom-tables/Guarded')).body.SaveRoles, ['CustomTablesSave']);
  });

  test("a table's Read and Save roles narrow the API's roles; 403s name the roles", async () => {
    const noRead = await plain('GET', '/custom-tables/Guarded/rows/values');
    assert.equal(noRead.status, 403);
    assert.match(noRead.body.detail, /CustomTablesRead/);
    assert.equal(noRead.body.requiredRole, 'CustomTablesRead');
    // The API role alone is not enough once the table names roles of its own.
    const narrowed = await admin('PUT', `/custom-table-definitions/${id}`, { ReadRoles: ['ScheduleRead'], SaveRoles: ['CustomTablesSave'] });
    assert.equal(narrowed.status, 200, narrowed.text);
    const notNamed = await both('GET', '/custom-tables/Guarded/rows/values');
    assert.equal(notNamed.status, 403);
    assert.deepEqual(notNamed.body.requiredRoles, ['ScheduleRead']);
    assert.equal((await scheduler('GET', '/custom-tables/Guarded/rows/values')).status, 200);
    assert.ok(!(await both('GET', '/custom-tables')).body.some((t: any) => t.TableName === 'Guarded'), 'the list shows only readable tables');
    assert.ok((await scheduler('GET', '/custom-tables')).body.some((t: any) => t.TableName === 'Guarded'));
    assert.equal((await admin('PUT', `/custom-table-definitions/${id}`, { ReadRoles: ['CustomTablesRead'], SaveRoles: ['CustomTablesSave'] })).status, 200);
    for (const path of [
      '/custom-tables/Guarded',
      '/custom-tables/Guarded/row?keyValue=1',
      '/custom-tables/Guarded/rows/columnValue?keyValue=1&columnName=V',
      '/custom-tables/Guarded/export',
    ]) {
      assert.equal((await plain('GET', path)).status, 403, path);
    }
    assert.equal((await plain('GET', '/custom-tables')).status, 403);
    const noSave = await plain('PUT', '/custom-tables/Guarded/rows', row(2, 'x'));
    assert.equal(noSave.status, 403);
    assert.match(noSave.body.detail, /CustomTablesSave/);
    assert.equal((await plain('DELETE', '/custom-tables/Guarded/rows', { OperationType: 1 })).status, 403);
    assert.equal((await plain('DELETE', '/custom-tables/Guarded')).status, 403);
    assert.equal(
      (await plain('POST', '/custom-tables/Guarded', { KeyColumnName: 'K', KeyDataTypeId: 3, Columns: [{ ColumnName: 'W', ColumnDataTypeId: 3 }] })).status,
      403,
    );

    assert.equal((await reader('GET', '/custom-tables/Guarded/rows/values')).status, 200);
    assert.equal((await reader('PUT', '/custom-tables/Guarded/rows', row(2, 'x'))).status, 403);
    assert.equal((await saver('PUT', '/custom-tables/Guarded/rows', row(2, 'by saver'))).status, 200);
    assert.equal((await saver('GET', '/custom-tables/Guarded/rows/values')).status, 403, 'a Save role does not grant reading');
    assert.equal((await admin('GET', '/custom-tables/Guarded/row?keyValue=2')).body.Columns[0].Value, 'by saver', 'Administrator may always');
  });
});

describe('tenant isolation', () => {
  test('tenants see only their own tables and rows, even with the same table name', async () => {
    await admin('POST', '/custom-tables/Shared', { KeyColumnName: 'K', KeyDataTypeId: 3, Columns: [{ ColumnName: 'V', ColumnDataTypeId: 5 }] });
    await admin('PUT', '/custom-tables/Shared/rows', row(1, 'mine'));
    assert.equal((await otherAdmin('GET', '/custom-tables/Shared')).status, 404);
    assert.equal((await otherAdmin('GET', '/custom-tables/Shared/rows/values')).status, 404);
    assert.equal((await otherAdmin('PUT', '/custom-tables/Shared/rows', row(1, 'theirs'))).status, 404);
    assert.equal((await otherAdmin('DELETE', '/custom-tables/Shared')).status, 404);
    assert.ok(!(await otherAdmin('GET', '/custom-tables')).body.some((t: any) => t.TableName === 'Shared'));
    const id = (await admin('GET', '/custom-tables/Shared')).body.Id;
    assert.equal((await otherAdmin('PUT', `/custom-table-definitions/${id}`, { ReadRoles: [] })).status, 404);

    const theirs = await otherAdmin('POST', '/custom-tables/Shared', { KeyColumnName: 'Code', KeyDataTypeId: 5 });
    assert.equal(theirs.status, 201, 'the same name is another table in another tenant');
    assert.equal((await otherAdmin('PUT', '/custom-tables/Shared/rows', { OperationType: 2, UpsertManyModel: [{ KeyValue: 'a' }] })).status, 200);
    assert.equal((await admin('GET', '/custom-tables/Shared/row?keyValue=1')).body.Columns[0].Value, 'mine');
    assert.equal((await admin('GET', '/custom-tables/Shared')).body.KeyColumnName, 'K');
  });

  test('in SQL too: the request role sees no other tenant’s rows and cannot write into them', async () => {
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const [{ physical_name }] = (await client.query(`select physical_name from custom_tables where tenant_id = $1 and name = 'Shared'`, [tenant.tenantId]))
        .rows;
      assert.match(physical_name, new RegExp(`^ct_${tenant.tenantId.replace(/-/g, '').slice(0, 12)}_shared$`));
      const table = `customtables."${physical_name}"`;
      await client.query('begin');
      await client.query(`select set_config('atrium.tenant_id', $1, true)`, [other.tenantId]);
      await client.query('set local role atrium_app');
      assert.equal((await client.query(`select * from ${table}`)).rowCount, 0, 'RLS hides the rows');
      assert.equal((await client.query(`select * from custom_tables where name = 'Shared'`)).rows.length, 1, 'the catalogue shows only the own table');
      await assert.rejects(client.query(`insert into ${table} (k, v) values (2, 'smuggled')`), /check constraint/, 'another tenant cannot add rows');
      await client.query('rollback');
      await client.query('begin');
      await client.query(`select set_config('atrium.tenant_id', $1, true)`, [other.tenantId]);
      await client.query('set local role atrium_app');
      assert.equal((await client.query(`update ${table} set v = 'x'`)).rowCount, 0);
      assert.equal((await client.query(`delete from ${table}`)).rowCount, 0);
      await client.query('rollback');
      await client.query('begin');
      await client.query(`select set_config('atrium.tenant_id', $1, true)`, [tenant.tenantId]);
      await client.query('set local role atrium_app');
      assert.equal((await client.query(`select * from ${table}`)).rowCount, 1);
      await assert.rejects(client.query(`insert into ${table} (tenant_id, k, v) values ($1, 3, 'x')`, [other.tenantId]), /row-level security/);
      await client.query('rollback');
      await client.query('begin');
      await client.query('set local role atrium_app');
      await assert.rejects(client.query(`drop table ${table}`), /must be owner/, 'the request role has no DDL on custom tables');
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });
});

describe('Data Extraction contract', () => {
  test('describeCustomTableForExtraction gives the physical table and typed columns, per tenant', async () => {
    await admin('POST', '/custom-tables/Described', { KeyColumnName: 'Code', KeyDataTypeId: 9, Columns: everyTypeColumns() });
    const db = server.runtime.ctx.db;
    const d = await db.withTenant(tenant.tenantId, (trx) => describeCustomTableForExtraction(trx, 'CT-described'));
    assert.ok(d);
    assert.equal(d.tableName, 'Described');
    assert.equal(d.physicalTable, `customtables.${d.table}`);
    assert.deepEqual(d.keyColumn, { name: 'Code', dataType: 'guid', sqlColumn: 'code', columnDataTypeId: 9 });
    assert.deepEqual(Object.fromEntries(d.columns.map((c) => [c.name, c.dataType])), {
      Code: 'guid',
      Flag: 'boolean',
      Day: 'date',
      Ratio: 'numeric',
      Qty: 'numeric',
      Amount: 'numeric',
      Short: 'string',
      Medium: 'string',
      Unbounded: 'string',
      Body: 'string',
      Ref: 'guid',
      Long: 'string',
      Custom: 'string',
      Blob: 'object',
    });
    // The description is enough to query the table (this is what the named query will do).
    await admin('PUT', '/custom-tables/Described/rows', {
      OperationType: 2,
      UpsertManyModel: [{ KeyValue: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', Columns: [{ ColumnName: 'Qty', Value: 5 }] }],
    });
    const { sql } = await import('kysely');
    const rows = await db.withTenant(tenant.tenantId, (trx) =>
      sql<{ q: number }>`select ${sql.ref(d.columns.find((c) => c.name === 'Qty')!.sqlColumn)} as q from ${sql.id(d.schema, d.table)}`.execute(trx),
    );
    assert.deepEqual(rows.rows, [{ q: 5 }]);
    assert.equal(await db.withTenant(other.tenantId, (trx) => describeCustomTableForExtraction(trx, 'Described')), null);
    assert.equal(await db.withTenant(tenant.tenantId, (trx) => describeCustomTableForExtraction(trx, 'Missing')), null);
  });
});
