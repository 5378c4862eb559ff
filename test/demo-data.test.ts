// The demo generator's output is pinned: a scale-1 demo tenant created through the operator API must
// produce exactly the rows recorded in demo-data.checksum.json (per table: row count and a digest of the
// rows). A refactoring of the generator keeps the digests; a deliberate change of the data re-records them.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { startTestServer, type TestServer } from './helpers.ts';

const EXPECTED: Record<string, string> = JSON.parse(readFileSync(new URL('./demo-data.checksum.json', import.meta.url), 'utf8'));

/**
 * Rows made outside the generator (bootstrap, the admin user, roles) get random ids; generated rows refer
 * to them, so such ids are replaced by a label from the row's natural key before digesting.
 */
const NATURAL_KEYS: Record<string, string[]> = {
  currencies: ['iso_code'],
  countries: ['iso_code'],
  companies: ['code'],
  divisions: ['external_id'],
  departments: ['external_id'],
  typology_groups: ['external_id'],
  typologies: ['external_id'],
  user_types: ['name'],
  document_types: ['class_name'],
  workflow_stage_types: ['name'],
  workflows: ['name'],
  workflow_stages: ['workflow_id', 'name'],
  workflow_transitions: ['workflow_id', 'name'],
  users: ['user_name'],
  roles: ['name'],
};
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

let server: TestServer;
let client: pg.Client;

before(async () => {
  server = await startTestServer();
  client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
});
after(async () => {
  await client.end();
  await server.close();
});

async function digestTenant(tenantId: string, companyId: string): Promise<Record<string, string>> {
  const tables = (
    await client.query<{ table_name: string }>(
      `select table_name from information_schema.columns
        where table_schema = 'public' and column_name = 'tenant_id' and table_name <> 'tenants' order by table_name`,
    )
  ).rows.map((r) => r.table_name);
  // Everything the generator writes or updates carries its transaction id; other rows are the bootstrap's.
  const demoXid = (await client.query<{ x: string }>('select xmin::text as x from timesheets where tenant_id = $1 limit 1', [tenantId])).rows[0].x;
  const generated = new Map<string, Record<string, unknown>[]>();
  const outside = new Map<string, { table: string; row: Record<string, unknown> }>();
  for (const table of tables) {
    const { rows } = await client.query<{ j: Record<string, unknown>; demo: boolean }>(
      `select to_jsonb(t) - 'tenant_id' as j, t.xmin::text = $2 as demo from ${table} t where tenant_id = $1`,
      [tenantId, demoXid],
    );
    generated.set(
      table,
      rows.filter((r) => r.demo).map((r) => r.j),
    );
    for (const r of rows) if ((!r.demo || r.j.id === companyId) && typeof r.j.id === 'string') outside.set(r.j.id, { table, row: r.j });
  }
  const label = (id: string, depth = 0): string => {
    const found = outside.get(id);
    if (!found) return id;
    const keys = NATURAL_KEYS[found.table] ?? [];
    const parts = keys.map((k) => {
      const v = found.row[k];
      return typeof v === 'string' && outside.has(v) && depth < 3 ? label(v, depth + 1) : String(v);
    });
    return `<${found.table}:${parts.join('/')}>`;
  };
  const digests: Record<string, string> = {};
  for (const [table, rows] of generated) {
    if (rows.length === 0) continue;
    const lines = rows
      .map((row) => {
        // The bootstrap company is updated by the generator (articles, image); its own timestamps are not.
        const own = row.id === companyId ? { ...row, created_on_utc: null, modified_on_utc: null } : row;
        return JSON.stringify(own).replace(UUID, (id) => label(id));
      })
      .sort();
    digests[table] = `${rows.length} ${createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)}`;
  }
  return digests;
}

test('a scale-1 demo tenant has exactly the recorded rows', async () => {
  const tenant = await server.createTenant('Checksum Agency', { demoData: true, scale: 1 });
  const actual = await digestTenant(tenant.tenantId, tenant.companyId);
  assert.deepEqual(actual, EXPECTED, `generated rows changed; the new digests are:\n${JSON.stringify(actual, null, 2)}`);
});
