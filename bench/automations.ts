// Automations benchmark: a 5-action automation (Start → Map → SetParameter → Rest → Result) behind a
// webhook subscription with IsAutomation, triggered by 1,000 events committed at once; end to end from
// the commit until every run is recorded (run row, invocation settled, the Rest call received by a
// receiver in its own process). Target: >= 100 runs/s. Baseline: the same work written by hand over pg
// and undici (read the events, map each, POST it with the same concurrency, write one result row per
// event in batches), checked to deliver the same bodies. Rounds alternate Atrium and the baseline.
// Containment (issue 26 item 8): the same rounds for each ATRIUM_AUTOMATION_ISOLATION in BENCH_ISOLATION
// (default "thread,none": each run in a worker thread, then in the server's own thread), each on a fresh
// server process and tenant, plus the latency of 100 sequential run-now calls and the server's RSS after.
// Run: npm run bench -- automations   (BENCH_EVENTS, BENCH_ROUNDS, BENCH_ISOLATION override the defaults)
import { readFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { benchDatabase, benchEnv, fmt, median, now, receiverState, runCli, startReceiver, startServerProcess, waitForCount } from './lib.ts';

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

async function atriumRound(pool: pg.Pool, receiverUrl: string, tenantId: string, automationId: string, first: number): Promise<number> {
  await receiverState(receiverUrl, 'reset');
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
  return EVENTS / ((now() - committed) / 1000);
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

const db = await benchDatabase('atrium_bench_automations');
const receiver = await startReceiver();
const pool = new pg.Pool({ connectionString: db.url, max: 4 });
const summary: string[] = [];
let first = 0;
try {
  await pool.query('create table bench_results (event_id uuid, status int)');
  for (const [m, mode] of MODES.entries()) {
    const env = benchEnv(db.url, { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ATRIUM_AUTOMATION_ISOLATION: mode });
    let server: Awaited<ReturnType<typeof startServerProcess>> | null = null;
    try {
      const creds = JSON.parse(await runCli(['tenants', 'create', '--name', `Bench Agency ${mode}`, '--json'], env));
      server = await startServerProcess(env);
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

      // Same bodies on both sides: one event through each, compared at the receiver's side by what it keeps.
      const check = await fetch(`${server.baseUrl}/api/v3/automations/${automationId}/run`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ input: { actionType: 'Ping', detail: { i: -1 } } }),
      });
      const checked = (await check.json()) as { status: string; actions: { name: string; input: { body: unknown } }[] };
      const sent = checked.actions.find((a) => a.name === 'Forward')?.input.body;
      if (checked.status !== 'Succeeded' || canonical(sent) !== canonical(mapped({ i: -1 }, 'Ping')))
        throw new Error(`the automation's request differs from the baseline's: ${JSON.stringify(sent)}`);

      const atrium: number[] = [];
      const bare: number[] = [];
      const loads: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        loads.push(os.loadavg()[0]);
        atrium.push(await atriumRound(pool, receiver.url, creds.tenantId, automationId, first));
        first += EVENTS;
        // The hand-written baseline once, beside the first mode.
        if (m === 0) {
          bare.push(await bareRound(pool, receiver.url, creds.tenantId, first));
          first += EVENTS;
        }
        console.log(
          `[${mode}] round ${round + 1}: Atrium ${fmt(atrium.at(-1) as number)} runs/s${m === 0 ? `, hand-written ${fmt(bare.at(-1) as number)} events/s` : ''}`,
        );
      }
      // One run at a time through run-now: what a single run costs from request to recorded answer.
      const latencies: number[] = [];
      for (let k = 0; k < 100; k++) {
        const t0 = now();
        const res = await fetch(`${server.baseUrl}/api/v3/automations/${automationId}/run`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ input: { actionType: 'Ping', detail: { i: -2 } } }),
        });
        await res.arrayBuffer();
        latencies.push(now() - t0);
      }
      latencies.sort((x, y) => x - y);
      const rss = rssMb(server.child.pid);
      const a = median(atrium);
      const line = `[${mode}] ${EVENTS} events per round, ${ROUNDS} rounds, median ${fmt(a)} runs/s end to end; run-now one at a time: median ${fmt(median(latencies), 1)} ms, p95 ${fmt(latencies[94], 1)} ms; server RSS after ${fmt(rss)} MB; load average ${fmt(median(loads), 2)}`;
      summary.push(line);
      if (m === 0) summary.push(`hand-written baseline: median ${fmt(median(bare))} events/s; ratio ${fmt(a / median(bare), 2)}`);
      const runs = await pool.query<{ n: number }>(`select count(*)::int as n from automation_runs where automation_id = $1 and status = 'Succeeded'`, [
        automationId,
      ]);
      summary.push(`[${mode}] recorded runs: ${runs.rows[0].n} (rounds × events + 101 run-now)`);
    } finally {
      await server?.stop();
    }
  }
  console.log(`\n${summary.join('\n')}`);
} finally {
  await pool.end();
  receiver.child.kill();
  await db.stop();
}
