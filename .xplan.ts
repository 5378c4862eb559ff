import { readFileSync } from 'node:fs';
import pg from 'pg';
import { keysFirstQuery, countQuery } from '/work/wt/extraction/src/extraction/execute.ts';
import { plan } from '/work/wt/extraction/src/extraction/service.ts';
import { DatabaseHandle, tenantBinding } from '/work/wt/extraction/src/platform/db/database.ts';
const url = readFileSync('/var/lib/atrium-pg/extraction-bench/url', 'utf8');
const creds = JSON.parse(readFileSync(`/var/lib/atrium-pg/extraction-bench/tenant-${process.argv[2] ?? 50}.json`, 'utf8'));
const handle = new DatabaseHandle(url);
const principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' as const };
const body = JSON.parse(process.argv[3]);
const name = process.argv[4] ?? 'DE-TimeSheets';
const planned = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, name, body, true));
const client = new pg.Client({ connectionString: url });
await client.connect();
for (const [label, q] of [['page', keysFirstQuery(planned.query, planned.plan)], ['count', countQuery(planned.query, planned.plan)]] as const) {
  const c = q.compile(handle.kysely);
  await client.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
  const ex = await client.query(`explain (analyze, buffers off, costs off) ${c.sql}`, c.parameters as unknown[]);
  await client.query('commit');
  console.log(`--- ${label}\n${ex.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
}
await client.end(); await handle.close();
{
  const c = keysFirstQuery(planned.query, planned.plan).compile(handle.kysely);
  const client2 = new pg.Client({ connectionString: url });
  await client2.connect();
  await client2.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
  for (let i = 0; i < 5; i++) {
    const ex = await client2.query(`explain (summary on, costs off) ${c.sql}`, c.parameters as unknown[]);
    console.log(ex.rows.at(-1)['QUERY PLAN']);
  }
  const k = c.sql.indexOf('select', 30);
  await client2.query('commit'); await client2.end();
}
