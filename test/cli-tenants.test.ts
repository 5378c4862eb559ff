// The CLI's listing and deleting commands against a database a server is using: `apps list` and `users list`
// show what the API made; `tenants delete` refuses without --yes when there is no terminal to ask, and with
// it removes every row of the tenant (every table with a tenant_id, found in the catalog), its custom tables
// and the tenants row, leaving the other tenant exactly as it was. Also --version, and --json errors on stderr.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, USER_TYPE } from './webhooks-helpers.ts';

const root = path.resolve(import.meta.dirname, '..');
type Run = { code: number | null; stdout: string; stderr: string };

let server: TestServer;
let owner: pg.Client;
let doomed: TenantCredentials;
let kept: TenantCredentials;

function atrium(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main.ts', ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: server.databaseUrl, LOG_LEVEL: 'silent', ATRIUM_SECRET_KEY: '00'.repeat(32) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Rows per table with a tenant_id for one tenant (tables with none left out). */
async function rowsOf(tenantId: string): Promise<Record<string, number>> {
  const { rows: tables } = await owner.query<{ name: string }>(`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
    where c.relkind in ('r', 'p') and not c.relispartition order by 1`);
  const out: Record<string, number> = {};
  for (const t of tables) {
    const { rows } = await owner.query<{ n: number }>(`select count(*)::int as n from "${t.name}" where tenant_id = $1`, [tenantId]);
    if (rows[0].n > 0) out[t.name] = rows[0].n;
  }
  return out;
}

const customTablesOf = async (tenantId: string) =>
  (
    await owner.query<{ name: string }>(`select tablename as name from pg_tables where schemaname = 'customtables' and tablename like $1`, [
      `ct_${tenantId.replace(/-/g, '').slice(0, 12)}_%`,
    ])
  ).rows.map((r) => r.name);

before(async () => {
  server = await startTestServer();
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  doomed = await server.createTenant('Doomed Agency', { demoData: true, scale: 0.02 });
  kept = await server.createTenant('Kept Agency', { demoData: true, scale: 0.02 });
  // Beyond the demo data: a custom table with rows, a webhook subscription, an automation, an access token.
  for (const t of [doomed, kept]) {
    const api = apiFor(server, await appToken(server, t));
    assert.equal(
      (await api('POST', '/custom-tables/Ledger', { KeyColumnName: 'Code', KeyDataTypeId: 5, Columns: [{ ColumnName: 'Amount', ColumnDataTypeId: 3 }] }))
        .status,
      201,
    );
    const put = await api('PUT', '/custom-tables/Ledger/rows', {
      OperationType: 'UpsertMany',
      UpsertManyModel: [{ KeyValue: 'A', Columns: [{ ColumnName: 'Amount', Value: 1 }] }],
    });
    assert.equal(put.status, 200, put.text);
    await createSubscription(server, appHeaders(t), { ActionType: 'Created', DocumentType: USER_TYPE, Url: 'https://hooks.example.com/users' });
    const automation = await server.request('POST', '/api/v3/automations', {
      headers: appHeaders(t),
      json: {
        name: 'Noop',
        actions: [
          { name: 'Start', type: 'Start', next: 'Done' },
          { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: null } },
        ],
      },
    });
    assert.equal(automation.status, 201, automation.text);
  }
});

after(async () => {
  await owner?.end();
  await server?.close();
});

test('--version prints the package version', async () => {
  const run = await atrium(['--version']);
  assert.equal(run.code, 0, run.stderr);
  const { version } = JSON.parse((await import('node:fs')).readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(run.stdout, `atrium ${version}\n`);
});

test('--json errors are one JSON object on stderr, with the same exit codes', async () => {
  const usage = await atrium(['tenants', 'list', '--jsn', '--json']);
  assert.equal(usage.code, 2);
  assert.deepEqual(JSON.parse(usage.stderr), { error: { message: 'unknown option --jsn (did you mean --json?)', exitCode: 2 } });
  const unknown = await atrium(['apps', 'list', '--tenant', 'no-such-tenant', '--json']);
  assert.equal(unknown.code, 1);
  const body = JSON.parse(unknown.stderr);
  assert.equal(body.error.exitCode, 1);
  assert.match(body.error.message, /no tenant "no-such-tenant"/);
  assert.equal(unknown.stdout, '');
});

test('apps list and users list show the tenant’s apps and users', async () => {
  const apps = await atrium(['apps', 'list', '--tenant', doomed.tenantId, '--json']);
  assert.equal(apps.code, 0, apps.stderr);
  const listed = JSON.parse(apps.stdout);
  assert.ok(listed.some((a: { appId: string }) => a.appId === doomed.appId));
  assert.ok(!apps.stdout.includes(doomed.appSecret), 'no secret in the list');
  const text = await atrium(['apps', 'list', '--tenant', doomed.tenantId]);
  assert.match(text.stdout, new RegExp(`^${doomed.appId}  \\S`, 'm'));

  const users = await atrium(['users', 'list', '--tenant', doomed.tenantId, '--json']);
  assert.equal(users.code, 0, users.stderr);
  const list = JSON.parse(users.stdout);
  assert.ok(list.length > 1);
  const { rows } = await owner.query('select count(*)::int as n from users where tenant_id = $1', [doomed.tenantId]);
  assert.equal(list.length, Math.min(1000, rows[0].n));
});

test('tenants delete: refused without --yes and no terminal; with --yes every row of the tenant goes, the other stays', { timeout: 120_000 }, async () => {
  const before = await rowsOf(doomed.tenantId);
  assert.ok(Object.keys(before).length >= 20, `the tenant has rows in many tables: ${Object.keys(before).length}`);
  for (const t of ['users', 'apps', 'custom_tables', 'webhook_subscriptions', 'automations', 'events']) assert.ok(before[t] > 0, t);
  assert.equal((await customTablesOf(doomed.tenantId)).length, 1);
  const keptBefore = await rowsOf(kept.tenantId);

  const refused = await atrium(['tenants', 'delete', '--tenant', doomed.tenantId]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /without one, pass --yes/);
  assert.deepEqual(await rowsOf(doomed.tenantId), before);

  const run = await atrium(['tenants', 'delete', '--tenant', doomed.tenantId, '--yes', '--json']);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.tenantId, doomed.tenantId);
  assert.equal(result.rows.tenants, 1);
  assert.deepEqual(Object.fromEntries(Object.entries(result.rows).filter(([t]) => t !== 'tenants')), before, 'the deletion reports each table it emptied');

  assert.deepEqual(await rowsOf(doomed.tenantId), {}, 'no row of the tenant is left');
  assert.deepEqual(await customTablesOf(doomed.tenantId), []);
  assert.equal((await owner.query('select count(*)::int as n from tenants where id = $1', [doomed.tenantId])).rows[0].n, 0);
  assert.deepEqual(await rowsOf(kept.tenantId), keptBefore, 'the other tenant is untouched');
  assert.equal((await customTablesOf(kept.tenantId)).length, 1);
  // The server goes on serving the other tenant; the deleted one's app is unknown now.
  assert.equal((await server.request('GET', '/api/webhook-subscriptions', { headers: appHeaders(kept) })).status, 200);
  assert.equal((await server.request('GET', '/api/webhook-subscriptions', { headers: appHeaders(doomed) })).status, 401);

  const again = await atrium(['tenants', 'delete', '--tenant', doomed.tenantId, '--yes']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^atrium: no tenant/);
});
