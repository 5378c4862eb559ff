// Manual check of the data model and the demo generator against a scratch PostgreSQL:
//   npx node src/domain/demo-data.check.ts <connectionString> [--big-scale=50] [--skip-big] [--keep]
// Creates a fresh database, applies the migration prelude and schema.sql, bootstraps tenants, generates
// scale-1 data twice (determinism), reports per-table counts (fails on an empty table), then times a big scale.
import { readFileSync } from 'node:fs';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../platform/db/schema.ts';
import { createTenantDefaults, type TenantDefaults } from './bootstrap.ts';
import { generateDemoData } from './demo-data.ts';

// What the earlier migration creates before schema.sql runs.
const PRELUDE = `
create extension if not exists pgcrypto;
create table if not exists tenants (id uuid primary key default gen_random_uuid(), name text not null, created_on_utc timestamptz not null default now());
create or replace function atrium_enable_rls(t text) returns void language plpgsql as $$ begin
  execute format('alter table %I enable row level security', t);
  execute format('alter table %I force row level security', t);
  execute format('create policy tenant_isolation on %I using (tenant_id = nullif(current_setting(''atrium.tenant_id'', true), '''')::uuid) with check (tenant_id = nullif(current_setting(''atrium.tenant_id'', true), '''')::uuid)', t);
end $$;`;

const args = process.argv.slice(2);
const conn = args.find((a) => !a.startsWith('--'));
if (!conn) {
  console.error('usage: demo-data.check.ts <connectionString> [--big-scale=50] [--skip-big] [--keep]');
  process.exit(2);
}
const bigScale = Number(args.find((a) => a.startsWith('--big-scale='))?.split('=')[1] ?? 50);
const skipBig = args.includes('--skip-big');
const keep = args.includes('--keep');

const dbName = `atrium_dm_check_${process.pid}`;
const admin = new pg.Client({ connectionString: conn });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(conn);
url.pathname = `/${dbName}`;
const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
// Idle clients are killed by the final "drop database ... with (force)"; that is expected.
pool.on('error', () => {});
const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
let failed = false;

