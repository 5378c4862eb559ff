// Automations benchmark: a 5-action automation (Start → Map → SetParameter → Rest → Result) behind a
// webhook subscription with IsAutomation, triggered by 1,000 events committed at once; end to end from
// the commit until every run is recorded (run row, invocation settled, the Rest call received by a
// receiver in its own process). Target: >= 100 runs/s. Baseline: the same work written by hand over pg
// and undici (read the events, map each, POST it with the same concurrency, write one result row per
// event in batches), checked to deliver the same bodies. Rounds alternate Atrium and the baseline.
// Containment (issue 26 item 8): the same rounds for each ATRIUM_AUTOMATION_ISOLATION in BENCH_ISOLATION
// (default "thread,none": each run in a worker thread, then in the server's own thread), each on a fresh
// server process and tenant, plus the latency of 100 sequential run-now calls and the server's RSS after.
// Per round (issue 29): runs/s, p50/p95 per run from the events' commit to each run's finish, CPU ms per run
// of the server process (all its threads) and of PostgreSQL, the server's RSS; the server runs with npm
// start's memory flags (SERVER_MEMORY_ENV) on a fresh process per round, warmed by BENCH_WARMUP events.
// BENCH_COMPARE_ROOT=<another checkout> runs that tree's server in alternate rounds (before/after a change).
// Run: npm run bench -- automations   (BENCH_EVENTS, BENCH_ROUNDS, BENCH_ISOLATION, BENCH_WARMUP,
// BENCH_COMPARE_ROOT, BENCH_SERVER_NODE_OPTIONS override the defaults)
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import {
  benchDatabase,
  benchEnv,
  cpuDelta,
  cpuSeconds,
  fmt,
  median,
  now,
  pct,
  receiverState,
  runCli,
  SERVER_MEMORY_ENV,
  startReceiver,
  startServerProcess,
  waitForCount,
} from './lib.ts';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 32;
const MODES = (process.env.BENCH_ISOLATION ?? 'thread,none').split(',').filter(Boolean);
const rssMb = (pid: number | undefined): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const DELIVERABLE = 'Skill.Module.BusinessObjects.Deliverable';

/** What both sides compute from an event: the body the receiver gets. */
const mapped = (detail: { i: number }, actionType: string) => ({ detail: { i: detail.i }, action: actionType.toLowerCase(), source: 'atrium' });

/** JSON with keys sorted: the run log comes back from jsonb, which orders keys its own way. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );

/** In the platform's format (issue 29): actionType, Map `values`, SetParameter `parameterName`, paths without `$`. */
function automation(receiverUrl: string) {
  return {
    name: 'bench forward',
    logLevelType: 'Info',
    actions: [
      { actionType: 'Start', name: 'Start', next: 'Pick' },
      {
        actionType: 'Map',
        name: 'Pick',
        values: { i: "{{['#HttpRequest'].Body.detail.i}}", action: "{{['#HttpRequest'].Body.actionType | ToLowerCase}}" },
        next: 'Source',
      },
      { actionType: 'SetParameter', name: 'Source', parameterName: 'Source', value: 'atrium', next: 'Forward' },
      {
        actionType: 'Rest',
        name: 'Forward',
        method: 'POST',
        url: `${receiverUrl}/hook`,
        body: { detail: { i: "{{['Pick'].i}}" }, action: "{{['Pick'].action}}", source: "{{['Source']}}" },
        ensureSuccessStatusCode: true,
        next: 'Done',
      },
      { actionType: 'Result', name: 'Done', httpResponse: { statusCode: 200, body: { forwarded: "{{['Pick'].i}}" } } },
    ],
  };
}

/** EVENTS events in one transaction; the baseline's are Pong, which the subscription does not match. */
async function insertEvents(pool: pg.Pool, tenantId: string, first: number, actionType: string): Promise<number> {
  const detail = Array.from({ length: EVENTS }, (_, k) => JSON.stringify({ i: first + k }));
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query(
      `insert into events (tenant_id, action_type, document_type, document_id, detail)
       select $1, $4, $2, gen_random_uuid(), d::jsonb from unnest($3::text[]) d`,
      [tenantId, DELIVERABLE, detail, actionType],
    );
    await client.query('commit');
    return now();
  } finally {
    client.release();
  }
}

