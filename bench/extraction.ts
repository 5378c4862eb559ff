// Data Extraction at the limit (issue #12): DE-TimeSheets pages over HTTP against the SQL a DBA writes by
// hand for the same rows, columns and totalCount (bench/extraction/baselines.ts, checked identical), on
// demo tenants of several scales; medians of alternating runs. Cold by default: each HTTP run follows a write
// to the table the query reads (as the tenant), so no kept count, position or page can answer it; the same
// page asked again right after (kept answers) is reported beside it. Then: the page part and the count part on their own (the
// growth table), a repeated page of unchanged data (the kept count), a client reading everything in pages
// of 2,000 with growing skip against one CSV export, and the CSV and NDJSON exports (and a scheduled run in the
// json format) against COPY of the hand-written SELECT, with the server's peak RSS over the whole run.
// Run: npm run bench -- extraction
//   BENCH_SCALES=5,50 (fresh database; tenants created here) or, to reuse a kept database,
//   BENCH_DATABASE_URL=postgres://… BENCH_TENANTS=5=/path/tenant-5.json,50=… (the `tenants create --json` output)
//   BENCH_RUNS=7, BENCH_LOADER=50 (scales whose full paged read is timed; empty: none), BENCH_EXPORT_RUNS=3,
//   BENCH_EXPORT_SCALE=50, BENCH_OTHERS=50 (scales where DE-History, DE-Workloads and DE-Leaves pages are compared too),
//   BENCH_BEFORE=/path/to/other/checkout (its server started first, on the same database, and its pages timed
//   alternating with this one's: before and after in one run; it must not lack a migration the database has).
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { request } from 'undici';
import { CATALOGUE } from '../src/extraction/definition.ts';
import { inlineParameters } from '../src/extraction/exports/copy-statement.ts';
import { countQuery, keysFirstRows, shapeRow } from '../src/extraction/pages/execute.ts';
import { plan } from '../src/extraction/service.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import { DatabaseHandle, tenantBinding } from '../src/platform/db/database.ts';
import { type Baseline, timesheetsExport, timesheetsPage } from './extraction/baselines.ts';
import { OTHER_QUERIES } from './extraction/others.ts';
import { benchDatabase, benchEnv, cpuDelta, cpuSeconds, fmt, median, runCli, SERVER_MEMORY_ENV, serverMemoryEnv, startServerProcess } from './lib.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const EXPORT_RUNS = Number(process.env.BENCH_EXPORT_RUNS ?? 3);
const LOADER = (process.env.BENCH_LOADER ?? '50').split(',').filter(Boolean);
const EXPORT_SCALE = process.env.BENCH_EXPORT_SCALE ?? '50';
const OTHERS = (process.env.BENCH_OTHERS ?? '50').split(',').filter(Boolean);

type Creds = { tenantId: string; appId: string; appSecret: string };
const kept = process.env.BENCH_DATABASE_URL;
const db = kept ? { url: kept, stop: async () => {} } : await benchDatabase('atrium_bench_extraction');
const env = benchEnv(db.url, { ATRIUM_REQUEST_TIMEOUT_MS: '600000' });
const tenants: [string, Creds][] = [];
if (kept) {
  for (const part of (process.env.BENCH_TENANTS ?? '').split(',').filter(Boolean)) {
    const [scale, file] = part.split('=');
    tenants.push([scale, JSON.parse(readFileSync(file, 'utf8'))]);
  }
} else {
  for (const scale of (process.env.BENCH_SCALES ?? '5,50').split(',')) {
    const t0 = Date.now();
    tenants.push([scale, JSON.parse(await runCli(['tenants', 'create', '--name', `Scale ${scale}`, '--demo', '--scale', scale, '--json'], env))]);
    console.log(`demo tenant at scale ${scale}: ${fmt((Date.now() - t0) / 1000, 1)} s`);
  }
}
// Migrate (the server does at start) before anything reads the schema; the server's own flags as `npm start` sets them.
const beforeServer = process.env.BENCH_BEFORE
  ? await startServerProcess({ ...env, ...serverMemoryEnv(path.resolve(process.env.BENCH_BEFORE)) }, path.resolve(process.env.BENCH_BEFORE))
  : null;
const server = await startServerProcess({ ...env, ...SERVER_MEMORY_ENV });
const owner = new pg.Client({ connectionString: db.url });
await owner.connect();
await owner.query('vacuum analyze');
const client = new pg.Client({ connectionString: db.url });
await client.connect();
const handle = new DatabaseHandle(db.url);
const rss = (field: 'VmHWM' | 'VmRSS') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const url = `${server.baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`;
const load = () => os.loadavg()[0].toFixed(1);

