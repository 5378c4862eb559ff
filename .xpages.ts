import { readFileSync } from 'node:fs';
const creds = JSON.parse(readFileSync(`/var/lib/atrium-pg/extraction-bench/tenant-${process.argv[2]}.json`, 'utf8'));
const base = process.argv[3];
const take = Number(process.argv[4] ?? 2000);
const n = Number(process.argv[5] ?? 20);
const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json' };
for (let i = 0; i < n; i++) {
  const s = performance.now();
  const res = await fetch(`${base}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, { method: 'POST', headers, body: JSON.stringify({ queryBuilder: { skip: i * take, take } }) });
  const j = await res.json();
  if (i % 5 === 0) console.log(i, res.status, j.data?.length, (performance.now() - s).toFixed(0), 'ms');
}
