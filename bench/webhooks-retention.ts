// Webhooks retention benchmark: how fast the retention sweep deletes while deliveries run. A backlog of
// BENCH_RETENTION_EVENTS events (default 100,000; half match the subscription and are delivered, so each
// leaves an invocation and an attempt, half match none) is aged past the retention. Then events are
// committed one per transaction at 100/s and delivered by the server's worker: for 10 s alone, then while
// the sweep (the maintenance job's; BENCH_RETENTION_BATCH events per statement, default as the job's) deletes the backlog. Prints rows deleted per
// second, and the commit -> receiver latency of the live deliveries without and during the sweep.
// Run: npm run bench -- webhooks-retention
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/platform/db/schema.ts';
import { RETENTION_BATCH, sweepExpired } from '../src/webhooks/retention.ts';
import { benchDatabase, benchEnv, fmt, median, now, pacedEvents, pct, receiverState, startReceiver, waitForCount, webhookBenchServer } from './lib.ts';

const EVENTS = Number(process.env.BENCH_RETENTION_EVENTS ?? 100_000);
const BATCH = Number(process.env.BENCH_RETENTION_BATCH ?? RETENTION_BATCH);
const RATE = 100;
const BASELINE_SECONDS = 10;
const DELIVERABLE = 'Skill.Module.BusinessObjects.Deliverable';
const RETENTION_MS = 30 * 86_400_000;

/** Commits one matching event per transaction at RATE/s from index `first` until stop() resolves; answers the commit times. */
const liveLoad = (pool: pg.Pool, tenantId: string, first: number) => pacedEvents(pool, tenantId, DELIVERABLE, { rate: RATE, first });

/** Waits for every live delivery; answers commit -> receiver latencies (ms). */
async function latencies(url: string, commits: Map<number, number>): Promise<number[]> {
  const s = await waitForCount(url, commits.size);
  return [...commits].map(([i, t]) => s.times[String(i)] - t);
}

const describe = (lat: number[]) =>
  `p50 ${median(lat).toFixed(1)} ms, p95 ${pct(lat, 95).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms, max ${Math.max(...lat).toFixed(1)} ms (${fmt(lat.length)} deliveries)`;

const db = await benchDatabase('atrium_bench_retention');
const receiver = await startReceiver();
try {
  const env = benchEnv(db.url, {
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // The server's own maintenance job must not sweep the backlog: the benchmark runs the sweep itself.
    ATRIUM_EVENT_RETENTION: '3650d',
  });
  const { creds, server } = await webhookBenchServer(env, receiver.url, DELIVERABLE);
  const pool = new pg.Pool({ connectionString: db.url, max: 8 });
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: db.url, max: 2 }) }) });
  try {
    // The backlog: delivered (every other event), then aged and vacuumed as rows a month old would be.
    let started = now();
    await pool.query(
      `insert into events (tenant_id, action_type, document_type, document_id, detail)
       select $1, case when g % 2 = 0 then 'Ping' else 'Other' end, $2, gen_random_uuid(), jsonb_build_object('i', 10000000 + g)
       from generate_series(0, $3::int - 1) g`,
      [creds.tenantId, DELIVERABLE, EVENTS],
    );
    const matching = Math.ceil(EVENTS / 2);
    await waitForCount(receiver.url, matching, 1_800_000);
    for (;;) {
      const { rows } = await pool.query(`select count(*)::int as n from webhook_invocations where completed_on_utc is null`);
      if (rows[0].n === 0) break;
      await sleep(200);
    }
    console.log(`backlog: ${fmt(EVENTS)} events, ${fmt(matching)} delivered, in ${((now() - started) / 1000).toFixed(1)} s`);
    await pool.query(`update events set occurred_on_utc = occurred_on_utc - interval '40 days'`);
    await pool.query(
      `update webhook_invocations set created_on_utc = created_on_utc - interval '40 days', completed_on_utc = completed_on_utc - interval '40 days'`,
    );
    await pool.query('vacuum analyze events, webhook_invocations, webhook_attempts');
    const attemptsBefore = (await pool.query(`select count(*)::int as n from webhook_attempts`)).rows[0].n as number;

    await receiverState(receiver.url, 'reset');
    const baselineLoad = liveLoad(pool, creds.tenantId, 0);
    await sleep(BASELINE_SECONDS * 1000);
    const baseline = await latencies(receiver.url, await baselineLoad.stop());

    await receiverState(receiver.url, 'reset');
    const load = liveLoad(pool, creds.tenantId, 1_000_000);
    const loads = [os.loadavg()[0]];
    started = now();
    const statementMs: number[] = [];
    let last = now();
    const swept = await sweepExpired(kysely, {
      retentionMs: RETENTION_MS,
      batchSize: BATCH,
      onBatch: () => {
        statementMs.push(now() - last);
        last = now();
      },
    });
    const seconds = (now() - started) / 1000;
    loads.push(os.loadavg()[0]);
    const during = await latencies(receiver.url, await load.stop());

    const attemptsAfter = (await pool.query(`select count(*)::int as n from webhook_attempts`)).rows[0].n as number;
    const rows = swept.events + swept.invocations + swept.attempts;
    console.log(
      `\nmachine: ${os.cpus().length} x ${os.cpus()[0]?.model}, Node ${process.version}; load average (1 min) ${loads.map((l) => l.toFixed(2)).join(' -> ')}`,
    );
    console.log(
      `sweep: ${fmt(swept.events)} events, ${fmt(swept.invocations)} invocations, ${fmt(swept.attempts)} attempts (attempt rows ${fmt(attemptsBefore)} -> ${fmt(attemptsAfter)}, the live deliveries' own) in ${seconds.toFixed(1)} s, ${swept.statements} statements, complete: ${swept.complete}`,
    );
    console.log(`statements of up to ${fmt(BATCH)} events: p50 ${median(statementMs).toFixed(0)} ms, max ${Math.max(...statementMs).toFixed(0)} ms`);
    console.log(`rows deleted per second: ${fmt(rows / seconds)} (events ${fmt(swept.events / seconds)}/s)`);
    console.log(`live deliveries at ${RATE}/s, commit -> receiver, without the sweep: ${describe(baseline)}`);
    console.log(`live deliveries at ${RATE}/s, commit -> receiver, during the sweep:  ${describe(during)}`);
  } finally {
    await kysely.destroy();
    await pool.end();
    await server.stop();
  }
} finally {
  receiver.child.kill();
  await db.stop();
}
