// Scale-out benchmark (issue #19). Three parts, chosen with BENCH_PARTS (default all):
//  latency  commit -> receiver at 100 events/s, one event per transaction, with the NOTIFY trigger on and
//           off (the dispatcher then wakes only on its 50 ms poll), alternating rounds of BENCH_SECONDS.
//  workers  webhook deliveries/s with 1 worker vs 2 (a second ATRIUM_ROLE=worker process), BENCH_EVENTS
//           events committed at once per round, alternating.
//  api      Data Extraction pages (DE-Jobs, take 100) with 1 API process vs 2 behind a round-robin client,
//           BENCH_CONCURRENCY requests in flight for BENCH_SECONDS per round, alternating; CPU per request.
// Run: npm run bench -- scale-out
import os from 'node:os';
import pg from 'pg';
import { Agent } from 'undici';
import {
  benchDatabase,
  benchEnv,
  cpuDelta,
  cpuSeconds,
  fmt,
  machineTicks,
  median,
  now,
  pacedEvents,
  pct,
  receiverState,
  runCli,
  startReceiver,
  startServerProcess,
  waitForCount,
  webhookBenchServer,
} from './lib.ts';

const PARTS = (process.env.BENCH_PARTS ?? 'latency,workers,api').split(',');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const RATE = 100;
const DELIVERABLE = 'Skill.Module.BusinessObjects.Deliverable';

