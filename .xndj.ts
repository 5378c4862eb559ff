import { readFileSync } from 'node:fs';
import { request } from 'undici';
const creds = JSON.parse(readFileSync(`/var/lib/atrium-pg/extraction-bench/tenant-${process.argv[2]}.json`, 'utf8'));
const base = process.argv[3];
const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json' };
for (const accept of ['text/csv', 'application/x-ndjson', 'text/csv', 'application/x-ndjson']) {
  const s = performance.now();
  const res = await request(`${base}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, { method: 'POST', headers: { ...headers, accept }, body: '{}' });
  let bytes = 0;
  for await (const c of res.body) bytes += (c as Buffer).length;
  console.log(accept, res.statusCode, bytes, (performance.now() - s).toFixed(0), 'ms');
}
