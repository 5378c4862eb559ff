// Platform core benchmark: requests per second of an authenticated request (app headers,
// GET /api/usertypes/name, and GET /api/v3/whoami which is authentication alone) against
// GET /health/live on the same server; autocannon, 50 connections, 10 s each, three alternating
// rounds, medians. Target: ratio >= 60%. Besides req/s it records the CPU each request cost the
// server process, PostgreSQL (all processes of its cluster) and the load generator (this process),
// which moves much less than req/s when other work shares the machine.
// Run: npm run bench -- core-auth   (or: npx node bench/core-auth.ts)
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { findUserTypeByName } from '../src/integration/service.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { benchDatabase, benchEnv, fmt, median, runCli, startServerProcess } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 50;

/** CPU time (user + system) of one process in µs, from /proc (Linux; clock ticks of 10 ms). */
const processCpuUs = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return 0; // the process ended between listing and reading
  }
};
/** CPU µs per process of the cluster: the postmaster and all its children (backends, background workers). */
const clusterCpu = (postmaster: number): Map<number, number> => {
  const cpu = new Map([[postmaster, processCpuUs(postmaster)]]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(postmaster)) cpu.set(Number(entry), processCpuUs(Number(entry)));
    } catch {}
  }
  return cpu;
};
/** CPU the cluster spent since `before`, over the processes alive now (a backend that ended meanwhile drops out). */
const clusterCpuSince = (postmaster: number, before: Map<number, number>): number => {
  let total = 0;
  for (const [pid, us] of clusterCpu(postmaster)) total += us - (before.get(pid) ?? 0);
  return total;
};
const selfCpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

interface Sample {
  rps: number;
  p50: number;
  p99: number;
  /** CPU µs per request: server process, PostgreSQL cluster, load generator. */
  server: number;
  postgres: number;
  client: number;
}

const db = await benchDatabase();
try {
  const env = benchEnv(db.url, { LOG_LEVEL: 'info' });
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--json'], env));
  const server = await startServerProcess(env);
  const owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  const backend = (await owner.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
  const postmaster = Number(readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  await owner.end();
  const serverPid = server.child.pid ?? 0;

  const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  const run = async (path: string, h: Record<string, string> = {}): Promise<Sample> => {
    const before = { server: processCpuUs(serverPid), postgres: clusterCpu(postmaster), client: selfCpuUs() };
    const r = await autocannon({ url: `${server.baseUrl}${path}`, connections: CONNECTIONS, duration: DURATION, headers: h });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    const n = r.requests.total;
    return {
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      server: (processCpuUs(serverPid) - before.server) / n,
      postgres: clusterCpuSince(postmaster, before.postgres) / n,
      client: (selfCpuUs() - before.client) / n,
    };
  };
  // Warm-up: JIT, connection pool, the credential cache.
  await autocannon({ url: `${server.baseUrl}/api/usertypes/name?name=Temporary`, connections: 10, duration: 2, headers });
  const routes = [
    { label: 'GET /health/live (no auth)', path: '/health/live', headers: {} },
    { label: 'GET /api/v3/whoami (app headers, auth only)', path: '/api/v3/whoami', headers },
    { label: 'GET /api/usertypes/name (app headers + tenant-bound read)', path: '/api/usertypes/name?name=Temporary', headers },
  ];
  const results = routes.map(() => [] as Sample[]);
  const loads: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    loads.push(os.loadavg()[0]);
    for (const [j, r] of routes.entries()) results[j].push(await run(r.path, r.headers));
  }
  await server.stop();
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);
  console.log(`1-minute load average at the start of each round: ${loads.map((l) => fmt(l, 2)).join(', ')}`);
  const medians = results.map((rs) => median(rs.map((r) => r.rps)));
  for (const [j, r] of routes.entries()) {
    const rs = results[j];
    const m = (k: keyof Sample) => fmt(median(rs.map((x) => x[k])));
    console.log(
      `${r.label.padEnd(62)} median ${fmt(medians[j])} req/s (p50 ${m('p50')} ms, p99 ${m('p99')} ms); rounds ${rs.map((x) => fmt(x.rps)).join(', ')}; ` +
        `CPU µs/request: server ${m('server')}, PostgreSQL ${m('postgres')}, autocannon ${m('client')}`,
    );
  }

  // The database's own ceiling for the lookup, from this process with no HTTP, 50 in flight: the
  // statement the route sends through a pg pool of 20 connections bound like the request
  // connections (RLS, request role), unnamed (what the route sent before readAsTenant used read
  // lanes) and as a named prepared statement; and readAsTenant itself (prepared statements on
  // pipelined read lanes, exactly what the route runs). Alternating rounds.
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  // The cluster stops right after this pool ends; a late FATAL on an idle client must not crash the report.
  pool.on('error', () => {});
  pool.on('connect', (c) => {
    c.query(`select set_config('atrium.tenant_id', '${creds.tenantId}', false), set_config('role', 'atrium_app', false)`).catch(() => {});
  });
  const handle = new DatabaseHandle(db.url);
  const text = 'select "id", "name" from "user_types" where lower(name) = $1';
  const ways: Record<string, () => Promise<unknown>> = {
    'unnamed, pool of 20': () => pool.query(text, ['temporary']),
    'prepared, pool of 20': () => pool.query({ name: 'usertype_by_name', text, values: ['temporary'] }),
    'readAsTenant (prepared, 2 pipelined read lanes)': () => handle.readAsTenant(creds.tenantId, (trx) => findUserTypeByName(trx, 'Temporary')),
  };
  const statementRound = async (way: () => Promise<unknown>) => {
    let n = 0;
    const until = Date.now() + DURATION * 1000;
    const started = performance.now();
    const before = { postgres: clusterCpu(postmaster), client: selfCpuUs() };
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < until) {
          await way();
          n++;
        }
      }),
    );
    return {
      rate: n / ((performance.now() - started) / 1000),
      postgres: clusterCpuSince(postmaster, before.postgres) / n,
      client: (selfCpuUs() - before.client) / n,
    };
  };
  const ceiling = Object.fromEntries(Object.keys(ways).map((k) => [k, [] as Awaited<ReturnType<typeof statementRound>>[]]));
  for (const way of Object.values(ways)) await way(); // connect and prepare
  for (let i = 0; i < ROUNDS; i++) for (const [k, way] of Object.entries(ways)) ceiling[k].push(await statementRound(way));
  await pool.end();
  await handle.close();
  for (const [kind, rs] of Object.entries(ceiling)) {
    console.log(
      `${`the lookup alone, ${kind}`.padEnd(62)} median ${fmt(median(rs.map((x) => x.rate)))} statements/s; rounds ${rs.map((x) => fmt(x.rate)).join(', ')}; ` +
        `CPU µs/statement: PostgreSQL ${fmt(median(rs.map((x) => x.postgres)))}, this process ${fmt(median(rs.map((x) => x.client)))}`,
    );
  }
  console.log(`ratio whoami / live:    ${fmt((medians[1] / medians[0]) * 100, 1)}%`);
  console.log(`ratio usertypes / live: ${fmt((medians[2] / medians[0]) * 100, 1)}% (target >= 60%)`);
} finally {
  await db.stop();
}