/** Per-run latencies (ms) from the events' commit to each run's finish, for the runs of events numbered from `first`. */
async function runLatencies(pool: pg.Pool, automationId: string, first: number, committed: number): Promise<number[]> {
  const { rows } = await pool.query<{ ms: number }>(
    `select extract(epoch from r.finished_on_utc) * 1000 - $3::float8 as ms
     from automation_runs r join webhook_invocations i on i.tenant_id = r.tenant_id and i.id = r.invocation_id
     where r.automation_id = $1 and (i.payload::jsonb -> 'detail' ->> 'i')::int between $2 and $2 + $4 - 1`,
    [automationId, first, committed, EVENTS],
  );
  return rows.map((r) => r.ms);
}

interface AtriumRound {
  runsPerSecond: number;
  p50: number;
  p95: number;
  /** CPU milliseconds per run: the server process (all its threads) and PostgreSQL (every backend). */
  serverCpuMs: number;
  postgresCpuMs: number;
}

async function atriumRound(pool: pg.Pool, receiverUrl: string, tenantId: string, automationId: string, first: number, serverPid: number): Promise<AtriumRound> {
  await receiverState(receiverUrl, 'reset');
  const roles = { [serverPid]: 'server' };
  const before = cpuSeconds(roles);
  const committed = await insertEvents(pool, tenantId, first, 'Ping');
  await waitForCount(receiverUrl, EVENTS);
  for (;;) {
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from automation_runs r join webhook_invocations i on i.tenant_id = r.tenant_id and i.id = r.invocation_id
       where r.automation_id = $1 and i.status = 'Succeeded' and (i.payload::jsonb -> 'detail' ->> 'i')::int >= $2`,
      [automationId, first],
    );
    if (rows[0].n >= EVENTS) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const elapsed = now() - committed;
  const used = cpuDelta(before, cpuSeconds(roles));
  const lat = await runLatencies(pool, automationId, first, committed);
  if (lat.length !== EVENTS) throw new Error(`${lat.length} runs recorded for ${EVENTS} events`);
  return {
    runsPerSecond: EVENTS / (elapsed / 1000),
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    serverCpuMs: ((used.server ?? 0) * 1000) / EVENTS,
    postgresCpuMs: ((used.postgres ?? 0) * 1000) / EVENTS,
  };
}

/** The hand-written version: the events read with pg, each mapped and POSTed, one result row per event. */
async function bareRound(pool: pg.Pool, receiverUrl: string, tenantId: string, first: number): Promise<number> {
  await receiverState(receiverUrl, 'reset');
  const committed = await insertEvents(pool, tenantId, first, 'Pong');
  const { rows } = await pool.query<{ id: string; action_type: string; detail: { i: number } }>(
    `select id, action_type, detail from events where tenant_id = $1 and action_type = 'Pong' and (detail ->> 'i')::int >= $2 and (detail ->> 'i')::int < $3`,
    [tenantId, first, first + EVENTS],
  );
  const agent = new Agent({ connections: CONCURRENCY });
  const results: { id: string; status: number }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < rows.length) {
        const e = rows[next++];
        const res = await undiciFetch(`${receiverUrl}/hook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(mapped(e.detail, 'Ping')),
          dispatcher: agent,
        });
        await res.arrayBuffer();
        results.push({ id: e.id, status: res.status });
      }
    }),
  );
  for (let k = 0; k < results.length; k += 500) {
    const slice = results.slice(k, k + 500);
    await pool.query('insert into bench_results (event_id, status) select * from unnest($1::uuid[], $2::int[])', [
      slice.map((r) => r.id),
      slice.map((r) => r.status),
    ]);
  }
  await agent.close();
  await waitForCount(receiverUrl, EVENTS);
  return EVENTS / ((now() - committed) / 1000);
}