try {
  const schema = readFileSync(new URL('./schema.sql', import.meta.url), 'utf8');
  const c0 = await pool.connect();
  try {
    await c0.query(PRELUDE);
    const t0 = Date.now();
    await c0.query('begin');
    await c0.query(schema);
    await c0.query('commit');
    console.log(`schema applied in ${Date.now() - t0} ms`);
  } finally {
    c0.release();
  }
  const tables = (
    await pool.query<{ table_name: string }>(
      `select table_name from information_schema.columns
        where table_schema = 'public' and column_name = 'tenant_id' and table_name <> 'tenants' order by table_name`,
    )
  ).rows.map((r) => r.table_name);
  console.log(`${tables.length} tenant tables`);

  const newTenant = async (name: string): Promise<{ id: string; defaults: TenantDefaults }> => {
    const { rows } = await pool.query<{ id: string }>('insert into tenants (name) values ($1) returning id', [name]);
    const id = rows[0].id;
    const defaults = await kysely.transaction().execute(async (trx) => {
      await sql`select set_config('atrium.tenant_id', ${id}, true)`.execute(trx);
      return createTenantDefaults(trx, id, name);
    });
    return { id, defaults };
  };
  const generate = async (tenantId: string, defaults: TenantDefaults, scale: number, verbose: boolean): Promise<number> => {
    const client = await pool.connect();
    const t0 = Date.now();
    try {
      await client.query('begin');
      await generateDemoData(client, tenantId, defaults, { scale, seed: 42, log: verbose ? (l) => console.log(`  ${l}`) : undefined });
      await client.query('commit');
    } catch (e) {
      await client.query('rollback');
      throw e;
    } finally {
      client.release();
    }
    return Date.now() - t0;
  };
  const counts = async (tenantId: string): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const t of tables) out.set(t, Number((await pool.query(`select count(*)::int as n from ${t} where tenant_id = $1`, [tenantId])).rows[0].n));
    return out;
  };
  const fingerprint = async (tenantId: string): Promise<string> =>
    (
      await pool.query(
        `select (select md5(string_agg(id::text || date || duration_minutes || status, ',' order by id)) from timesheets where tenant_id = $1)
             || (select md5(string_agg(id::text || user_name, ',' order by id)) from users where tenant_id = $1 and external_id is not null) as f`,
        [tenantId],
      )
    ).rows[0].f;

  // Scale 1, twice with the same seed: identical generated rows.
  const a = await newTenant('Acme Agency');
  console.log(`scale 1: ${await generate(a.id, a.defaults, 1, true)} ms`);
  const b = await newTenant('Acme Agency Two');
  await generate(b.id, b.defaults, 1, false);
  const same = (await fingerprint(a.id)) === (await fingerprint(b.id));
  console.log(`deterministic (same seed => same timesheets and users): ${same}`);
  if (!same) failed = true;

  const c = await counts(a.id);
  const empty: string[] = [];
  for (const [t, k] of c) {
    console.log(`${t.padEnd(32)} ${String(k).padStart(9)}`);
    if (k === 0) empty.push(t);
  }
  if (empty.length > 0) {
    console.error(`EMPTY tables: ${empty.join(', ')}`);
    failed = true;
  }

  // Coherence spot checks on the scale-1 tenant.
  const checks: Array<[string, string]> = [
    [
      'timesheets without a covering user cost',
      `select count(*) from timesheets t where t.tenant_id = $1 and not exists (select 1 from user_costs c where c.tenant_id = t.tenant_id and c.user_id = t.user_id and t.date between c.start_date and coalesce(c.end_date, 'infinity'))`,
    ],
    [
      'timesheets outside their job dates',
      `select count(*) from timesheets t join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id where t.tenant_id = $1 and (t.date < j.start_date or t.date > j.end_date)`,
    ],
    [
      'timesheets on weekends or holidays',
      `select count(*) from timesheets t join users u on u.tenant_id = t.tenant_id and u.id = t.user_id where t.tenant_id = $1 and (extract(isodow from t.date) > 5 or exists (select 1 from holidays h where h.tenant_id = t.tenant_id and h.company_id = u.company_id and h.date = t.date))`,
    ],
    [
      'estimate lines whose monthly split does not add up',
      `select count(*) from estimate_item_details d where d.tenant_id = $1 and round(d.quantity_cost * d.unit_price_cost - d.discount_cost, 2) <> (select sum(m.cost) from estimate_item_detail_months m where m.tenant_id = d.tenant_id and m.estimate_item_detail_id = d.id)`,
    ],
    [
      'projects whose company cannot bill their client',
      `select count(*) from projects p where p.tenant_id = $1 and not exists (select 1 from commercial_client_companies x where x.tenant_id = p.tenant_id and x.commercial_client_id = p.commercial_client_id and x.company_id = p.company_id)`,
    ],
  ];
  for (const [label, q] of checks) {
    const k = Number((await pool.query(q, [a.id])).rows[0].count);
    console.log(`check: ${label}: ${k}`);
    if (k !== 0) failed = true;
  }
  const total = await pool.query(
    `select count(*)::int as entries, round(sum(t.duration_minutes) / 60.0, 2) as hours,
            round(sum(t.duration_minutes / 60.0 * c.hourly_value), 2) as cost
       from timesheets t join user_costs c on c.tenant_id = t.tenant_id and c.user_id = t.user_id
        and t.date between c.start_date and coalesce(c.end_date, 'infinity')
      where t.tenant_id = $1 and t.deleted_on is null`,
    [a.id],
  );
  console.log(`live timesheets: ${JSON.stringify(total.rows[0])}`);

  if (!skipBig) {
    const big = await newTenant('Big Agency');
    const ms = await generate(big.id, big.defaults, bigScale, true);
    const k = Number((await pool.query('select count(*) from timesheets where tenant_id = $1', [big.id])).rows[0].count);
    console.log(`scale ${bigScale}: ${k} timesheets, generateDemoData + commit in ${(ms / 1000).toFixed(1)} s`);
  }
} catch (e) {
  console.error(e);
  failed = true;
} finally {
  await kysely.destroy();
  if (!keep) await admin.query(`drop database if exists ${dbName} with (force)`);
  else console.log(`kept database ${dbName}`);
  await admin.end();
}
process.exit(failed ? 1 : 0);
