import { readFileSync } from 'node:fs';
import { keysFirstRows } from '/work/wt/extraction/src/extraction/execute.ts';
import { plan } from '/work/wt/extraction/src/extraction/service.ts';
import { DatabaseHandle } from '/work/wt/extraction/src/platform/db/database.ts';
const url = readFileSync('/var/lib/atrium-pg/extraction-bench/url', 'utf8');
const creds = JSON.parse(readFileSync(`/var/lib/atrium-pg/extraction-bench/tenant-${process.argv[2]}.json`, 'utf8'));
const handle = new DatabaseHandle(url);
const principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' as const };
const body = JSON.parse(process.argv[3]);
const planned = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, process.argv[4] ?? 'DE-TimeSheets', body, true));
for (let i = 0; i < 5; i++) {
  const s = performance.now();
  const rows = await handle.withTenant(creds.tenantId, (trx) => keysFirstRows(trx, planned.query, planned.plan));
  console.log(rows.length, (performance.now() - s).toFixed(1), 'ms');
}
await handle.close();