/** The servers compared: this tree, and BENCH_COMPARE_ROOT's (another checkout, e.g. main) when set. */
const TREES: { label: string; root?: string }[] = [
  { label: 'this tree' },
  ...(process.env.BENCH_COMPARE_ROOT ? [{ label: `compare (${process.env.BENCH_COMPARE_ROOT})`, root: process.env.BENCH_COMPARE_ROOT }] : []),
];
/** Events run through a fresh server before each measured round: its threads started and its code warm. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 200);

const db = await benchDatabase('atrium_bench_automations');
const receiver = await startReceiver();
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
// An idle connection the cluster ends (at its stop) is no result of the bench: noted, not fatal.
pool.on('error', (err) => console.warn(`idle PostgreSQL connection: ${err.message}`));
const table: string[] = [
  '| mode | server | round | load | runs/s | p50 ms | p95 ms | server CPU ms/run | PostgreSQL CPU ms/run | RSS MB |',
  '|---|---|---|---|---|---|---|---|---|---|',
];
const summary: string[] = [];
let first = 0;
try {
  await pool.query('create table bench_results (event_id uuid, status int)');
  const bare: number[] = [];
  for (const [m, mode] of MODES.entries()) {
    // The server as `npm start` runs it: its heap flags and allocator settings (decision 0035).
    const env = benchEnv(db.url, {
      ...SERVER_MEMORY_ENV,
      // BENCH_SERVER_NODE_OPTIONS adds to them, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the server.
      NODE_OPTIONS: `${SERVER_MEMORY_ENV.NODE_OPTIONS} ${process.env.BENCH_SERVER_NODE_OPTIONS ?? ''}`.trim(),
      ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ATRIUM_AUTOMATION_ISOLATION: mode,
    });
    // One tenant, automation and subscription per tree, made through the first tree's server.
    const setups: { creds: Record<string, string>; headers: Record<string, string>; automationId: string }[] = [];
    for (const tree of TREES) {
      const creds = JSON.parse(await runCli(['tenants', 'create', '--name', `Bench Agency ${mode} ${tree.label}`, '--json'], env));
      const server = await startServerProcess(env, tree.root);
      try {
        const headers = { 'content-type': 'application/json', 'x-apptenant': creds.tenantId, 'x-appid': creds.appId, 'x-appsecret': creds.appSecret };
        const created = await fetch(`${server.baseUrl}/api/v3/automations`, { method: 'POST', headers, body: JSON.stringify(automation(receiver.url)) });
        if (created.status !== 201) throw new Error(`automation: ${created.status} ${await created.text()}`);
        const automationId = ((await created.json()) as { id: string }).id;
        const sub = await fetch(`${server.baseUrl}/api/webhook-subscriptions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ Name: 'bench', ActionType: 'Ping', DocumentType: DELIVERABLE, IsAutomation: true, AutomationId: automationId, Active: true }),
        });
        if (sub.status !== 201) throw new Error(`subscription: ${sub.status} ${await sub.text()}`);
        // Same bodies on both sides: one run, its Rest request compared with the baseline's body.
        const check = await fetch(`${server.baseUrl}/api/v3/automations/${automationId}/run`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ input: { actionType: 'Ping', detail: { i: -1 } } }),
        });
        const checked = (await check.json()) as { status: string; actions: { name: string; input: { body: unknown } }[] };
        const sent = checked.actions.find((a) => a.name === 'Forward')?.input.body;
        if (checked.status !== 'Succeeded' || canonical(sent) !== canonical(mapped({ i: -1 }, 'Ping')))
          throw new Error(`the automation's request differs from the baseline's: ${JSON.stringify(sent)}`);
        setups.push({ creds, headers, automationId });
      } finally {
        await server.stop();
      }
    }

    const results = TREES.map(() => [] as AtriumRound[]);
    const latencies = TREES.map(() => [] as number[]);
    const rss = TREES.map(() => 0);
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating: each tree's server in turn, alone (a worker claims every tenant's invocations).
      for (const [t, tree] of TREES.entries()) {
        const { creds, headers, automationId } = setups[t];
        const server = await startServerProcess(env, tree.root);
        try {
          const pid = server.child.pid as number;
          if (WARMUP > 0) {
            await receiverState(receiver.url, 'reset');
            const warm = first;
            first += WARMUP;
            await pool.query(
              `insert into events (tenant_id, action_type, document_type, document_id, detail)
               select $1, 'Ping', $2, gen_random_uuid(), jsonb_build_object('i', k) from generate_series($3::int, $4::int) k`,
              [creds.tenantId, DELIVERABLE, warm, warm + WARMUP - 1],
            );
            await waitForCount(receiver.url, WARMUP);
          }
          const load = os.loadavg()[0];
          const r = await atriumRound(pool, receiver.url, creds.tenantId, automationId, first, pid);
          first += EVENTS;
          results[t].push(r);
          rss[t] = Math.max(rss[t], rssMb(pid));
          table.push(
            `| ${mode} | ${tree.label} | ${round + 1} | ${fmt(load, 1)} | ${fmt(r.runsPerSecond)} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${fmt(r.serverCpuMs, 2)} | ${fmt(r.postgresCpuMs, 2)} | ${fmt(rssMb(pid))} |`,
          );
          console.log(table.at(-1));
          // One run at a time through run-now (last round): what a single run costs from request to recorded answer.
          if (round === ROUNDS - 1)
            for (let k = 0; k < 100; k++) {
              const t0 = now();
              const res = await fetch(`${server.baseUrl}/api/v3/automations/${automationId}/run`, {
                method: 'POST',
                headers,
                body: JSON.stringify({ input: { actionType: 'Ping', detail: { i: -2 } } }),
              });
              await res.arrayBuffer();
              latencies[t].push(now() - t0);
            }
          rss[t] = Math.max(rss[t], rssMb(pid));
        } finally {
          await server.stop();
        }
      }
      // The hand-written baseline, beside the first mode.
      if (m === 0) {
        bare.push(await bareRound(pool, receiver.url, setups[0].creds.tenantId, first));
        first += EVENTS;
        console.log(`hand-written round ${round + 1}: ${fmt(bare.at(-1) as number)} events/s`);
      }
    }
    for (const [t, tree] of TREES.entries()) {
      const rs = results[t];
      const med = (f: (r: AtriumRound) => number) => median(rs.map(f));
      summary.push(
        `[${mode}, ${tree.label}] ${EVENTS} events × ${ROUNDS} rounds: median ${fmt(med((r) => r.runsPerSecond))} runs/s end to end, per run p50 ${fmt(med((r) => r.p50))} ms, p95 ${fmt(med((r) => r.p95))} ms (commit to run finished); CPU per run: server ${fmt(
          med((r) => r.serverCpuMs),
          2,
        )} ms, PostgreSQL ${fmt(
          med((r) => r.postgresCpuMs),
          2,
        )} ms; run-now one at a time: median ${fmt(median(latencies[t]), 1)} ms, p95 ${fmt(pct(latencies[t], 95), 1)} ms; server RSS max ${fmt(rss[t])} MB`,
      );
      const runs = await pool.query<{ n: number }>(`select count(*)::int as n from automation_runs where automation_id = $1 and status = 'Succeeded'`, [
        setups[t].automationId,
      ]);
      summary.push(`[${mode}, ${tree.label}] recorded runs: ${runs.rows[0].n} (rounds × (events + warm-up) + 101 run-now)`);
    }
  }
  if (bare.length) summary.push(`hand-written baseline: median ${fmt(median(bare))} events/s`);
  console.log(
    `\n${table.join('\n')}\n\n${summary.join('\n')}\nload average now ${os
      .loadavg()
      .map((l) => fmt(l, 2))
      .join(' ')}`,
  );
} finally {
  await pool.end();
  receiver.child.kill();
  await db.stop();
}
