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
await handle.withTenant(creds.tenantId, async (trx) => {
  let n = 0;
  const exec = trx.getExecutor();
  const pexec = new Proxy(exec, { get(t, p) {
    if (p === 'executeQuery') return async (c: any, id: any) => {
      const ex = await t.executeQuery({ ...c, sql: `explain (analyze, costs off, buffers off) ${c.sql}` }, id);
      console.log(`--- statement ${++n}\n` + ex.rows.map((r: any) => r['QUERY PLAN']).join('\n'));
      return t.executeQuery(c, id);
    };
    const v = (t as any)[p]; return typeof v === 'function' ? v.bind(t) : v;
  } });
  const proxy = { getExecutor: () => pexec };
  await keysFirstRows(proxy as any, planned.query, planned.plan);
});
await handle.close();