async function asTenant<T>(tenantId: string, work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const s = performance.now();
  await client.query(`begin; ${tenantBinding(tenantId, Date.now() + 600_000)}`);
  const value = await work();
  await client.query('commit');
  return { ms: performance.now() - s, value };
}

async function countsServed(): Promise<Record<string, number>> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const out: Record<string, number> = { hit: 0, miss: 0, uncached: 0 };
  for (const m of text.matchAll(/^atrium_extraction_counts_total\{result="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

const summary: string[] = [];
try {
  for (const [scale, creds] of tenants) {
    const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json' };
    const principal: Principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' };
    const live = Number((await owner.query('select count(*) from timesheets where tenant_id = $1 and deleted_on is null', [creds.tenantId])).rows[0].count);
    const sample = await owner.query(
      `select j.name, max(t.date)::text as last from timesheets t join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
        where t.tenant_id = $1 group by j.name order by count(*) desc limit 1 offset 3`,
      [creds.tenantId],
    );
    const word = (sample.rows[0].name as string).split(/\s+/).find((w) => w.length >= 4) ?? sample.rows[0].name;
    const term = word.slice(1, 5).toLowerCase();
    const last = new Date(`${sample.rows[0].last}T00:00:00Z`);
    const days: [string, string] = [new Date(last.getTime() - 90 * 86_400_000).toISOString().slice(0, 10), last.toISOString().slice(0, 10)];
    const deep = Math.min(500_000, Math.floor(live / 2));
    const byDay = [{ field: 'Day', direction: 'desc' }];
    const cases: { label: string; body: object; hand: Baseline }[] = [
      {
        label: `filtered (Job contains "${term}", Day between ${days[0]} and ${days[1]})`,
        body: { queryBuilder: { take: 100, orderBy: byDay, filters: [['Job', 'contains', term], 'and', ['Day', 'between', days]] } },
        hand: timesheetsPage(creds.tenantId, { skip: 0, take: 100, job: `%${term}%`, days }),
      },
      {
        label: 'unfiltered, orderBy Day desc',
        body: { queryBuilder: { take: 100, orderBy: byDay } },
        hand: timesheetsPage(creds.tenantId, { skip: 0, take: 100 }),
      },
      {
        label: `unfiltered, skip ${fmt(deep)}`,
        body: { queryBuilder: { skip: deep, take: 100, orderBy: byDay } },
        hand: timesheetsPage(creds.tenantId, { skip: deep, take: 100 }),
      },
    ];
    console.log(`\n=== scale ${scale}: ${fmt(live)} live timesheets; load average ${load()}`);
    // A write to the tenant's timesheets (bound to the tenant, as the API writes): the next count is fresh.
    const touch = async (table = 'timesheets') => {
      await owner.query('begin');
      await owner.query(`select set_config('atrium.tenant_id', $1, true)`, [creds.tenantId]);
      await owner.query(`update ${table} set tenant_id = tenant_id where tenant_id = $1 and id = (select id from ${table} where tenant_id = $1 limit 1)`, [
        creds.tenantId,
      ]);
      await owner.query('commit');
    };
    // Pages are read as the exports are (undici, no Accept-Encoding): fetch asks for br, which the server
    // spends 30–70 ms compressing per 2,000-row page, where the CSV export it is compared with goes uncompressed.
    const http = async (body: object, at = url) => {
      const s = performance.now();
      const res = await request(at, { method: 'POST', headers, body: JSON.stringify(body) });
      const json = (await res.body.json()) as { totalCount: number; data: Record<string, unknown>[] };
      if (res.statusCode !== 200) throw new Error(JSON.stringify(json).slice(0, 500));
      return { ms: performance.now() - s, json };
    };
    /** HTTP against the hand-written SQL on one case, after checking they answer the same; a row of the summary. */
    const compare = async (name: string, table: string, c: { label: string; body: object; hand: Baseline }) => {
      const columns = CATALOGUE.find((e) => e.name === name)!.columns;
      const planned = await handle.withTenant(creds.tenantId, (trx) => plan(trx, principal, name, c.body, true));
      const engineCount = countQuery(planned.query, planned.plan).compile(handle.kysely);
      const handPage = () => client.query(c.hand.page, c.hand.parameters);
      const handCount = () => client.query(c.hand.count, c.hand.parameters.slice(0, -2));
      const queryUrl = `${server.baseUrl}/api/v3/analytics/named-query/${name}/dynamic-execute`;
      // Same rows, same order, same columns, same totalCount.
      await touch(table);
      const answer = (await http(c.body, queryUrl)).json;
      const hand = await asTenant(creds.tenantId, async () => ({ rows: (await handPage()).rows, n: Number((await handCount()).rows[0].n) }));
      if (answer.totalCount !== hand.value.n) throw new Error(`${name} ${c.label}: totalCount ${answer.totalCount} vs hand-written ${hand.value.n}`);
      if (JSON.stringify(answer.data) !== JSON.stringify(hand.value.rows.map((r) => shapeRow(r, columns)))) {
        throw new Error(`${name} ${c.label}: rows differ from the hand-written SQL`);
      }
      const t = {
        http: [] as number[],
        kept: [] as number[],
        httpBefore: [] as number[],
        keptBefore: [] as number[],
        hand: [] as number[],
        enginePage: [] as number[],
        handPage: [] as number[],
        engineCount: [] as number[],
        handCount: [] as number[],
      };
      for (let i = 0; i < RUNS; i++) {
        await touch(table);
        t.http.push((await http(c.body, queryUrl)).ms);
        t.kept.push((await http(c.body, queryUrl)).ms);
        if (beforeServer) {
          const beforeUrl = queryUrl.replace(server.baseUrl, beforeServer.baseUrl);
          await touch(table);
          const cold = await http(c.body, beforeUrl);
          if (cold.json.totalCount !== answer.totalCount) throw new Error(`${name} ${c.label}: the server before answered another totalCount`);
          t.httpBefore.push(cold.ms);
          t.keptBefore.push((await http(c.body, beforeUrl)).ms);
        }
        t.hand.push((await asTenant(creds.tenantId, async () => [await handPage(), await handCount()])).ms);
        const s = performance.now();
        await handle.withTenant(creds.tenantId, (trx) => keysFirstRows(trx, planned.query, planned.plan));
        t.enginePage.push(performance.now() - s);
        t.handPage.push((await asTenant(creds.tenantId, handPage)).ms);
        t.engineCount.push((await asTenant(creds.tenantId, () => client.query(engineCount.sql, engineCount.parameters as unknown[]))).ms);
        t.handCount.push((await asTenant(creds.tenantId, handCount)).ms);
      }
      const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)])) as Record<keyof typeof t, number>;
      console.log(`\n  ${name} ${c.label}: ${fmt(answer.totalCount)} matching; ${RUNS} alternating runs, medians; load average ${load()}`);
      console.log(
        `    HTTP page + totalCount, cold (after a write) ${fmt(m.http, 1)} ms | hand-written page + count ${fmt(m.hand, 1)} ms | ratio ${fmt(m.http / m.hand, 2)}x (target <= 1.2x); kept answers ${fmt(m.kept, 1)} ms (${fmt(m.kept / m.hand, 2)}x)`,
      );
      console.log(
        `    page part: engine SQL ${fmt(m.enginePage, 1)} ms vs hand ${fmt(m.handPage, 1)} ms; count: engine SQL ${fmt(m.engineCount, 1)} ms vs hand ${fmt(m.handCount, 1)} ms`,
      );
      if (beforeServer) {
        console.log(
          `    before (BENCH_BEFORE's server): cold ${fmt(m.httpBefore, 1)} ms (${fmt(m.httpBefore / m.hand, 2)}x), kept answers ${fmt(m.keptBefore, 1)} ms`,
        );
        summary.push(
          `| ${scale} | before: ${name} ${c.label} | ${fmt(m.httpBefore, 1)} | ${fmt(m.hand, 1)} | ${fmt(m.httpBefore / m.hand, 2)}x | ${fmt(m.keptBefore, 1)} (${fmt(m.keptBefore / m.hand, 2)}x) | | |`,
        );
      }
      summary.push(
        `| ${scale} | ${name} ${c.label} | ${fmt(m.http, 1)} | ${fmt(m.hand, 1)} | ${fmt(m.http / m.hand, 2)}x | ${fmt(m.kept, 1)} (${fmt(m.kept / m.hand, 2)}x) | ${fmt(m.enginePage, 1)} / ${fmt(m.handPage, 1)} | ${fmt(m.engineCount, 1)} / ${fmt(m.handCount, 1)} |`,
      );
    };
    for (const c of cases) await compare('DE-TimeSheets', 'timesheets', c);
    if (OTHERS.includes(scale)) {
      const tables: Record<string, string> = { 'DE-History': 'document_history', 'DE-Workloads': 'workloads', 'DE-Leaves': 'leaves' };
      for (const other of OTHER_QUERIES) {
        const count = other.baseline(creds.tenantId, 0, 1).count;
        const total = Number((await owner.query(count, [creds.tenantId])).rows[0].n);
        for (const skip of [0, Math.floor(total / 2)]) {
          const body = { queryBuilder: { skip, take: 100, orderBy: [{ field: other.orderBy, direction: 'desc' }] } };
          await compare(other.name, tables[other.name], {
            label: `orderBy ${other.orderBy} desc, skip ${fmt(skip)}`,
            body,
            hand: other.baseline(creds.tenantId, skip, 100),
          });
        }
      }
    }

    // A paging client: the same query and filters, next skip, nothing changed: the count is the kept one.
    const next = { queryBuilder: { take: 100, orderBy: byDay } };
    const first: number[] = [];
    const again: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await touch();
      first.push((await http(next)).ms);
      const before = await countsServed();
      again.push((await http({ queryBuilder: { ...next.queryBuilder, skip: 100 } })).ms);
      const after = await countsServed();
      if (after.hit !== before.hit + 1) throw new Error('the next page recounted');
    }
    console.log(
      `\n  repeated page (unfiltered, orderBy Day desc): first page ${fmt(median(first), 1)} ms; next page (skip 100, count kept: /metrics hit) ${fmt(median(again), 1)} ms`,
    );
    summary.push(`| ${scale} | next page of unchanged data (skip 100; kept count) | ${fmt(median(again), 1)} | | | | | first page ${fmt(median(first), 1)} |`);

    if (LOADER.includes(scale)) {
      // The platform loader's pattern: pages of 2,000, growing skip, default order (the key), until a short page.
      let rows = 0;
      const s = performance.now();
      for (let skip = 0; ; skip += 2000) {
        const { json } = await http({ queryBuilder: { skip, take: 2000 } });
        rows += json.data.length;
        if (json.data.length < 2000) break;
      }
      const paged = performance.now() - s;
      const c0 = performance.now();
      const res = await request(url, { method: 'POST', headers: { ...headers, accept: 'text/csv' }, body: '{}' });
      let bytes = 0;
      for await (const chunk of res.body) bytes += (chunk as Buffer).length;
      const csv = performance.now() - c0;
      if (rows !== live) throw new Error(`the paged read saw ${rows} rows of ${live}`);
      console.log(
        `\n  read all in pages of 2,000: ${fmt(rows)} rows in ${fmt(paged / 1000, 1)} s; one CSV export ${fmt(csv / 1000, 1)} s (${fmt(bytes / 2 ** 20)} MiB); ratio ${fmt(paged / csv, 2)}x (target <= 3x); load average ${load()}`,
      );
      summary.push(
        `| ${scale} | all rows in pages of 2,000 vs one CSV export | ${fmt(paged / 1000, 1)} s | ${fmt(csv / 1000, 1)} s (CSV) | ${fmt(paged / csv, 2)}x | | | |`,
      );
    }

    if (scale === EXPORT_SCALE) {
      const base = timesheetsExport(creds.tenantId);
      const copySql = `copy (${inlineParameters(base.sql, base.parameters)}) to stdout with csv`;
      const copyRun = async () => {
        const { ms, value } = await asTenant(creds.tenantId, async () => {
          const stream = client.query(copyTo(copySql));
          for await (const _ of stream as AsyncIterable<Buffer>);
          return stream.rowCount;
        });
        return { rows: value, ms };
      };
      const exportRun = async (accept: string) => {
        const s = performance.now();
        const res = await request(url, { method: 'POST', headers: { ...headers, accept }, body: '{}' });
        if (res.statusCode !== 200) throw new Error(`${accept}: ${res.statusCode}`);
        let lines = 0;
        // Counted with indexOf (native), not a JS loop over every byte: the client's own CPU competes with the
        // server and PostgreSQL for the cores, and the COPY baseline it is compared with counts nothing.
        for await (const chunk of res.body as AsyncIterable<Buffer>) for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        return { rows: accept === 'text/csv' ? lines - 1 : lines, ms: performance.now() - s };
      };
      // The JSON export is a scheduled run in the json format (the API's envelope, written to the export store):
      // timed from the run's start to its end as the run records them.
      const schedules = `${server.baseUrl}/api/v3/analytics/schedules`;
      const made = await fetch(schedules, {
        method: 'POST',
        headers,
        body: JSON.stringify({ Name: `bench json ${Date.now()}`, Query: 'DE-TimeSheets', Format: 'json', CronExpression: '5 0 1 1 *' }),
      });
      if (made.status !== 201) throw new Error(`schedule: ${made.status} ${await made.text()}`);
      const scheduleId = ((await made.json()) as { id: string }).id;
      const { 'content-type': _, ...bare } = headers; // a POST or DELETE without a body
      const jsonRun = async () => {
        const s = performance.now();
        const started = await fetch(`${schedules}/${scheduleId}/run?wait=25`, { method: 'POST', headers: bare });
        let run = (await started.json()) as {
          id: string;
          status: string;
          rows: number;
          startedOnUtc: string;
          finishedOnUtc: string | null;
          error: string | null;
        };
        while (run.status === 'Running' || run.status === 'Queued') {
          await new Promise((r) => setTimeout(r, 100));
          run = (await (await fetch(`${schedules}/${scheduleId}/runs/${run.id}`, { headers })).json()) as typeof run;
        }
        if (run.status !== 'Succeeded') throw new Error(`json run: ${run.status} ${run.error}`);
        return { rows: run.rows, ms: performance.now() - s };
      };
      const formats = ['copy', 'csv', 'ndjson', 'json'] as const;
      const runs: Record<(typeof formats)[number], { rows: number; ms: number }[]> = { copy: [], csv: [], ndjson: [], json: [] };
      // CPU seconds of the server process and of this client per format (PostgreSQL's is not a child here).
      const cpu: Record<string, { server: number; client: number }[]> = { copy: [], csv: [], ndjson: [], json: [] };
      const serverPid = server.child.pid as number;
      for (let i = 0; i < EXPORT_RUNS; i++) {
        for (const k of formats) {
          const before = cpuSeconds({ [serverPid]: 'server' });
          runs[k].push(k === 'copy' ? await copyRun() : k === 'json' ? await jsonRun() : await exportRun(k === 'csv' ? 'text/csv' : 'application/x-ndjson'));
          const used = cpuDelta(before, cpuSeconds({ [serverPid]: 'server' }));
          cpu[k].push({ server: used.server ?? 0, client: used.bench ?? 0 });
        }
      }
      await fetch(`${schedules}/${scheduleId}`, { method: 'DELETE', headers: bare });
      const rate = (xs: { rows: number; ms: number }[]) => median(xs.map((r) => r.rows / (r.ms / 1000)));
      for (const [k, xs] of Object.entries(runs)) if (xs.some((r) => r.rows !== live)) throw new Error(`${k}: ${xs.map((r) => r.rows)} rows, not ${live}`);
      const copyRate = rate(runs.copy);
      const cpuText = (k: string) => `CPU s: server ${fmt(median(cpu[k].map((c) => c.server)), 1)}, client ${fmt(median(cpu[k].map((c) => c.client)), 1)}`;
      console.log(`\n  full exports (${fmt(live)} rows, ${EXPORT_RUNS} alternating rounds, medians; load average ${load()}):`);
      console.log(`    COPY (hand-written SELECT) TO STDOUT WITH CSV: ${fmt(copyRate)} rows/s (${cpuText('copy')})`);
      for (const k of ['csv', 'ndjson', 'json'] as const) {
        const what = k === 'json' ? 'scheduled json' : `HTTP ${k}`;
        console.log(
          `    ${what.padEnd(14)} ${fmt(rate(runs[k]))} rows/s = ${fmt(rate(runs[k]) / copyRate, 2)}x of COPY (target >= ${k === 'csv' ? '0.9' : '0.7'}x; ${cpuText(k)})`,
        );
        summary.push(
          `| ${scale} | full ${k} export${k === 'json' ? ' (scheduled run)' : ''}, rows/s | ${fmt(rate(runs[k]))} | ${fmt(copyRate)} (COPY) | ${fmt(rate(runs[k]) / copyRate, 2)}x | | | |`,
        );
      }
    }
  }
  const peak = rss('VmHWM');
  console.log(
    `\nserver peak RSS over the whole run (VmHWM, the server's memory settings as npm start sets them): ${fmt(peak, 1)} MB (target < 300 MB); now ${fmt(rss('VmRSS'), 1)} MB`,
  );
  console.log(
    '\n| scale | case | HTTP, cold (ms) | hand-written (ms) | ratio | HTTP, kept answers (ms) | page part engine / hand (ms) | count engine / hand (ms) |\n|---|---|---|---|---|---|---|---|',
  );
  for (const line of summary) console.log(line);
  console.log(
    `\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}; server peak RSS ${fmt(peak, 1)} MB`,
  );
} finally {
  await server.stop();
  await beforeServer?.stop();
  await client.end();
  await owner.end();
  await handle.close();
  await db.stop();
}
