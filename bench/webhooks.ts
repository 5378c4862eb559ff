// Webhooks benchmark. (1) Throughput: 10,000 events for one subscription, committed at once, delivered
// by the worker to a receiver on loopback (its own process), against a bare undici POST loop with the
// same concurrency to the same receiver. Target: >= 30% of the bare loop. (2) Latency: events committed
// one per transaction at 100/s for 10 s; time from each commit to the receiver. Target: median < 100 ms.
// Run: npm run bench -- webhooks   (BENCH_EVENTS, BENCH_ROUNDS, BENCH_CONCURRENCY override the defaults;
// BENCH_CPU_PROF=<dir> writes a V8 CPU profile of the server process there)
// Besides the rates it prints the CPU time each process spent per delivery (server, PostgreSQL, receiver,
// the benchmark itself), which says where a delivery's cost lies on this shared 2-core machine.
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
  startReceiver,
  waitForCount,
  webhookBenchServer,
} from './lib.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const RATE = 100;
const LATENCY_SECONDS = 10;
const DELIVERABLE = 'Skill.Module.BusinessObjects.Deliverable';

/** CPU microseconds per delivery, by role. */
const perDelivery = (cpu: Record<string, number>, deliveries: number): string =>
  Object.entries(cpu)
    .filter(([, v]) => v > 0.005)
    .map(([k, v]) => `${k} ${fmt((v / deliveries) * 1e6)} µs`)
    .join(', ');

/** The same request shape the worker sends, without a worker: a POST loop with CONCURRENCY in flight. */
async function bareLoop(url: string, tenantId: string): Promise<number> {
  await receiverState(url, 'reset');
  const agent = new Agent({ connections: CONCURRENCY });
  let next = 0;
  const started = now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
        const i = next++;
        const body = JSON.stringify({
          id: crypto.randomUUID(),
          action: 'ping',
          actionType: 'Ping',
          document: { type: DELIVERABLE, id: crypto.randomUUID(), url: null },
          businessObjectTypeName: null,
          detail: { i },
          tenantId,
          occurredOnUtc: new Date().toISOString(),
          subscriptionId: tenantId,
        });
        const res = await agent.request({ origin: url, path: '/hook', method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.body.text();
      }
    }),
  );
  const elapsed = now() - started;
  await agent.close();
  return (EVENTS / elapsed) * 1000;
}

/** EVENTS events committed in one transaction; deliveries/s from the commit to the last receipt. */
async function atriumRound(client: pg.Client, url: string, tenantId: string, round: number): Promise<number> {
  await receiverState(url, 'reset');
  await client.query('begin');
  await client.query(
    `insert into events (tenant_id, action_type, document_type, document_id, detail)
     select $1, 'Ping', $2, gen_random_uuid(), jsonb_build_object('i', $3::int + g) from generate_series(0, $4::int - 1) g`,
    [tenantId, DELIVERABLE, round * EVENTS, EVENTS],
  );
  await client.query('commit');
  const committed = now();
  const s = await waitForCount(url, EVENTS);
  const last = Math.max(...Object.values(s.times));
  return (EVENTS / (last - committed)) * 1000;
}

async function latency(pool: pg.Pool, url: string, tenantId: string): Promise<number[]> {
  await receiverState(url, 'reset');
  const load = pacedEvents(pool, tenantId, DELIVERABLE, { rate: RATE, first: 1_000_000, count: RATE * LATENCY_SECONDS });
  await load.done;
  const commits = await load.stop();
  const s = await waitForCount(url, commits.size);
  return [...commits].map(([i, t]) => s.times[String(i)] - t);
}

