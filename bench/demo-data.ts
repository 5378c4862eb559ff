// Demo data check and timing: migrates a throwaway embedded PostgreSQL with the real migrations, creates
// demo tenants as `atrium tenants create --demo` does, and checks the generator: scale 1 twice with the same
// seed gives the same rows, no table stays empty, coherence spot checks hold; then times a big scale.
//   npm run bench -- demo-data [--big-scale=50] [--skip-big]
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { DEMO_TABLES } from '../src/demo/demo-data.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { migrateToLatest } from '../src/platform/db/migrate.ts';
import { createContext } from '../src/server.ts';
import { createTenant } from '../src/tenancy/service.ts';
import { benchDatabase } from './lib.ts';

const args = process.argv.slice(2).filter((a) => a.startsWith('--'));
const bigScale = Number(args.find((a) => a.startsWith('--big-scale='))?.split('=')[1] ?? 50);
const skipBig = args.includes('--skip-big');

const database = await benchDatabase('atrium_demo_check');
const db = new DatabaseHandle(database.url, { poolSize: 4 });
const pool = db.pool;
let failed = false;

try {
  await migrateToLatest(db.kysely);
  const ctx = createContext(loadConfig({ DATABASE_URL: database.url }), db, randomBytes(32));
  const generate = async (name: string, scale: number, verbose: boolean): Promise<{ id: string; ms: number }> => {
    const t0 = Date.now();
    const log = verbose ? (line: string) => console.log(`  ${line}`) : undefined;
    const created = await createTenant(ctx, { name, demoData: true, scale, seed: 42, log });
    return { id: created.tenantId, ms: Date.now() - t0 };
  };
  const counts = async (tenantId: string): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const t of DEMO_TABLES) out.set(t, Number((await pool.query(`select count(*)::int as n from ${t} where tenant_id = $1`, [tenantId])).rows[0].n));
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
  const a = await generate('Acme Agency', 1, true);
  console.log(`scale 1: ${a.ms} ms`);
  const b = await generate('Acme Agency Two', 1, false);
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
    const big = await generate('Big Agency', bigScale, true);
    const k = Number((await pool.query('select count(*) from timesheets where tenant_id = $1', [big.id])).rows[0].count);
    console.log(`scale ${bigScale}: ${k} timesheets, tenant with its demo data created in ${(big.ms / 1000).toFixed(1)} s`);
  }
} catch (e) {
  console.error(e);
  failed = true;
} finally {
  await db.close();
  await database.stop();
}
process.exit(failed ? 1 : 0);
