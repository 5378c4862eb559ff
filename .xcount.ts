import { readFileSync } from 'node:fs';
import pg from 'pg';
import { countQuery } from '/work/wt/extraction/src/extraction/execute.ts';
import { plan } from '/work/wt/extraction/src/extraction/service.ts';
import { DatabaseHandle, tenantBinding } from '/work/wt/extraction/src/platform/db/database.ts';
const url = readFileSync('/var/lib/atrium-pg/extraction-bench/url', 'utf8');
const creds = JSON.parse(readFileSync(`/var/lib/atrium-pg/extraction-bench/tenant-50.json`, 'utf8'));
const handle = new DatabaseHandle(url);
const principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' as const };
const planned = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, 'DE-TimeSheets', {}, true));
const c = countQuery(planned.query, planned.plan).compile(handle.kysely);
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
for (const pre of ['', 'set local enable_seqscan = off']) {
  if (pre) await client.query(pre);
  const ex = await client.query(`explain (costs on) ${c.sql}`, c.parameters as unknown[]);
  console.log(ex.rows.map((r) => r['QUERY PLAN']).join('\n'));
}
await client.query('commit'); await client.end(); await handle.close();