const db = await benchDatabase('atrium_bench_webhooks');
const receiver = await startReceiver();
try {
  const env = benchEnv(db.url, {
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ATRIUM_WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    ...(process.env.BENCH_CPU_PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF}` } : {}),
  });
  const { creds, server } = await webhookBenchServer(env, receiver.url, DELIVERABLE);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const pool = new pg.Pool({ connectionString: db.url, max: 8 });
  try {
    const roles: Record<number, string> = { [server.child.pid ?? -1]: 'server', [receiver.child.pid ?? -1]: 'receiver' };
    const loads = [os.loadavg()[0]];
    // Warm-up: connections, JIT, the worker's first claims.
    await bareLoop(receiver.url, creds.tenantId);
    await atriumRound(client, receiver.url, creds.tenantId, ROUNDS);
    const bare: number[] = [];
    const atrium: number[] = [];
    let bareCpu: Record<string, number> = {};
    let atriumCpu: Record<string, number> = {};
    const add = (sum: Record<string, number>, d: Record<string, number>) =>
      Object.fromEntries(Object.keys({ ...sum, ...d }).map((k) => [k, (sum[k] ?? 0) + (d[k] ?? 0)]));
    const busy = { bare: { busy: 0, total: 0 }, atrium: { busy: 0, total: 0 } };
    const addTicks = (sum: { busy: number; total: number }, a: { busy: number; total: number }, b: { busy: number; total: number }) => {
      sum.busy += b.busy - a.busy;
      sum.total += b.total - a.total;
    };
    for (let r = 0; r < ROUNDS; r++) {
      let before = cpuSeconds(roles);
      let ticks = machineTicks();
      bare.push(await bareLoop(receiver.url, creds.tenantId));
      let after = cpuSeconds(roles);
      addTicks(busy.bare, ticks, machineTicks());
      bareCpu = add(bareCpu, cpuDelta(before, after));
      before = after;
      ticks = machineTicks();
      atrium.push(await atriumRound(client, receiver.url, creds.tenantId, r));
      after = cpuSeconds(roles);
      addTicks(busy.atrium, ticks, machineTicks());
      atriumCpu = add(atriumCpu, cpuDelta(before, after));
      loads.push(os.loadavg()[0]);
      console.log(`round ${r + 1}: bare ${fmt(bare[r])}/s, atrium ${fmt(atrium[r])}/s, ratio ${((atrium[r] / bare[r]) * 100).toFixed(1)} %`);
    }
    const lat = await latency(pool, receiver.url, creds.tenantId);
    const b = median(bare);
    const a = median(atrium);
    const ratios = atrium.map((x, i) => (x / bare[i]) * 100);
    console.log(`\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}; ${EVENTS} events, concurrency ${CONCURRENCY}`);
    console.log(`load average (1 min) during the rounds: ${loads.map((l) => l.toFixed(2)).join(', ')}`);
    console.log(`bare undici POST loop: median ${fmt(b)}/s (rounds ${bare.map((x) => fmt(x)).join(', ')})`);
    console.log(`atrium commit -> receiver: median ${fmt(a)} deliveries/s (rounds ${atrium.map((x) => fmt(x)).join(', ')})`);
    // Each round pairs a bare loop with an Atrium round taken right after it, so the median of the rounds'
    // ratios is less at the mercy of the load other work puts on the machine than the ratio of the medians.
    console.log(
      `ratio: median of the rounds' ratios ${median(ratios).toFixed(1)} % (rounds ${ratios.map((x) => `${x.toFixed(1)} %`).join(', ')}); ratio of the medians ${((a / b) * 100).toFixed(1)} % (target >= 30 %)`,
    );
    const pctBusy = (t: { busy: number; total: number }) => `${((t.busy / Math.max(1, t.total)) * 100).toFixed(0)} %`;
    console.log(`CPU per delivery, bare loop: ${perDelivery(bareCpu, ROUNDS * EVENTS)}; machine busy ${pctBusy(busy.bare)}`);
    console.log(`CPU per delivery, atrium: ${perDelivery(atriumCpu, ROUNDS * EVENTS)}; machine busy ${pctBusy(busy.atrium)}`);
    console.log(
      `latency at ${RATE} events/s for ${LATENCY_SECONDS} s: p50 ${median(lat).toFixed(1)} ms, p95 ${pct(lat, 95).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms (target p50 < 100 ms)`,
    );
  } finally {
    await client.end();
    await pool.end();
    await server.stop();
  }
} finally {
  receiver.child.kill();
  await db.stop();
}
