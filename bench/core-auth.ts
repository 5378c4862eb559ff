// Platform core benchmark: requests per second of an authenticated request (app headers,
// GET /api/usertypes/name, and GET /api/v3/whoami which is authentication alone) against
// GET /health/live on the same server; autocannon, 50 connections, 10 s each, three alternating
// rounds, medians. Targets (issue 32): whoami and usertypes each >= 85% of /health/live. The server
// runs as `npm start` runs it (its memory flags and allocator settings) at LOG_LEVEL=warn, with the
// rate limit on but far above what the run sends (ATRIUM_RATE_LIMIT_PER_MINUTE=10,000,000), so its
// bookkeeping is paid. Besides req/s it records the CPU each request cost the server process,
// PostgreSQL (all processes of its cluster) and the load generator (this process), which moves much
// less than req/s when other work shares the machine.
// BENCH_BASELINE_TREE=<checkout>: a second server from that tree (e.g. a worktree of main) on the same
// database, its routes measured in the same rounds, alternating with this tree's, and reported beside them.
// BENCH_CEILING=0 skips the lookup-without-HTTP part.
// Run: npm run bench -- core-auth   (or: npx node bench/core-auth.ts)
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { findUserTypeByName } from '../src/integration/service.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { benchDatabase, benchEnv, fmt, median, runCli, SERVER_MEMORY_ENV, startServerProcess } from './lib.ts';

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

const BASELINE_TREE = process.env.BENCH_BASELINE_TREE;

const db = await benchDatabase();
try {
  const env = benchEnv(db.url, { ...SERVER_MEMORY_ENV, LOG_LEVEL: 'warn', ATRIUM_RATE_LIMIT_PER_MINUTE: '10000000' });
  // The baseline starts first, on the empty database: an older tree refuses a database that holds migrations it
  // does not know, and this tree's CLI and server apply theirs at start (a running server does not check again).
  const baseline = BASELINE_TREE ? await startServerProcess(env, BASELINE_TREE) : null;
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--json'], env));
  const servers = [{ name: 'this tree', server: await startServerProcess(env) }];
  if (baseline) servers.push({ name: `baseline (${BASELINE_TREE})`, server: baseline });
  const owner = new pg.Client({ connectionString: db.url });
  await owner.connect();
  const backend = (await owner.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
  const postmaster = Number(readFileSync(`/proc/${backend}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
  await owner.end();

  const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  const run = async (baseUrl: string, serverPid: number, path: string, h: Record<string, string>, expected: string): Promise<Sample> => {
    // Identical answers on both sides: the body each route gives this tenant (request ids aside).
    const body = await (await fetch(`${baseUrl}${path}`, { headers: h })).text();
    if (body !== expected) throw new Error(`${baseUrl}${path} answered ${body}, expected ${expected}`);
    const before = { server: processCpuUs(serverPid), postgres: clusterCpu(postmaster), client: selfCpuUs() };
    const r = await autocannon({ url: `${baseUrl}${path}`, connections: CONNECTIONS, duration: DURATION, headers: h });
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
  const routes = [
    { label: 'GET /health/live (no auth)', path: '/health/live', headers: {} },
    { label: 'GET /api/v3/whoami (app headers, auth only)', path: '/api/v3/whoami', headers },
    { label: 'GET /api/usertypes/name (app headers + tenant-bound read)', path: '/api/usertypes/name?name=Temporary', headers },
  ];
  const expected = await Promise.all(routes.map(async (r) => (await fetch(`${servers[0].server.baseUrl}${r.path}`, { headers: r.headers })).text()));
  // Warm-up: JIT, connection pool, the credential cache.
  for (const { server } of servers) {
    for (const r of routes) await autocannon({ url: `${server.baseUrl}${r.path}`, connections: 10, duration: 2, headers: r.headers });
  }
  const results = servers.map(() => routes.map(() => [] as Sample[]));
  const loads: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    loads.push(os.loadavg()[0]);
    // Alternate which side goes first, so neither always runs on the machine the other just warmed.
    const order = i % 2 ? [...servers.keys()].reverse() : [...servers.keys()];
    for (const k of order) {
      const { server } = servers[k];
      for (const [j, r] of routes.entries()) results[k][j].push(await run(server.baseUrl, server.child.pid ?? 0, r.path, r.headers, expected[j]));
    }
  }
  for (const { server } of servers) await server.stop();
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);
  console.log(`1-minute load average at the start of each round: ${loads.map((l) => fmt(l, 2)).join(', ')}`);
  const rows: string[] = [];
  for (const [k, { name }] of servers.entries()) {
    const medians = results[k].map((rs) => median(rs.map((r) => r.rps)));
    console.log(`\n${name}:`);
    for (const [j, r] of routes.entries()) {
      const rs = results[k][j];
      const m = (key: keyof Sample) => fmt(median(rs.map((x) => x[key])));
      console.log(
        `${r.label.padEnd(62)} median ${fmt(medians[j])} req/s (p50 ${m('p50')} ms, p99 ${m('p99')} ms); rounds ${rs.map((x) => fmt(x.rps)).join(', ')}; ` +
          `CPU µs/request: server ${m('server')}, PostgreSQL ${m('postgres')}, autocannon ${m('client')}`,
      );
    }
    console.log(`ratio whoami / live:    ${fmt((medians[1] / medians[0]) * 100, 1)}% (target >= 85%)`);
    console.log(`ratio usertypes / live: ${fmt((medians[2] / medians[0]) * 100, 1)}% (target >= 85%)`);
    const cpu = (j: number, key: keyof Sample) => fmt(median(results[k][j].map((x) => x[key])));
    rows.push(
      `| ${name} | ${routes.map((_, j) => `${fmt(medians[j])} / ${cpu(j, 'server')} / ${cpu(j, 'postgres')}`).join(' | ')} | ` +
        `${fmt((medians[1] / medians[0]) * 100, 1)} % | ${fmt((medians[2] / medians[0]) * 100, 1)} % |`,
    );
  }
  console.log('\n| median req/s / CPU µs per request, server / PostgreSQL | /health/live | whoami | usertypes/name | whoami / live | usertypes / live |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);

  if (process.env.BENCH_CEILING !== '0') {
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
  }
} finally {
  await db.stop();
}
