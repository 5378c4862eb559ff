// Data Extraction benchmark on the demo generator at scale 50 (about 1.05M timesheets):
// (1) a 100-row page of DE-TimeSheets with a contains filter, a date range and an orderBy, totalCount
//     included: median latency over HTTP vs the same SQL (binding, page, count) sent through pg from
//     this process; EXPLAIN ANALYZE of both statements. Target: ratio <= 1.5.
// (1b) the same page ordered by a string column (case-insensitive order) vs the same SQL and vs byte order.
// (2) the full CSV stream of DE-TimeSheets over HTTP vs COPY (SELECT …) TO STDOUT WITH CSV of the same
//     query through pg-copy-streams, alternating runs: median rows/s (target >= 50%) and the server's
//     peak RSS during the exports (VmHWM, reset before them; < 300 MB). Once on the server of part (1)
//     with default V8 flags, once on a fresh server with `npm start`'s settings. The same export
//     asked with Accept-Encoding: gzip and br (decoded and counted here), beside the uncompressed one.
// Run: npm run bench -- extraction-stream   (BENCH_SCALE=50, BENCH_RUNS=25, BENCH_EXPORT_RUNS=3)
// (the page plans, counts and exports of issue #12 against hand-written SQL: bench/extraction.ts)
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { PassThrough, pipeline, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { request } from 'undici';
import { inlineParameters } from '../src/extraction/exports/copy-statement.ts';
import { countQuery, executePage, rowsQuery } from '../src/extraction/pages/execute.ts';
import { plan } from '../src/extraction/service.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import { DatabaseHandle, tenantBinding } from '../src/platform/db/database.ts';
import { benchDatabase, benchEnv, fmt, median, runCli, SERVER_MEMORY_ENV, startServerProcess } from './lib.ts';

const SCALE = process.env.BENCH_SCALE ?? '50';
const RUNS = Number(process.env.BENCH_RUNS ?? 25);
const EXPORT_RUNS = Number(process.env.BENCH_EXPORT_RUNS ?? 3);

const db = await benchDatabase('atrium_bench_extraction');
try {
  // Exports of a million rows run longer than the 30-second request limit on this machine: the bench raises it.
  const env = benchEnv(db.url, { ATRIUM_REQUEST_TIMEOUT_MS: '600000' });
  const t0 = Date.now();
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--demo', '--scale', SCALE, '--json'], env));
  console.log(`demo data at scale ${SCALE}: ${fmt((Date.now() - t0) / 1000, 1)} s`);
  const owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  await owner.query('vacuum analyze');
  const count = await owner.query('select count(*)::int as n from timesheets where tenant_id = $1', [creds.tenantId]);
  const sample = await owner.query(
    `select j.name, min(t.date)::text as first, max(t.date)::text as last from timesheets t join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
      where t.tenant_id = $1 group by j.name order by count(*) desc limit 1 offset 3`,
    [creds.tenantId],
  );
  const word = (sample.rows[0].name as string).split(/\s+/).find((w) => w.length >= 4) ?? sample.rows[0].name;
  const term = word.slice(1, 5).toLowerCase();
  const lastDay = new Date(`${sample.rows[0].last}T00:00:00Z`);
  const from = new Date(lastDay.getTime() - 90 * 86_400_000).toISOString().slice(0, 10);
  const to = lastDay.toISOString().slice(0, 10);
  console.log(`timesheets: ${fmt(count.rows[0].n)}; filter: Job contains "${term}", Day between ${from} and ${to}, orderBy Day desc`);

  const server = await startServerProcess(env);
  const status = (field: 'VmHWM' | 'VmRSS', pid = server.child.pid) =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const idleRss = status('VmRSS');
  const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json' };
  const body = {
    queryBuilder: {
      skip: 0,
      take: 100,
      orderBy: [{ field: 'Day', direction: 'desc' }],
      filters: [['Job', 'contains', term], 'and', ['Day', 'between', [from, to]]],
    },
  };
  const url = `${server.baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`;

  // The same statements the server runs, compiled by the engine in this process.
  const handle = new DatabaseHandle(db.url);
  const principal: Principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' };
  const planned = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, 'DE-TimeSheets', body, true));
  const pageSql = rowsQuery(planned.query, planned.plan).compile(handle.kysely);
  const countSql = countQuery(planned.query, planned.plan).compile(handle.kysely);
  const check = await handle.withTenant(creds.tenantId, (trx) => executePage(trx, planned.query, planned.plan));

  const http = async () => {
    const s = performance.now();
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = (await res.json()) as { totalCount: number; data: unknown[] };
    if (res.status !== 200) throw new Error(JSON.stringify(json));
    return { ms: performance.now() - s, json };
  };
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const direct = async () => {
    const s = performance.now();
    await client.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
    await client.query(pageSql.sql, pageSql.parameters as unknown[]);
    await client.query(countSql.sql, countSql.parameters as unknown[]);
    await client.query('commit');
    return performance.now() - s;
  };
  const first = await http();
  if (first.json.totalCount !== check.totalCount || first.json.data.length !== check.data.length) throw new Error('HTTP and direct answers differ');
  for (let i = 0; i < 3; i++) {
    await http();
    await direct();
  }
  const httpMs: number[] = [];
  const directMs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    httpMs.push((await http()).ms);
    directMs.push(await direct());
  }
  console.log(`\n(1) 100-row page, totalCount ${fmt(first.json.totalCount)}, ${RUNS} alternating runs`);
  console.log(`    HTTP dynamic-execute: median ${fmt(median(httpMs), 1)} ms`);
  console.log(`    same SQL through pg:  median ${fmt(median(directMs), 1)} ms`);
  console.log(`    ratio: ${fmt(median(httpMs) / median(directMs), 2)}x (target <= 1.5x)`);
  for (const [label, q] of [
    ['page', pageSql],
    ['count', countSql],
  ] as const) {
    await client.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
    const explain = await client.query(`explain (analyze, buffers off, costs off) ${q.sql}`, q.parameters as unknown[]);
    await client.query('commit');
    console.log(`\n    EXPLAIN ANALYZE (${label}):\n${explain.rows.map((r) => `      ${r['QUERY PLAN']}`).join('\n')}`);
  }

  // (1b) The same page ordered by a string (User asc), which sorts ignoring case (collation atrium_ci,
  // migration 0010): HTTP vs the same SQL, and that SQL with the column's default (byte) order instead,
  // for the cost of the case-insensitive order itself.
  const byUser = { queryBuilder: { ...body.queryBuilder, orderBy: [{ field: 'User', direction: 'asc' }] } };
  const userPlan = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, 'DE-TimeSheets', byUser, true));
  const userPage = rowsQuery(userPlan.query, userPlan.plan).compile(handle.kysely);
  if (!userPage.sql.includes('collate atrium_ci')) throw new Error('the string order is not case-insensitive');
  const bytePage = userPage.sql.replace(' collate atrium_ci', '');
  const timed = async (text: string) => {
    const s = performance.now();
    await client.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
    await client.query(text, userPage.parameters as unknown[]);
    await client.query(countSql.sql, countSql.parameters as unknown[]);
    await client.query('commit');
    return performance.now() - s;
  };
  const httpUser = async () => {
    const s = performance.now();
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(byUser) });
    const json = (await res.json()) as { totalCount: number; data: { User: string }[] };
    if (res.status !== 200 || json.totalCount !== check.totalCount) throw new Error(JSON.stringify(json).slice(0, 300));
    return { ms: performance.now() - s, json };
  };
  const firstUser = await httpUser();
  const names = firstUser.json.data.map((r) => r.User);
  const folded = [...names].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'accent' }));
  if (names.join('|') !== folded.join('|')) throw new Error('the User order is not case-insensitive');
  const userHttp: number[] = [];
  const userSql: number[] = [];
  const byteSql: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    userHttp.push((await httpUser()).ms);
    userSql.push(await timed(userPage.sql));
    byteSql.push(await timed(bytePage));
  }
  console.log(`\n(1b) the same page ordered by User asc (case-insensitive), ${RUNS} alternating runs`);
  console.log(`    HTTP dynamic-execute:                median ${fmt(median(userHttp), 1)} ms`);
  console.log(`    same SQL through pg:                 median ${fmt(median(userSql), 1)} ms (ratio ${fmt(median(userHttp) / median(userSql), 2)}x)`);
  console.log(
    `    same SQL in byte order (no collate): median ${fmt(median(byteSql), 1)} ms (case-insensitive / byte ${fmt(median(userSql) / median(byteSql), 2)}x)`,
  );

  const afterPages = status('VmHWM');
  console.log(`\n    server RSS idle after start: ${fmt(idleRss, 1)} MB; peak so far (VmHWM): ${fmt(afterPages, 1)} MB`);

  // (2) The full CSV stream vs COPY of the same query, alternating, medians.
  const exportPlan = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, 'DE-TimeSheets', {}, false));
  const exportSql = rowsQuery(exportPlan.query, exportPlan.plan, true).compile(handle.kysely);
  // COPY takes no parameters: inlined as literals, as the server's CSV export does.
  const inlined = inlineParameters(exportSql.sql, exportSql.parameters);
  type Run = { rows: number; ms: number };
  const copyRun = async (): Promise<Run> => {
    const s = performance.now();
    await client.query(`begin; ${tenantBinding(creds.tenantId, Date.now() + 600_000)}`);
    const stream = client.query(copyTo(`copy (${inlined}) to stdout with csv header`));
    for await (const _ of stream as AsyncIterable<Buffer>);
    await client.query('commit');
    return { rows: stream.rowCount, ms: performance.now() - s };
  };
  type Encoding = 'identity' | 'gzip' | 'br';
  /** fetch would ask for (and decode) br by itself: the encoding is named, and decoded here, so each run is what it says. */
  const csvRun = async (baseUrl: string, encoding: Encoding = 'identity'): Promise<Run & { wire: number }> => {
    const s = performance.now();
    const res = await request(`${baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, {
      method: 'POST',
      headers: { ...headers, accept: 'text/csv', 'accept-encoding': encoding, 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.statusCode !== 200) throw new Error(`CSV: ${res.statusCode} ${await res.body.text()}`);
    if ((res.headers['content-encoding'] ?? 'identity') !== encoding) throw new Error(`CSV: asked ${encoding}, got ${res.headers['content-encoding']}`);
    let wire = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        wire += chunk.length;
        done(null, chunk);
      },
    });
    const decoded = encoding === 'gzip' ? createGunzip() : encoding === 'br' ? createBrotliDecompress() : new PassThrough();
    pipeline(res.body, counter, decoded, () => {});
    // Rows end with CRLF; a line break inside a quoted field is a bare LF.
    let rows = -1;
    let cr = false;
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      for (const b of chunk) {
        if (b === 10 && cr) rows++;
        cr = b === 13;
      }
    }
    return { rows, ms: performance.now() - s, wire };
  };
  const rate = (r: Run) => r.rows / (r.ms / 1000);
  /** Alternating runs against one server process; its peak RSS is reset first, so it is the exports' own. */
  const exportRound = async (label: string, srv: { baseUrl: string; child: { pid?: number } }) => {
    writeFileSync(`/proc/${srv.child.pid}/clear_refs`, '5');
    const before = status('VmRSS', srv.child.pid);
    const csv: Record<Encoding, (Run & { wire: number })[]> = { identity: [], gzip: [], br: [] };
    const copy: Run[] = [];
    for (let i = 0; i < EXPORT_RUNS; i++) {
      copy.push(await copyRun());
      for (const encoding of ['identity', 'gzip', 'br'] as const) csv[encoding].push(await csvRun(srv.baseUrl, encoding));
    }
    const all = Object.values(csv).flat();
    if (all.some((r) => r.rows !== copy[0].rows)) throw new Error(`CSV rows ${all.map((r) => r.rows)} vs COPY ${copy[0].rows}`);
    const hwm = status('VmHWM', srv.child.pid);
    const copyRate = median(copy.map(rate));
    console.log(`\n(2) full CSV stream of DE-TimeSheets (${fmt(copy[0].rows)} rows; ${EXPORT_RUNS} alternating runs, medians), server ${label}`);
    for (const encoding of ['identity', 'gzip', 'br'] as const) {
      const runs = csv[encoding];
      const r = median(runs.map(rate));
      console.log(
        `    HTTP Accept: text/csv, Accept-Encoding: ${encoding.padEnd(8)} ${fmt(r)} rows/s (${runs.map((x) => `${fmt(x.ms / 1000, 1)} s`).join(', ')}); ` +
          `${fmt((r / copyRate) * 100, 1)}% of COPY; ${fmt(median(runs.map((x) => x.wire)) / 2 ** 20, 1)} MiB on the wire`,
      );
    }
    console.log(`    COPY … TO STDOUT WITH CSV:   ${fmt(copyRate)} rows/s (${copy.map((x) => `${fmt(x.ms / 1000, 1)} s`).join(', ')})`);
    console.log(`    ratio (identity): ${fmt((median(csv.identity.map(rate)) / copyRate) * 100, 1)}% (target >= 50%)`);
    console.log(`    server RSS before the exports: ${fmt(before, 1)} MB; peak during them (VmHWM): ${fmt(hwm, 1)} MB (target < 300 MB)`);
  };
  await exportRound('with default V8 flags (the one that served part 1)', server);
  await server.stop();
  // The second server runs as `npm start` runs it (its V8 flags and glibc settings, read from package.json): the
  // peak RSS that the 300 MB bound is about.
  const settings = Object.entries(SERVER_MEMORY_ENV)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  const shipped = await startServerProcess({ ...env, ...SERVER_MEMORY_ENV });
  console.log(`\n    server with npm start's settings (${settings}): RSS idle after start ${fmt(status('VmRSS', shipped.child.pid), 1)} MB`);
  await exportRound("with npm start's settings", shipped);
  await shipped.stop();
  console.log(`\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);
  await client.end();
  await owner.end();
  await handle.close();
} finally {
  await db.stop();
}
