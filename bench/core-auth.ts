// Platform core benchmark: requests per second of an authenticated request (app headers,
// GET /api/usertypes/name, and GET /api/v3/whoami which is authentication alone) against GET /health/live on the same server; autocannon, 50
// connections, 10 s each, three alternating rounds, medians. Target: ratio >= 60%.
// Run: npm run bench -- core-auth   (or: npx node bench/core-auth.ts)
import os from 'node:os';
import autocannon from 'autocannon';
import pg from 'pg';
import { benchDatabase, fmt, median, runCli, startServerProcess } from './lib.ts';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const db = await benchDatabase();
try {
  const env = { DATABASE_URL: db.url, ATRIUM_SECRET_KEY: 'a'.repeat(64), ATRIUM_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'info' };
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Agency', '--json'], env));
  const server = await startServerProcess(env);
  const headers = { 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  const run = async (path: string, h: Record<string, string> = {}) => {
    const r = await autocannon({ url: `${server.baseUrl}${path}`, connections: 50, duration: DURATION, headers: h });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
  };
  // Warm-up: JIT, connection pool, the credential cache.
  await autocannon({ url: `${server.baseUrl}/api/usertypes/name?name=Temporary`, connections: 10, duration: 2, headers });
  const routes = [
    { label: 'GET /health/live (no auth)', path: '/health/live', headers: {} },
    { label: 'GET /api/v3/whoami (app headers, auth only)', path: '/api/v3/whoami', headers },
    { label: 'GET /api/usertypes/name (app headers + tenant transaction)', path: '/api/usertypes/name?name=Temporary', headers },
  ];
  const results = routes.map(() => [] as { rps: number; p50: number; p99: number }[]);
  for (let i = 0; i < ROUNDS; i++) for (const [j, r] of routes.entries()) results[j].push(await run(r.path, r.headers));
  await server.stop();
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${fmt(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`);
  const medians = results.map((rs) => median(rs.map((r) => r.rps)));
  for (const [j, r] of routes.entries()) {
    const rs = results[j];
    console.log(
      `${r.label.padEnd(62)} median ${fmt(medians[j])} req/s (p50 ${median(rs.map((x) => x.p50))} ms, p99 ${median(rs.map((x) => x.p99))} ms); rounds ${rs.map((x) => fmt(x.rps)).join(', ')}`,
    );
  }
  // The database's own ceiling for the lookup: the same statement through pg, 50 in flight, on
  // connections bound like the server's (RLS, request role), measured from this process.
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  pool.on('connect', (c) => {
    c.query(`select set_config('atrium.tenant_id', '${creds.tenantId}', false), set_config('role', 'atrium_app', false)`).catch(() => {});
  });
  const ceiling: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    let n = 0;
    const until = Date.now() + DURATION * 1000;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (Date.now() < until) {
          await pool.query('select id, name from user_types where lower(name) = $1', ['temporary']);
          n++;
        }
      }),
    );
    ceiling.push(n / ((performance.now() - started) / 1000));
  }
  await pool.end();
  console.log(
    `${'the lookup statement alone through pg (no HTTP)'.padEnd(62)} median ${fmt(median(ceiling))} statements/s; rounds ${ceiling.map((x) => fmt(x)).join(', ')}`,
  );
  console.log(`ratio whoami / live:    ${fmt((medians[1] / medians[0]) * 100, 1)}%`);
  console.log(`ratio usertypes / live: ${fmt((medians[2] / medians[0]) * 100, 1)}% (target >= 60%)`);
} finally {
  await db.stop();
}
