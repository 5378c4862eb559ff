// The aggregate request of the Data Extraction API (issue 36, decision 0054) against hand-written GROUP BY
// over DE-TimeSheets' tables: median latency over HTTP, the engine's own statement sent through pg from this
// process (the same SQL the server runs, without HTTP), and the hand-written statement a DBA would write.
// Target: HTTP / hand-written <= 1.5. The load average is printed beside each figure (a shared machine).
// Run: npm run bench -- extraction-aggregate   (BENCH_SCALE=50, BENCH_RUNS=15)
import os from 'node:os';
import pg from 'pg';
import { type AggregateBody, aggregateStatement } from '../src/extraction/aggregate.ts';
import { resolveQuery } from '../src/extraction/query/resolve.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { benchDatabase, benchEnv, fmt, median, runCli, startServerProcess } from './lib.ts';

const SCALE = process.env.BENCH_SCALE ?? '50';
const RUNS = Number(process.env.BENCH_RUNS ?? 15);

const JOINS = `
  from timesheets t
  left join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
  left join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
  left join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
  where t.tenant_id = $1 and t.deleted_on is null`;
const HOURS = 'round(t.duration_minutes / 60.0, 6)';

const db = await benchDatabase('atrium_bench_aggregate');
try {
  const env = benchEnv(db.url);
  const t0 = Date.now();
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--demo', '--scale', SCALE, '--json'], env));
  console.log(`demo data at scale ${SCALE}: ${fmt((Date.now() - t0) / 1000, 1)} s`);
  const owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  await owner.query('vacuum analyze');
  const { rows: meta } = await owner.query(
    `select count(*)::int as n, (percentile_disc(0.5) within group (order by date))::text as mid from timesheets where tenant_id = $1 and deleted_on is null`,
    [creds.tenantId],
  );
  console.log(`timesheets: ${fmt(meta[0].n)}; runs per figure: ${RUNS}; cores: ${os.cpus().length}`);
  const server = await startServerProcess(env);
  const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret, 'content-type': 'application/json' };
  const handle = new DatabaseHandle(db.url);
  const principal: Principal = { tenantId: creds.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' };

  const cases: { name: string; body: AggregateBody; sql: string; params: unknown[] }[] = [
    {
      name: 'sum(Hours) by Client',
      body: { groupBy: [{ field: 'Client' }], aggregate: { function: 'sum', field: 'Hours' }, take: 10_000 },
      sql: `select cl.name, sum(${HOURS}), count(*) ${JOINS} group by cl.name`,
      params: [],
    },
    {
      name: 'sum(Hours) by Day (month)',
      body: { groupBy: [{ field: 'Day', interval: 'month' }], aggregate: { function: 'sum', field: 'Hours' }, take: 10_000 },
      sql: `select date_trunc('month', t.date)::date, sum(${HOURS}), count(*) from timesheets t where t.tenant_id = $1 and t.deleted_on is null group by 1`,
      params: [],
    },
    {
      name: 'avg(Hours) by Client, Day (month), Day >= median',
      body: {
        queryBuilder: { filters: ['Day', '>=', meta[0].mid] },
        groupBy: [{ field: 'Client' }, { field: 'Day', interval: 'month' }],
        aggregate: { function: 'avg', field: 'Hours' },
        take: 10_000,
      },
      sql: `select cl.name, date_trunc('month', t.date)::date, avg(${HOURS}), count(*) ${JOINS} and t.date >= $2 group by 1, 2`,
      params: [meta[0].mid],
    },
  ];
  const url = `${server.baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/aggregate`;
  /** The three ways alternate within each run, so the shared machine's load weighs on them alike. */
  const alternate = async (ways: (() => Promise<unknown>)[]) => {
    for (const w of ways) await w(); // warm
    const ms: number[][] = ways.map(() => []);
    const loads: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      for (const [j, w] of ways.entries()) {
        const s = performance.now();
        await w();
        ms[j].push(performance.now() - s);
      }
      loads.push(os.loadavg()[0]);
    }
    return { medians: ms.map(median), load: median(loads).toFixed(2) };
  };
  for (const c of cases) {
    const engine = await handle.withTenant(creds.tenantId, async (trx) =>
      aggregateStatement(await resolveQuery(trx, principal, 'DE-TimeSheets'), c.body).statement.compile(trx),
    );
    const http = async () => {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(c.body) });
      if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
      await res.json();
    };
    const sent = () => handle.withTenant(creds.tenantId, (trx) => trx.executeQuery(engine));
    const hand = () => owner.query(c.sql, [creds.tenantId, ...c.params]);
    const {
      medians: [h, e, w],
      load,
    } = await alternate([http, sent, hand]);
    console.log(
      `${c.name}: HTTP ${fmt(h, 1)} ms · engine SQL via pg ${fmt(e, 1)} ms · hand-written ${fmt(w, 1)} ms · HTTP / hand ${fmt(h / w, 2)}×, engine SQL / hand ${fmt(e / w, 2)}× (median load ${load})`,
    );
  }
  await handle.close?.();
  await owner.end();
  await server.stop();
} finally {
  await db.stop();
}
