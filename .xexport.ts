import { readFileSync } from 'node:fs';
import { rowsQuery } from '/work/wt/extraction/src/extraction/execute.ts';
import { openExport } from '/work/wt/extraction/src/extraction/export.ts';
import { plan } from '/work/wt/extraction/src/extraction/service.ts';
import { DatabaseHandle } from '/work/wt/extraction/src/platform/db/database.ts';
const url = readFileSync('/var/lib/atrium-pg/extraction-bench/url', 'utf8');
const creds = JSON.parse(readFileSync(`/var/lib/atrium-pg/extraction-bench/tenant-${process.argv[2]}.json`, 'utf8'));
const handle = new DatabaseHandle(url);
const principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' as const };
const planned = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, 'DE-TimeSheets', {}, false));
for (const f of ['csv', 'ndjson', 'csv', 'ndjson'] as const) {
  const s = performance.now();
  const { stream } = await openExport(handle, creds.tenantId, Date.now() + 600000, rowsQuery(planned.query, planned.plan, true), planned.plan.fields, f);
  let bytes = 0;
  for await (const c of stream) bytes += c.length;
  console.log(f, bytes, (performance.now() - s).toFixed(0), 'ms');
}
await handle.close();