const loads: number[] = [];
const say = (line: string) => console.log(line);
say(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}; rounds ${ROUNDS}`);

const db = await benchDatabase('atrium_bench_scaleout');
const receiver = await startReceiver();
const env = benchEnv(db.url, { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
try {
  const { creds, server } = await webhookBenchServer(env, receiver.url, DELIVERABLE);
  const pool = new pg.Pool({ connectionString: db.url, max: 8 });
  try {
    if (PARTS.includes('latency')) await latencyPart(pool, creds.tenantId);
    if (PARTS.includes('workers')) await workersPart(pool, creds.tenantId);
  } finally {
    await pool.end();
    await server.stop();
  }
  if (PARTS.includes('api')) await apiPart();
  say(`load average (1 min) through the run: ${loads.map((l) => l.toFixed(2)).join(', ')}`);
} finally {
  receiver.child.kill();
  await db.stop();
}

async function latencyRound(pool: pg.Pool, tenantId: string, first: number): Promise<number[]> {
  await receiverState(receiver.url, 'reset');
  const load = pacedEvents(pool, tenantId, DELIVERABLE, { rate: RATE, first, count: RATE * SECONDS });
  await load.done;
  const commits = await load.stop();
  const s = await waitForCount(receiver.url, commits.size);
  loads.push(os.loadavg()[0]);
  return [...commits].map(([i, t]) => s.times[String(i)] - t);
}

async function latencyPart(pool: pg.Pool, tenantId: string): Promise<void> {
  const on: number[] = [];
  const off: number[] = [];
  // Warm-up: connections, JIT.
  await latencyRound(pool, tenantId, 0);
  for (let r = 0; r < ROUNDS; r++) {
    await pool.query('alter table events enable trigger events_notify');
    const a = await latencyRound(pool, tenantId, (2 * r + 1) * 100_000);
    await pool.query('alter table events disable trigger events_notify');
    const b = await latencyRound(pool, tenantId, (2 * r + 2) * 100_000);
    on.push(...a);
    off.push(...b);
    say(`latency round ${r + 1}: NOTIFY p50 ${median(a).toFixed(1)} ms, poll only p50 ${median(b).toFixed(1)} ms`);
  }
  await pool.query('alter table events enable trigger events_notify');
  const line = (xs: number[]) => `p50 ${median(xs).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms (${xs.length} events)`;
  say(`commit -> receiver at ${RATE} events/s, NOTIFY wake-ups: ${line(on)} (target p50 < 25 ms)`);
  say(`commit -> receiver at ${RATE} events/s, 50 ms poll only:  ${line(off)}`);
}

async function deliveryRound(pool: pg.Pool, tenantId: string, round: number): Promise<number> {
  await receiverState(receiver.url, 'reset');
  await pool.query(
    `insert into events (tenant_id, action_type, document_type, document_id, detail)
     select $1, 'Ping', $2, gen_random_uuid(), jsonb_build_object('i', $3::int + g) from generate_series(0, $4::int - 1) g`,
    [tenantId, DELIVERABLE, 10_000_000 + round * EVENTS, EVENTS],
  );
  const committed = now();
  const s = await waitForCount(receiver.url, EVENTS);
  loads.push(os.loadavg()[0]);
  return (EVENTS / (Math.max(...Object.values(s.times)) - committed)) * 1000;
}

async function workersPart(pool: pg.Pool, tenantId: string): Promise<void> {
  const one: number[] = [];
  const two: number[] = [];
  await deliveryRound(pool, tenantId, 0);
  for (let r = 0; r < ROUNDS; r++) {
    one.push(await deliveryRound(pool, tenantId, 2 * r + 1));
    const second = await startServerProcess({ ...env, ATRIUM_ROLE: 'worker' });
    try {
      two.push(await deliveryRound(pool, tenantId, 2 * r + 2));
    } finally {
      await second.stop();
    }
    say(`workers round ${r + 1}: 1 worker ${fmt(one[r])}/s, 2 workers ${fmt(two[r])}/s`);
  }
  say(
    `webhook deliveries/s, ${EVENTS} events at once: 1 worker median ${fmt(median(one))}/s, 2 workers median ${fmt(median(two))}/s (ratio ${(median(two) / median(one)).toFixed(2)})`,
  );
}

/** CONCURRENCY requests in flight for SECONDS, spread over the servers in turn as a round-robin balancer would. */
async function pageLoad(bases: string[], headers: Record<string, string>): Promise<{ perSecond: number; count: number; latencies: number[] }> {
  const agent = new Agent({ connections: CONCURRENCY });
  const body = JSON.stringify({ queryBuilder: { skip: 0, take: 100 } });
  const latencies: number[] = [];
  let next = 0;
  const started = now();
  const until = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (now() < until) {
        const base = bases[next++ % bases.length];
        const t = now();
        const res = await agent.request({ origin: base, path: '/api/v3/analytics/named-query/DE-Jobs/dynamic-execute', method: 'POST', headers, body });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`page: ${res.statusCode}`);
        latencies.push(now() - t);
      }
    }),
  );
  const elapsed = now() - started;
  await agent.close();
  return { perSecond: (latencies.length / elapsed) * 1000, count: latencies.length, latencies };
}

async function apiPart(): Promise<void> {
  const creds = JSON.parse(await runCli(['tenants', 'create', '--name', 'Bench Pages', '--demo', '--scale', '1', '--json'], env));
  const headers = { 'content-type': 'application/json', 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
  const apiEnv = { ...env, ATRIUM_ROLE: 'api' };
  const a = await startServerProcess(apiEnv);
  const b = await startServerProcess(apiEnv);
  const roles: Record<number, string> = { [a.child.pid ?? -1]: 'api', [b.child.pid ?? -1]: 'api' };
  try {
    await pageLoad([a.baseUrl, b.baseUrl], headers);
    const results: Record<string, { rates: number[]; cpu: Record<string, number>; count: number; busy: number; total: number; lat: number[] }> = {
      '1 process': { rates: [], cpu: {}, count: 0, busy: 0, total: 0, lat: [] },
      '2 processes': { rates: [], cpu: {}, count: 0, busy: 0, total: 0, lat: [] },
    };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [label, bases] of [
        ['1 process', [a.baseUrl]],
        ['2 processes', [a.baseUrl, b.baseUrl]],
      ] as const) {
        const before = cpuSeconds(roles);
        const ticks = machineTicks();
        const out = await pageLoad([...bases], headers);
        const after = machineTicks();
        const d = cpuDelta(before, cpuSeconds(roles));
        const acc = results[label];
        acc.rates.push(out.perSecond);
        acc.count += out.count;
        acc.lat.push(...out.latencies);
        acc.busy += after.busy - ticks.busy;
        acc.total += after.total - ticks.total;
        for (const [k, v] of Object.entries(d)) acc.cpu[k] = (acc.cpu[k] ?? 0) + v;
        loads.push(os.loadavg()[0]);
      }
      say(`api round ${r + 1}: 1 process ${fmt(results['1 process'].rates[r])}/s, 2 processes ${fmt(results['2 processes'].rates[r])}/s`);
    }
    for (const [label, acc] of Object.entries(results)) {
      const cpu = Object.entries(acc.cpu)
        .filter(([, v]) => v > 0.005)
        .map(([k, v]) => `${k} ${fmt((v / acc.count) * 1e6)} µs`)
        .join(', ');
      say(
        `DE-Jobs pages (take 100), ${CONCURRENCY} in flight, ${label}: median ${fmt(median(acc.rates))}/s, p50 ${median(acc.lat).toFixed(1)} ms, p95 ${pct(acc.lat, 95).toFixed(1)} ms; CPU per request: ${cpu}; machine busy ${((acc.busy / Math.max(1, acc.total)) * 100).toFixed(0)} %`,
      );
    }
  } finally {
    await a.stop();
    await b.stop();
  }
}
